"""The routing stage of the decode MoE block through netra's tactic lists (netra/c/moe_routing.h),
for torch tensors: act_quant, the router (slots 0..7 of the route layout) and the shared-expert gate
(slot 8). Route layout: ids int32 [M, 9], weights float32 [M, 9], slot s of token t at [t, s].

    r = netra.MoeRouting()                      # before graph capture
    ids, weights = r.route(hidden, router_w, shared_gate_w)
    q, scales = r.act_quant(gate_up)            # [9M, 1024] bf16 -> float8_e4m3fn [9M, 512], fp32 [9M, 4]

netra runs on torch's current stream and is safe inside torch.cuda.CUDAGraph capture once the
handle exists. Calls off the GPU or that no tactic admits run the torch composition of the same math
instead (unless fallback=False), written into the same output tensors, which is NOT bitwise equal to
netra's contracts (torch's exp differs, and torch divides 0 / 0 for an all-zero group where netra
keeps signed zeros). A call inside a strict tactic's promoted domain that the contract refuses (an
output too small, a misaligned view, a wrong dtype of an output) raises NetraError with the
contract's refusal.
"""
import ctypes

import torch
import torch.nn.functional as F

from netra import _tensor
from netra._handle import NativeHandle
from netra._library import NetraError, Status, check, declared_library, explained

