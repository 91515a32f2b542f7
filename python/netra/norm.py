"""RMSNorm, residual add + RMSNorm and the gated RMSNorm of the GDN output through netra's tactic
list (netra/c/norm.h), for torch tensors.

The tensors go to libnetra as DLTensors built from their metadata (netra/_tensor.py, no copy) and
the contract checks each (contracts/norm/norm.hpp): bfloat16 x [tokens, 2048] (gated: o
[tokens, 4096] = 32 heads x 128) with contiguous rows and any token stride, weight [2048] (gated:
[128]), out bfloat16 [tokens, C] or, with fp8_out, float8_e4m3fn [tokens, C] plus float32 scales
[tokens, C / 128] (one per 128 outputs). FP32 math in the contract's order, one rounding to BF16:
bitwise reproducible, not bitwise torch's (torch sums in another order; y differs by at most one
BF16 step). A call no tactic admits (another dtype, width or device) runs the torch composition
of the same math instead, unless fallback=False; a call of netra's dtype and width on its device
that the contract refuses (a stride, an alignment, an output too small, eps) raises NetraError.
Runs on torch's current stream; safe inside torch.cuda.CUDAGraph capture once the handle exists.
"""
import ctypes
import threading

import torch
import torch.nn.functional as F

from netra import _tensor
from netra._handle import NativeHandle
from netra._library import NetraError, Status, check, declared_library, explained

_p, _t, _status, _f, _i = ctypes.c_void_p, _tensor.POINTER, ctypes.c_int, ctypes.c_float, ctypes.c_int
_lib = declared_library({
    "netra_norm_create": ([ctypes.POINTER(_p)], _status),
    "netra_norm_destroy": ([_p], None),
    "netra_rms_norm": ([_p, _t, _t, _t, _t, _f, _i, _p], _status),
    "netra_add_rms_norm": ([_p, _t, _t, _t, _t, _t, _f, _i, _p], _status),
    "netra_gated_rms_norm": ([_p, _t, _t, _t, _t, _t, _f, _p], _status),
    "netra_norm_explain": ([_p, _i, _t, _t, _t, _t, _t, _t, _f, _i, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)], _status),
})

E4M3_MAX = 448.0
_KINDS = {"rms": 0, "add": 1, "gated": 2}


# ---- the torch composition of the same math (the fallback) ---------------------------------------

def _normed(v, weight, eps, zero_centred, heads):
    shape = v.shape
    vf = v.float().view(shape[0], heads, -1)
    w = weight.float() + 1.0 if zero_centred else weight.float()
    return vf * torch.rsqrt(vf.pow(2).mean(-1, keepdim=True) + eps) * w


def _quantized(y):
    yg = y.float().view(y.shape[0], -1, 128)
    amax = yg.abs().amax(dim=-1)
    scale = amax / torch.full_like(amax, E4M3_MAX)  # tensor / tensor is IEEE; torch divides by a Python scalar as a product with its reciprocal
    divisor = torch.where(amax == 0, torch.ones_like(scale), scale)
    q = (yg / divisor.unsqueeze(-1)).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return q.view(y.shape), scale


def _torch(kind, x, residual, gate, weight, eps, zero_centred):
    if kind == "add":
        residual.copy_((x.float() + residual.float()).to(torch.bfloat16))
        x = residual
    heads = 32 if kind == "gated" else 1
    y = _normed(x, weight, eps, zero_centred, heads)
    if kind == "gated":
        y = y * F.silu(gate.float().view(y.shape))
    return y.to(torch.bfloat16).view(x.shape)


def _not_for_netra(*tensors):
    return any(t is not None and (not isinstance(t, torch.Tensor) or not t.is_cuda or t.dim() > _tensor.MAX_RANK) for t in tensors)


