"""The routing stage of the decode MoE block through netra's tactic lists (netra/c/moe_routing.h),
for torch tensors: act_quant, the router (slots 0..7 of the route layout) and the shared-expert gate
(slot 8). Route layout: ids int32 [M, 9], weights float32 [M, 9], slot s of token t at [t, s].

    r = netra.MoeRouting()                      # before graph capture
    ids, weights = r.route(hidden, router_w, shared_gate_w)
    q, scales = r.act_quant(gate_up)            # [9M, 1024] bf16 -> float8_e4m3fn [9M, 512], fp32 [9M, 4]

netra runs on torch's current stream and is safe inside torch.cuda.CUDAGraph capture once the
handle exists. Calls netra cannot express or that no tactic admits run the torch composition of the
same math instead (unless fallback=False), which is NOT bitwise equal to netra's contracts (torch's
exp differs, and torch divides 0 / 0 for an all-zero group where netra keeps signed zeros). A call
inside a strict tactic's promoted domain that does not match its ABI raises NetraError.
"""
import ctypes

import torch
import torch.nn.functional as F

from netra._handle import NativeHandle
from netra._library import NetraError, Status, check, declared_library

_p, _i64, _status = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
_lib = declared_library({
    "netra_moe_routing_create": ([ctypes.POINTER(_p)], _status),
    "netra_moe_routing_destroy": ([_p], None),
    "netra_moe_act_quant": ([_p, _p, _i64, _i64, _i64, _p, _p, _p], _status),
    "netra_moe_router": ([_p, _p, _i64, _i64, _i64, _p, _i64, _p, _p, _p], _status),
    "netra_moe_shared_gate": ([_p, _p, _i64, _i64, _i64, _p, _p, _p, _p], _status),
})


# ---- the torch compositions (fallbacks; not bitwise equal to the contracts) ----------------------