_p, _t, _status = ctypes.c_void_p, _tensor.POINTER, ctypes.c_int
_text = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
_lib = declared_library({
    "netra_moe_routing_create": ([ctypes.POINTER(_p)], _status),
    "netra_moe_routing_destroy": ([_p], None),
    "netra_moe_act_quant": ([_p, _t, _t, _t, _p], _status),
    "netra_moe_router": ([_p, _t, _t, _t, _t, _p], _status),
    "netra_moe_shared_gate": ([_p, _t, _t, _t, _t, _p], _status),
    "netra_moe_act_quant_explain": ([_p, _t, _t, _t] + _text, _status),
    "netra_moe_router_explain": ([_p, _t, _t, _t, _t] + _text, _status),
    "netra_moe_shared_gate_explain": ([_p, _t, _t, _t, _t] + _text, _status),
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


# ---- the handle ---------------------------------------------------------------------------------------

def _on_gpu(*tensors):
    return all(isinstance(t, torch.Tensor) and t.is_cuda and t.dim() <= _tensor.MAX_RANK for t in tensors)


def _route_buffers(hidden, ids, weights):
    """The caller's route buffers, or new zeroed ones [M, 9] (the contract checks either)."""
    m = hidden.shape[0] if hidden.dim() > 0 else 0
    if ids is None:
        ids = torch.zeros(m, 9, dtype=torch.int32, device=hidden.device)
    if weights is None:
        weights = torch.zeros(m, 9, dtype=torch.float32, device=hidden.device)
    return ids, weights


class MoeRouting(NativeHandle):
    """A netra routing handle on one CUDA device (the act_quant, router and shared-gate tactics and
    the router's workspace). Create it before capturing a graph; calls through one handle share the
    router's workspace: keep them on one stream (and thread) at a time. Tensors go to libnetra as
    DLTensors filled from their metadata (netra/_tensor.py: no copy, allocated once per handle);
    the contracts check them (dtype, shape, strides, alignment, device)."""

    def __init__(self, device=None):
        super().__init__("MoeRouting", _lib().netra_moe_routing_create, _lib().netra_moe_routing_destroy, device)
        self._act_quant, self._router, self._shared_gate = _tensor.Tensors(3), _tensor.Tensors(4), _tensor.Tensors(4)

    def _outcome(self, status, fallback, run_torch):
        if status == Status.OK:
            return
        if status != Status.NOT_SUPPORTED:
            check(status)
        if not fallback:
            raise NetraError(Status.NOT_SUPPORTED, _lib().netra_last_error().decode(errors="replace"))
        run_torch()

    def act_quant(self, gate_up, out=None, scales=None, *, fallback=True):
        """gate_up bf16 [R, 1024] = [gate | up] -> (out float8_e4m3fn [R, 512] (or uint8 holding
        E4M3 bytes), scales float32 [R, 4]), written into the caller's out / scales when given —
        by the torch composition too, so a captured graph sees its results in the same buffers."""
        rows = gate_up.shape[0] if isinstance(gate_up, torch.Tensor) and gate_up.dim() > 0 else 0
        device = gate_up.device if isinstance(gate_up, torch.Tensor) else self.device
        if out is None:
            out = torch.empty(rows, 512, dtype=torch.float8_e4m3fn, device=device)
        if scales is None:
            scales = torch.empty(rows, 4, dtype=torch.float32, device=device)

        def run_torch():
            q, s = act_quant_torch(gate_up)
            out.copy_(q.view(torch.uint8) if out.dtype == torch.uint8 else q)
            scales.copy_(s)

        if not _on_gpu(gate_up, out, scales):
            if not fallback:
                raise NetraError(Status.NOT_SUPPORTED, "act_quant: a tensor is not on a CUDA device")
            run_torch()
            return out, scales
        status = _lib().netra_moe_act_quant(self._handle, *self._act_quant.fill(gate_up, out, scales), self._stream())
        self._outcome(status, fallback, run_torch)
        return out, scales

    def router(self, hidden, gate_weight, ids=None, weights=None, *, fallback=True):
        """Slots 0..7 of the route layout from hidden bf16 [M, 2048] and gate_weight bf16 [256, 2048]."""
        ids, weights = _route_buffers(hidden, ids, weights)
        run_torch = lambda: router_torch(hidden, gate_weight, ids, weights)  # noqa: E731
        if not _on_gpu(hidden, gate_weight, ids, weights):
            if not fallback:
                raise NetraError(Status.NOT_SUPPORTED, "router: a tensor is not on a CUDA device")
            run_torch()
            return ids, weights
        status = _lib().netra_moe_router(self._handle, *self._router.fill(hidden, gate_weight, ids, weights), self._stream())
        self._outcome(status, fallback, run_torch)
        return ids, weights

    def shared_gate(self, hidden, gate_weight, ids=None, weights=None, *, fallback=True):
        """Slot 8 of the route layout: id 256, weight sigmoid(hidden . gate_weight), gate_weight bf16 [2048]."""
        ids, weights = _route_buffers(hidden, ids, weights)
        run_torch = lambda: shared_gate_torch(hidden, gate_weight, ids, weights)  # noqa: E731
        if not _on_gpu(hidden, gate_weight, ids, weights):
            if not fallback:
                raise NetraError(Status.NOT_SUPPORTED, "shared_gate: a tensor is not on a CUDA device")
            run_torch()
            return ids, weights
        status = _lib().netra_moe_shared_gate(self._handle, *self._shared_gate.fill(hidden, gate_weight, ids, weights), self._stream())
        self._outcome(status, fallback, run_torch)
        return ids, weights

    def route(self, hidden, router_weight, shared_gate_weight, ids=None, weights=None, *, fallback=True):
        """All nine routes of every token: the router (slots 0..7), then the shared gate (slot 8)."""
        ids, weights = self.router(hidden, router_weight, ids, weights, fallback=fallback)
        return self.shared_gate(hidden, shared_gate_weight, ids, weights, fallback=fallback)

    def explain_act_quant(self, gate_up, out, scales):
        """Each act_quant tactic's decision for these tensors, and the outcome."""
        return explained(_lib().netra_moe_act_quant_explain, self._handle, *_tensor.Tensors(3).fill(gate_up, out, scales))

    def explain_router(self, hidden, gate_weight, ids, weights):
        return explained(_lib().netra_moe_router_explain, self._handle, *_tensor.Tensors(4).fill(hidden, gate_weight, ids, weights))

    def explain_shared_gate(self, hidden, gate_weight, ids, weights):
        return explained(_lib().netra_moe_shared_gate_explain, self._handle, *_tensor.Tensors(4).fill(hidden, gate_weight, ids, weights))