class Norm(NativeHandle):
    """A netra normalization handle on one CUDA device (every tactic of the family loaded). Create
    it before capturing a graph."""

    def __init__(self, device=None):
        super().__init__("norm", _lib().netra_norm_create, _lib().netra_norm_destroy, device)
        self._tensors = _tensor.Tensors(6)

    def _outputs(self, x, out, scales, fp8_out):
        width = x.shape[-1]
        if out is None:
            out = torch.empty(x.shape, dtype=torch.float8_e4m3fn if fp8_out else torch.bfloat16, device=x.device)
        if fp8_out and scales is None:
            scales = torch.empty((x.shape[0], width // 128), dtype=torch.float32, device=x.device)
        return out, scales

    def _call(self, kind, x, residual, gate, weight, eps, zero_centred, out, scales, fp8_out, fallback):
        out, scales = self._outputs(x, out, scales, fp8_out)
        if _not_for_netra(x, residual, gate, weight, out, scales):
            return self._decline(kind, x, residual, gate, weight, eps, zero_centred, out, scales, fp8_out, fallback, "a tensor is not on a CUDA device")
        stream, lib = self._stream(), _lib()
        if kind == "rms":
            args = self._tensors.fill(x, weight, out, scales)[:4]
            status = lib.netra_rms_norm(self._handle, *args, eps, int(zero_centred), stream)
        elif kind == "add":
            args = self._tensors.fill(x, residual, weight, out, scales)[:5]
            status = lib.netra_add_rms_norm(self._handle, *args, eps, int(zero_centred), stream)
        else:
            args = self._tensors.fill(x, gate, weight, out, scales)[:5]
            status = lib.netra_gated_rms_norm(self._handle, *args, eps, stream)
        if status == Status.OK:
            return (out, scales) if fp8_out else out
        if status != Status.NOT_SUPPORTED:
            check(status)
        return self._decline(kind, x, residual, gate, weight, eps, zero_centred, out, scales, fp8_out, fallback,
                             lib.netra_last_error().decode(errors="replace"))

    @staticmethod
    def _decline(kind, x, residual, gate, weight, eps, zero_centred, out, scales, fp8_out, fallback, why):
        if not fallback:
            raise NetraError(Status.NOT_SUPPORTED, why)
        y = _torch(kind, x, residual, gate, weight, eps, zero_centred)
        if not fp8_out:
            out.copy_(y)
            return out
        q, s = _quantized(y)
        out.copy_(q.view(out.dtype) if out.dtype == torch.uint8 else q)
        scales.copy_(s)
        return out, scales

    def rms_norm(self, x, weight, eps, *, zero_centred=False, fp8_out=False, out=None, scales=None, fallback=True):
        """y = x * rsqrt(mean(x^2) + eps) * w (or (1 + w)); (out, scales) with fp8_out."""
        return self._call("rms", x, None, None, weight, eps, zero_centred, out, scales, fp8_out, fallback)

    def add_rms_norm(self, x, residual, weight, eps, *, zero_centred=False, fp8_out=False, out=None, scales=None, fallback=True):
        """residual <- bf16(x + residual) (in place), then rms_norm(residual)."""
        return self._call("add", x, residual, None, weight, eps, zero_centred, out, scales, fp8_out, fallback)

    def gated_rms_norm(self, o, z, weight, eps, *, fp8_out=False, out=None, scales=None, fallback=True):
        """rms_norm per head of 128 of o [tokens, 4096], times SiLU(z)."""
        return self._call("gated", o, None, z, weight, eps, False, out, scales, fp8_out, fallback)

    def explain(self, kind, x, weight, eps, *, residual=None, gate=None, zero_centred=False, fp8_out=False, out=None, scales=None):
        """One line per tactic with its decision for these tensors, then the outcome."""
        out, scales = self._outputs(x, out, scales, fp8_out)
        if _not_for_netra(x, residual, gate, weight, out, scales):
            return "not a netra call: a tensor is not on a CUDA device"
        tensors = _tensor.Tensors(6).fill(x, residual, gate, weight, out, scales)
        return explained(lambda h, *rest: _lib().netra_norm_explain(h, _KINDS[kind], *tensors, eps, int(zero_centred), *rest), self._handle)


_handles = {}
_handles_lock = threading.Lock()


def _handle_for(device):
    with _handles_lock:
        if device not in _handles:
            _handles[device] = Norm(device)
        return _handles[device]


def _host(kind, x, residual, gate, weight, eps, kw):
    """A call no netra handle can be asked about (not CUDA tensors): torch, unless fallback=False."""
    if not kw.get("fallback", True):
        raise NetraError(Status.NOT_SUPPORTED, "netra: the tensors are not on a CUDA device")
    y = _torch(kind, x, residual, gate, weight, eps, kw.get("zero_centred", False))
    return _quantized(y) if kw.get("fp8_out", False) else y


def rms_norm(x, weight, eps, **kw):
    """Norm.rms_norm through one shared handle per device (torch runs what netra declines)."""
    return _host("rms", x, None, None, weight, eps, kw) if _not_for_netra(x) else _handle_for(x.device).rms_norm(x, weight, eps, **kw)


def add_rms_norm(x, residual, weight, eps, **kw):
    """Norm.add_rms_norm through one shared handle per device."""
    if _not_for_netra(x):
        return _host("add", x, residual, None, weight, eps, kw)
    return _handle_for(x.device).add_rms_norm(x, residual, weight, eps, **kw)


def gated_rms_norm(o, z, weight, eps, **kw):
    """Norm.gated_rms_norm through one shared handle per device."""
    return _host("gated", o, None, z, weight, eps, kw) if _not_for_netra(o) else _handle_for(o.device).gated_rms_norm(o, z, weight, eps, **kw)