def act_quant_torch(x):
    g, u = x.float().split(512, dim=1)
    y = (F.silu(g) * u).to(torch.bfloat16).float().view(-1, 4, 128)
    scale = y.abs().amax(dim=-1) / 448.0
    q = (y / scale.unsqueeze(-1)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.view(-1, 512), scale


def router_torch(hidden, gate_weight, ids, weights):
    p = torch.softmax(hidden.float() @ gate_weight.float().t(), dim=-1)
    top_p, top_i = torch.topk(p, 8, dim=-1)
    ids[:, :8] = top_i.to(torch.int32)
    weights[:, :8] = top_p / top_p.sum(dim=-1, keepdim=True)


def shared_gate_torch(hidden, gate_weight, ids, weights):
    ids[:, 8] = 256
    weights[:, 8] = torch.sigmoid(hidden.float() @ gate_weight.float())


# ---- what the C ABI can express ---------------------------------------------------------------------

def _rows_why_not(x, name, dtype, cols):
    if not isinstance(x, torch.Tensor) or not x.is_cuda:
        return f"{name} is not a CUDA tensor"
    if x.dtype != dtype:
        return f"{name} is {x.dtype}, netra reads {dtype}"
    if x.dim() != 2 or x.size(1) != cols:
        return f"{name} is not [rows, {cols}]"
    if x.stride(1) != 1:
        return f"the elements of a row of {name} are not contiguous"
    return None


def _stride(x):
    return x.stride(0) if x.size(0) > 1 else x.size(1)


def _route_buffers(m, device, ids, weights):
    if ids is None:
        ids = torch.zeros(m, 9, dtype=torch.int32, device=device)
    if weights is None:
        weights = torch.zeros(m, 9, dtype=torch.float32, device=device)
    for t, dt in ((ids, torch.int32), (weights, torch.float32)):
        if t.dtype != dt or t.shape != (m, 9) or not t.is_contiguous() or t.device != device:
            raise NetraError(Status.INVALID_ARGUMENT, f"route buffers must be contiguous {dt} [{m}, 9] on {device}")
    return ids, weights


class MoeRouting(NativeHandle):
    """A netra routing handle on one CUDA device (the act_quant, router and shared-gate tactics and
    the router's workspace). Create it before capturing a graph; calls through one handle share the
    router's workspace: keep them on one stream at a time."""

    def __init__(self, device=None):
        super().__init__("MoeRouting", _lib().netra_moe_routing_create, _lib().netra_moe_routing_destroy, device)

    def _outcome(self, status, fallback, run_torch):
        if status == Status.OK:
            return True
        if status != Status.NOT_SUPPORTED:
            check(status)
        if not fallback:
            raise NetraError(Status.NOT_SUPPORTED, _lib().netra_last_error().decode(errors="replace"))
        run_torch()
        return False

    def act_quant(self, gate_up, out=None, scales=None, *, fallback=True):
        """gate_up bf16 [R, 1024] = [gate | up] -> (float8_e4m3fn [R, 512], float32 scales [R, 4])."""
        why = _rows_why_not(gate_up, "gate_up", torch.bfloat16, 1024)
        rows = gate_up.size(0) if why is None else 0
        if out is None:
            out = torch.empty(rows, 512, dtype=torch.float8_e4m3fn, device=self.device)
        if scales is None:
            scales = torch.empty(rows, 4, dtype=torch.float32, device=self.device)
        if why is None and gate_up.device != self.device:
            why = f"gate_up is on {gate_up.device}, the handle on {self.device}"
        if why is not None:
            if not fallback:
                raise NetraError(Status.NOT_SUPPORTED, why)
            return act_quant_torch(gate_up)

        def run_torch():
            q, s = act_quant_torch(gate_up)
            out.copy_(q)
            scales.copy_(s)

        status = _lib().netra_moe_act_quant(self._handle, gate_up.data_ptr(), rows, 1024, _stride(gate_up), out.data_ptr(), scales.data_ptr(),
                                            self._stream())
        self._outcome(status, fallback, run_torch)
        return out, scales

    def router(self, hidden, gate_weight, ids=None, weights=None, *, fallback=True):
        """Slots 0..7 of the route layout from hidden bf16 [M, 2048] and gate_weight bf16 [256, 2048]."""
        why = _rows_why_not(hidden, "hidden", torch.bfloat16, 2048) or _rows_why_not(gate_weight, "gate_weight", torch.bfloat16, 2048)
        if why is None and (gate_weight.size(0) != 256 or not gate_weight.is_contiguous()):
            why = "gate_weight is not a contiguous [256, 2048] tensor"
        ids, weights = _route_buffers(hidden.size(0), hidden.device, ids, weights)
        if why is not None:
            if not fallback:
                raise NetraError(Status.NOT_SUPPORTED, why)
            router_torch(hidden, gate_weight, ids, weights)
            return ids, weights
        m = hidden.size(0)
        status = _lib().netra_moe_router(self._handle, hidden.data_ptr(), m, 2048, _stride(hidden), gate_weight.data_ptr(), 256,
                                         ids.data_ptr(), weights.data_ptr(), self._stream())
        self._outcome(status, fallback, lambda: router_torch(hidden, gate_weight, ids, weights))
        return ids, weights

    def shared_gate(self, hidden, gate_weight, ids=None, weights=None, *, fallback=True):
        """Slot 8 of the route layout: id 256, weight sigmoid(hidden . gate_weight), gate_weight bf16 [2048]."""
        why = _rows_why_not(hidden, "hidden", torch.bfloat16, 2048)
        if why is None and (gate_weight.dtype != torch.bfloat16 or gate_weight.shape != (2048,) or not gate_weight.is_contiguous()):
            why = "gate_weight is not a contiguous bf16 [2048] tensor"
        ids, weights = _route_buffers(hidden.size(0), hidden.device, ids, weights)
        if why is not None:
            if not fallback:
                raise NetraError(Status.NOT_SUPPORTED, why)
            shared_gate_torch(hidden, gate_weight, ids, weights)
            return ids, weights
        m = hidden.size(0)
        status = _lib().netra_moe_shared_gate(self._handle, hidden.data_ptr(), m, 2048, _stride(hidden), gate_weight.data_ptr(), ids.data_ptr(),
                                              weights.data_ptr(), self._stream())
        self._outcome(status, fallback, lambda: shared_gate_torch(hidden, gate_weight, ids, weights))
        return ids, weights

    def route(self, hidden, router_weight, shared_gate_weight, ids=None, weights=None, *, fallback=True):
        """All nine routes of every token: the router (slots 0..7), then the shared gate (slot 8)."""
        ids, weights = self.router(hidden, router_weight, ids, weights, fallback=fallback)
        return self.shared_gate(hidden, shared_gate_weight, ids, weights, fallback=fallback)
