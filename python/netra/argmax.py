"""argmax through netra's tactic list (netra/c/argmax.h), for torch tensors.

The tensors go to libnetra as DLTensors built from their metadata (netra/_tensor.py, no copy), and
the contract checks each: netra takes float32 logits [rows, cols] on the handle's device whose rows
are contiguous (any row stride), out int64 [rows]. It runs on torch's current stream and is safe
inside torch.cuda.CUDAGraph capture once the handle exists. Every call no tactic admits (another
dtype, shape or device) runs torch.argmax instead (unless fallback=False). A call inside a strict
tactic's promoted domain that does not match its ABI (a misaligned view of the article's
vocabulary, an out of the wrong size) raises NetraError rather than falling back.
"""
import ctypes
import threading

import torch

from netra import _tensor
from netra._handle import NativeHandle
from netra._library import NetraError, Status, check, declared_library, explained

_p, _t, _status = ctypes.c_void_p, _tensor.POINTER, ctypes.c_int
_lib = declared_library({
    "netra_argmax_create": ([ctypes.POINTER(_p)], _status),
    "netra_argmax_destroy": ([_p], None),
    "netra_argmax": ([_p, _t, _t, _p], _status),
    "netra_argmax_explain": ([_p, _t, _t, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)], _status),
})


def _not_for_netra(logits):
    """True for what no netra handle can be asked about (not a CUDA tensor: torch runs it)."""
    return not isinstance(logits, torch.Tensor) or not logits.is_cuda or logits.dim() > _tensor.MAX_RANK


def _decline(logits, out, fallback, why):
    """torch.argmax for a call netra does not take, or NetraError(NOT_SUPPORTED) without fallback."""
    if not fallback:
        raise NetraError(Status.NOT_SUPPORTED, why)
    result = torch.argmax(logits, dim=-1)
    if out is None:
        return result
    out.copy_(result)
    return out


class Argmax(NativeHandle):
    """A netra argmax handle on one CUDA device: it loads every tactic (embedded, or JIT-compiled
    through the cache) and owns their workspaces. Create it before capturing a graph. Calls
    through one handle share its workspace: keep them on one stream (and thread) at a time."""

    def __init__(self, device=None):
        super().__init__("argmax", _lib().netra_argmax_create, _lib().netra_argmax_destroy, device)
        self._tensors = _tensor.Tensors(2)  # logits, out: filled per call, allocated once

    def __call__(self, logits, out=None, *, fallback=True):
        """out[r] = argmax(logits[r, :]) as torch.argmax(logits, dim=-1) computes it."""
        if _not_for_netra(logits):
            return _decline(logits, out, fallback, "logits are not a CUDA tensor")
        if out is None:
            out = torch.empty(logits.shape[:-1], dtype=torch.int64, device=logits.device)
        status = _lib().netra_argmax(self._handle, *self._tensors.fill(logits, out), self._stream())
        if status == Status.OK:
            return out
        if status != Status.NOT_SUPPORTED:
            check(status)
        return _decline(logits, out, fallback, _lib().netra_last_error().decode(errors="replace"))

    def explain(self, logits, out=None):
        """One line per tactic with its decision for these tensors, then the outcome."""
        if _not_for_netra(logits):
            return "not a netra call: logits are not a CUDA tensor"
        if out is None:
            out = torch.empty(logits.shape[:-1], dtype=torch.int64, device=logits.device)
        return explained(_lib().netra_argmax_explain, self._handle, *_tensor.Tensors(2).fill(logits, out))


_handles = {}
_handles_lock = threading.Lock()


def _handle_for(device):
    with _handles_lock:
        if device not in _handles:
            _handles[device] = Argmax(device)
        return _handles[device]


def argmax(logits, out=None, *, fallback=True):
    """torch.argmax(logits, dim=-1) through netra when a tactic admits the call (one shared handle
    per device), through torch otherwise; fallback=False raises NetraError instead."""
    if _not_for_netra(logits):
        return _decline(logits, out, fallback, "logits are not a CUDA tensor")
    return _handle_for(logits.device)(logits, out, fallback=fallback)


def explain_argmax(logits):
    """What each argmax tactic decides for these logits, and the outcome."""
    if _not_for_netra(logits):
        return "not a netra call: logits are not a CUDA tensor"
    return _handle_for(logits.device).explain(logits)
