"""GQA8 paged attention and GQA4 extend over a native FP8 KV cache through netra's tactic lists
(netra/c/attention.h). GQA8 (AttentionGQA8, attention_gqa8),
for torch tensors: 16 query heads over 2 KV heads, head dim 256, BF16 q/out, E4M3 K/V read in place
from SGLang's token-slot pools, SGLang's paged ABI (int64 qo_indptr, int32 kv_indptr, int64
kv_indices), FP32 k_scale / v_scale on the device. phase "decode" (1 token per request) or
"verify" (12 tokens per request, causal inside the verify block); netra never takes "extend" or
"prefill" calls (the phase is part of the signature, not inferred from the shape). GQA4 extend
(AttentionGQA4Extend, attention_gqa4_extend): 32 query heads over 8 KV heads, head dim 128, 1..12
extension tokens per request (qo_indptr) with their own BF16 k_extend / v_extend [tokens, 8, 128],
causal inside the extension, over the same paged FP8 prefix; phase "extend" only.

The tensors go to libnetra as DLTensors built from their metadata (netra/_tensor.py, no copy) and
the contract checks each (dtype, shape, strides, device, alignment, an out smaller than q). It runs
on torch's current stream and is capturable once the handle exists. A call no tactic admits runs
`reference` (torch) instead unless fallback=False; a call inside a tactic's promoted domain that
does not match its ABI raises NetraError.
"""
import ctypes
import threading

import torch

from netra import _tensor
from netra._handle import NativeHandle
from netra._library import NetraError, Status, check, declared_library, explained

_p, _t, _status = ctypes.c_void_p, _tensor.POINTER, ctypes.c_int
_scalars = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_float]
_lib = declared_library({
    "netra_attention_gqa8_create": ([ctypes.POINTER(_p)], _status),
    "netra_attention_gqa8_destroy": ([_p], None),
    "netra_attention_gqa8": ([_p] + _scalars + [_t] * 10 + [_p], _status),
    "netra_attention_gqa8_explain": ([_p] + _scalars + [_t] * 10 + [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)], _status),
    "netra_attention_gqa4_extend_create": ([ctypes.POINTER(_p)], _status),
    "netra_attention_gqa4_extend_destroy": ([_p], None),
    "netra_attention_gqa4_extend": ([_p] + _scalars + [_t] * 12 + [_p], _status),
    "netra_attention_gqa4_extend_explain": ([_p] + _scalars + [_t] * 12 + [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)],
                                            _status),
})
EXTEND_SCALE = 0.0883883461356163  # fl32(1/sqrt(128)), the contract's softmax scale
PHASES = {"decode": 0, "extend": 1, "verify": 2, "prefill": 3}


