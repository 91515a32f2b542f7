"""argmax through netra's tactic list (netra/c/argmax.h), for torch tensors.

netra takes FP32 logits [rows, cols] on a CUDA device whose rows are contiguous (any row stride);
it runs on torch's current stream and is safe inside torch.cuda.CUDAGraph capture once the
handle exists. Everything else, and every call no tactic admits, runs torch.argmax instead
(unless fallback=False). A call inside a strict tactic's promoted domain that does not match its
ABI (a misaligned view of the article's vocabulary, say) raises NetraError rather than falling
back.
"""
import ctypes
import threading

import torch

from netra._handle import NativeHandle
from netra._library import NetraError, Status, check, declared_library

_p, _i64, _status = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
_lib = declared_library({
    "netra_argmax_create": ([ctypes.POINTER(_p)], _status),
    "netra_argmax_destroy": ([_p], None),
    "netra_argmax": ([_p, _p, _i64, _i64, _i64, _p, _p], _status),
    "netra_argmax_explain": ([_p, _p, _i64, _i64, _i64, _p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)], _status),
})


def _why_not(logits, out):
    """Why netra cannot take this call at all (None when it can ask its tactics)."""
    if not isinstance(logits, torch.Tensor) or not logits.is_cuda:
        return "logits are not a CUDA tensor"
    if logits.dtype != torch.float32:
        return f"logits are {logits.dtype}, netra's argmax reads float32"
    if logits.dim() != 2:
        return f"logits have {logits.dim()} dimensions, netra's argmax takes [rows, cols]"
    if logits.size(1) > 1 and logits.stride(1) != 1:
        return "the elements of a row are not contiguous"
    if out is not None and (out.dtype != torch.int64 or out.device != logits.device or out.dim() != 1
                            or out.numel() != logits.size(0) or (out.numel() > 1 and out.stride(0) != 1)):
        return "out is not a contiguous int64 tensor of one index per row on the logits' device"
    return None


def _row_stride(logits):
    """The row stride in elements (a single row's stride does not matter: give its length)."""
    return logits.stride(0) if logits.size(0) > 1 else logits.size(1)


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
    through one handle share its workspace: keep them on one stream at a time."""

    def __init__(self, device=None):
        super().__init__("argmax", _lib().netra_argmax_create, _lib().netra_argmax_destroy, device)

    def __call__(self, logits, out=None, *, fallback=True):
        """out[r] = argmax(logits[r, :]) as torch.argmax(logits, dim=-1) computes it."""
        why = _why_not(logits, out)
        if why is None and logits.device != self.device:
            why = f"logits are on {logits.device}, the handle on {self.device}"
        if why is not None:
            return _decline(logits, out, fallback, why)
        rows, cols = logits.shape
        if out is None:
            out = torch.empty(rows, dtype=torch.int64, device=logits.device)
        stream = torch.cuda.current_stream(logits.device).cuda_stream
        status = _lib().netra_argmax(self._handle, logits.data_ptr(), rows, cols, _row_stride(logits), out.data_ptr(), stream)
        if status == Status.OK:
            return out
        if status != Status.NOT_SUPPORTED:
            check(status)
        return _decline(logits, out, fallback, _lib().netra_last_error().decode(errors="replace"))

    def explain(self, logits):
        """One line per tactic with its decision for these logits, then the outcome."""
        why = _why_not(logits, None)
        if why is not None:
            return f"not a netra call: {why}"
        rows, cols = logits.shape
        out = torch.empty(rows, dtype=torch.int64, device=logits.device)
        length = ctypes.c_size_t()
        args = (self._handle, logits.data_ptr(), rows, cols, _row_stride(logits), out.data_ptr())
        check(_lib().netra_argmax_explain(*args, None, 0, ctypes.byref(length)))
        text = ctypes.create_string_buffer(length.value + 1)
        check(_lib().netra_argmax_explain(*args, text, len(text), None))
        return text.value.decode()


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
    why = _why_not(logits, out)
    if why is not None:
        return _decline(logits, out, fallback, why)
    return _handle_for(logits.device)(logits, out, fallback=fallback)


def explain_argmax(logits):
    """What each argmax tactic decides for these logits, and the outcome."""
    why = _why_not(logits, None)
    if why is not None:
        return f"not a netra call: {why}"
    return _handle_for(logits.device).explain(logits)