def _prefix(k_buffer, v_buffer, kv_indptr, kv_indices, k_scale, v_scale, page_size, kv_last_page_len, b, kvp):
    """Request b's dequantized prefix K and V (FP32, [positions, Hkv, D])."""
    fp8 = torch.float8_e4m3fn
    kb = k_buffer.view(fp8) if k_buffer.dtype == torch.uint8 else k_buffer
    vb = v_buffer.view(fp8) if v_buffer.dtype == torch.uint8 else v_buffer
    entries = max(0, kvp[b + 1] - kvp[b])
    if page_size == 1:
        slots = kv_indices[kvp[b]:kvp[b] + entries]
    else:
        length = 0 if entries == 0 else page_size * (entries - 1) + min(page_size, max(0, int(kv_last_page_len[b])))
        pos = torch.arange(length, device=kv_indices.device)
        slots = kv_indices[kvp[b] + pos // page_size] * page_size + pos % page_size
    return kb[slots].float() * k_scale.float(), vb[slots].float() * v_scale.float()


def reference(q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, *, tokens_per_request=1, page_size=1,
              kv_last_page_len=None, softmax_scale=1 / 16, out=None):
    """The contract's semantics in torch (FP32 math on the dequantized cache): what runs when netra
    declines a call. Token t of a request of length L sees positions < L - tokens_per_request + t + 1."""
    if out is None:
        out = torch.zeros_like(q)
    hq, hkv = q.shape[1], k_buffer.shape[1]
    qo, kvp = qo_indptr.tolist(), kv_indptr.tolist()
    for b in range(len(qo) - 1):
        k, v = _prefix(k_buffer, v_buffer, kv_indptr, kv_indices, k_scale, v_scale, page_size, kv_last_page_len, b, kvp)
        n = k.shape[0]
        qq = q[qo[b]:qo[b] + tokens_per_request].float()
        k = k.repeat_interleave(hq // hkv, dim=1)
        v = v.repeat_interleave(hq // hkv, dim=1)
        s = torch.einsum("thd,nhd->htn", qq, k) * softmax_scale
        t = torch.arange(tokens_per_request, device=q.device).view(1, -1, 1)
        s = s.masked_fill(torch.arange(n, device=q.device).view(1, 1, -1) >= n - tokens_per_request + t + 1, float("-inf"))
        w = torch.softmax(s, dim=-1).nan_to_num(0.0)
        out[qo[b]:qo[b] + tokens_per_request] = torch.einsum("htn,nhd->thd", w, v).to(out.dtype)
    return out


def extend_reference(q, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, *, page_size=1,
                     kv_last_page_len=None, softmax_scale=EXTEND_SCALE, out=None):
    """GQA4 extend's semantics in torch (FP32 math on the dequantized prefix and the BF16
    extension): extension token i of a request sees its whole prefix and extension tokens 0..i."""
    if out is None:
        out = torch.zeros_like(q)
    hq, hkv = q.shape[1], k_buffer.shape[1]
    qo, kvp = qo_indptr.tolist(), kv_indptr.tolist()
    for b in range(len(qo) - 1):
        kp, vp = _prefix(k_buffer, v_buffer, kv_indptr, kv_indices, k_scale, v_scale, page_size, kv_last_page_len, b, kvp)
        e = qo[b + 1] - qo[b]
        k = torch.cat([kp, k_extend[qo[b]:qo[b + 1]].float()]).repeat_interleave(hq // hkv, dim=1)
        v = torch.cat([vp, v_extend[qo[b]:qo[b + 1]].float()]).repeat_interleave(hq // hkv, dim=1)
        s = torch.einsum("thd,nhd->htn", q[qo[b]:qo[b + 1]].float(), k) * softmax_scale
        t = torch.arange(e, device=q.device).view(1, -1, 1)
        s = s.masked_fill(torch.arange(k.shape[0], device=q.device).view(1, 1, -1) > kp.shape[0] + t, float("-inf"))
        out[qo[b]:qo[b + 1]] = torch.einsum("htn,nhd->thd", torch.softmax(s, dim=-1), v).to(out.dtype)
    return out


class _PagedAttention(NativeHandle):
    """What both attention handles share: the C entry points netra_attention_<op>[_explain], the
    call's scalars before its tensors, and the fallback when no tactic admits the call."""

    def __init__(self, op, count, device):
        super().__init__(f"attention_{op}", getattr(_lib(), f"netra_attention_{op}_create"), getattr(_lib(), f"netra_attention_{op}_destroy"),
                         device)
        self._run, self._explain = getattr(_lib(), f"netra_attention_{op}"), getattr(_lib(), f"netra_attention_{op}_explain")
        self._tensors = _tensor.Tensors(count)

    def _args(self, phase, tokens, page_size, softmax_scale, tensors):
        if phase not in PHASES:
            raise NetraError(Status.INVALID_ARGUMENT, f"phase must be one of {sorted(PHASES)}, got {phase!r}")
        return (PHASES[phase], tokens, page_size, softmax_scale, *self._tensors.fill(*tensors))

    def _call(self, scalars, tensors, out, fallback, fall_back):
        if not all(t is None or (isinstance(t, torch.Tensor) and t.is_cuda) for t in tensors):
            status, why = Status.NOT_SUPPORTED, "a tensor is not a CUDA tensor"
        else:
            status = self._run(self._handle, *self._args(*scalars, tensors), self._stream())
            if status == Status.OK:
                return out
            if status != Status.NOT_SUPPORTED:
                check(status)
            why = _lib().netra_last_error().decode(errors="replace")
        if not fallback:
            raise NetraError(Status.NOT_SUPPORTED, why)
        return fall_back()

    def _explained(self, scalars, tensors):
        return explained(self._explain, self._handle, *self._args(*scalars, tensors))


class AttentionGQA8(_PagedAttention):
    """A netra GQA8 attention handle on one CUDA device: it loads every tactic and owns their
    workspaces (split calls' (m, l, o) triples). Create it before capturing a graph; keep its calls
    on one stream (and thread) at a time."""

    def __init__(self, device=None):
        super().__init__("gqa8", 10, device)

    def __call__(self, q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, *, phase="decode", tokens_per_request=1,
                 page_size=1, kv_last_page_len=None, softmax_scale=1 / 16, out=None, fallback=True):
        out = torch.empty_like(q) if out is None else out
        tensors = (q, out, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale)
        return self._call((phase, tokens_per_request, page_size, softmax_scale), tensors, out, fallback, lambda: reference(
            q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, tokens_per_request=tokens_per_request,
            page_size=page_size, kv_last_page_len=kv_last_page_len, softmax_scale=softmax_scale, out=out))

    def explain(self, q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, *, phase="decode", tokens_per_request=1,
                page_size=1, kv_last_page_len=None, softmax_scale=1 / 16, out=None):
        """One line per tactic with its decision for this call, then the outcome."""
        out = torch.empty_like(q) if out is None else out
        return self._explained((phase, tokens_per_request, page_size, softmax_scale),
                               (q, out, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale))


class AttentionGQA4Extend(_PagedAttention):
    """A netra GQA4 extend handle on one CUDA device: it loads every extend tactic and owns their
    workspaces. Create it before capturing a graph; keep its calls on one stream at a time."""

    def __init__(self, device=None):
        super().__init__("gqa4_extend", 12, device)

    def __call__(self, q, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, *, phase="extend",
                 longest_extension=12, page_size=1, kv_last_page_len=None, softmax_scale=EXTEND_SCALE, out=None, fallback=True):
        out = torch.empty_like(q) if out is None else out
        tensors = (q, out, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale)
        return self._call((phase, longest_extension, page_size, softmax_scale), tensors, out, fallback, lambda: extend_reference(
            q, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, page_size=page_size,
            kv_last_page_len=kv_last_page_len, softmax_scale=softmax_scale, out=out))

    def explain(self, q, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, *, phase="extend",
                longest_extension=12, page_size=1, kv_last_page_len=None, softmax_scale=EXTEND_SCALE, out=None):
        """One line per tactic with its decision for this call, then the outcome."""
        out = torch.empty_like(q) if out is None else out
        return self._explained((phase, longest_extension, page_size, softmax_scale),
                               (q, out, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale))


_handles = {}
_handles_lock = threading.Lock()


def attention_gqa8(q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, **options):
    """GQA8 paged attention through netra when a tactic admits the call (one shared handle per
    device), through `reference` otherwise (fallback=False raises NetraError instead)."""
    with _handles_lock:
        if q.device not in _handles:
            _handles[q.device] = AttentionGQA8(q.device)
        h = _handles[q.device]
    return h(q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, **options)


def attention_gqa4_extend(q, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, **options):
    """GQA4 extend through netra when a tactic admits the call (one shared handle per device),
    through `extend_reference` otherwise (fallback=False raises NetraError instead)."""
    with _handles_lock:
        key = ("gqa4_extend", q.device)
        if key not in _handles:
            _handles[key] = AttentionGQA4Extend(q.device)
        h = _handles[key]
    return h(q, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, **options)
