"""Every netra operation as a torch.library custom op in namespace `netra`, for models that
torch.compile(fullgraph=True) traces and torch.cuda.CUDAGraph captures.

    import netra.torch_ops as ops
    ops.prepare(device)                                   # the handles: before capture or compile
    torch.ops.netra.rms_norm(x, w, out, 1e-6, True)       # writes out; returns nothing
    ops.fallback_counts()                                 # {"rms_norm": 0, ...}

Every op writes into caller buffers (declared in `mutates_args`) and returns None, so its fake
implementation has nothing to compute: tracing sees one opaque node per call. At run time an op
asks netra first (fallback=False on the family's handle); when no netra tactic admits the call
(NOT_SUPPORTED) it runs the caller-visible torch implementation below (`fallback_<op>`), counts it
in `fallback_counts()` and keeps netra's refusal in `last_fallback_reason(op)`. A refusal inside a
tactic's promoted domain (INVALID_ARGUMENT) raises: it is a caller bug, never a silent fallback.
The torch implementations are capturable (no host sync, no data-dependent shapes) except
attention without the optional dense slot table (kv_table, kv_lens): that fallback is
netra.attention.reference, which reads the CSR on the host; with the table it is `dense_attention`.

Counters count calls on the host: a captured graph's replays run what was captured and add
nothing. `forced(families)` makes ops of those families skip netra (single-tactic toggles).
`recording()` collects, per call, which implementation served it and why (netra's explain text
where the C ABI has one; the gdn conv, precompute, verify and m16 have none: their row says the
call returned OK, or gives the refusal).
"""
import contextlib
import ctypes
import importlib
import threading
from typing import Optional

import torch

from netra import _tensor
from netra import attention as _attention
from netra import gdn as _gdn
from netra import moe_experts as _experts
from netra import moe_routing as _routing
from netra import norm as _norm
from netra._library import NetraError, Status, declared_library, explained

_argmax = importlib.import_module("netra.argmax")  # the module: `from netra import argmax` is the function netra exports

FAMILIES = {"argmax": "argmax", "rms_norm": "norm", "add_rms_norm": "norm", "gated_rms_norm": "norm",
            "attention_gqa8": "attention", "gdn_conv": "gdn", "gdn_precompute": "gdn", "gdn_verify": "gdn",
            "gdn_m16": "gdn", "gdn_replay": "gdn", "moe_act_quant": "moe", "moe_router": "moe",
            "moe_shared_gate": "moe", "moe_gate_up": "moe", "moe_down": "moe", "moe_block": "moe"}
_text = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
_gdn_lib = declared_library({"netra_gdn_replay_explain": ([ctypes.c_void_p] + [_tensor.POINTER] * 10 + _text, ctypes.c_int)})

# ---- handles, counters, toggles, recording ---------------------------------------------------------
_lock = threading.Lock()
_handles: dict = {}
_fallbacks = {op: 0 for op in FAMILIES}
_served = {op: 0 for op in FAMILIES}
_reasons: dict = {}
_forced: set = set()
_recorder: list | None = None


class Handles:
    """One handle of every family on one device (created by prepare(), before capture)."""

    def __init__(self, device):
        self.argmax = _argmax.Argmax(device)
        self.attention = _attention.AttentionGQA8(device)
        self.gdn = _gdn.Gdn(device)
        self.routing = _routing.MoeRouting(device)
        self.experts = _experts.MoeExperts(device)
        self.block = _experts.MoeBlock(device)
        self.norm = _norm.Norm(device)


def prepare(device=None) -> Handles:
    """The handles of `device` (default: torch's current CUDA device), created once; call it before
    torch.compile or graph capture (creating a handle loads code and allocates)."""
    device = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    with _lock:
        if device not in _handles:
            _handles[device] = Handles(device)
        return _handles[device]


def _handles_for(t: torch.Tensor) -> Handles | None:
    if not t.is_cuda:
        return None
    h = _handles.get(t.device)
    return h if h is not None else prepare(t.device)


def fallback_counts() -> dict:
    """Calls per op that netra declined and torch ran (forced ones included), since the last reset."""
    return dict(_fallbacks)


def served_counts() -> dict:
    """Calls per op that a netra tactic served."""
    return dict(_served)


def last_fallback_reason(op: str) -> str | None:
    return _reasons.get(op)


def reset_counts() -> None:
    for op in FAMILIES:
        _fallbacks[op] = _served[op] = 0
    _reasons.clear()


@contextlib.contextmanager
def forced(families):
    """Ops of these families (e.g. {"attention"}) run their torch implementation, netra not asked."""
    global _forced
    before, _forced = _forced, set(families)
    try:
        yield
    finally:
        _forced = before


@contextlib.contextmanager
def recording():
    """Yields a list that gets one {op, served, detail} per op call made inside the block."""
    global _recorder
    before, _recorder = _recorder, []
    try:
        yield _recorder
    finally:
        _recorder = before


def _run(op, ask_netra, run_torch, explain=None):
    """netra first; torch when netra declines (or the family is forced)."""
    why = None
    if FAMILIES[op] in _forced:
        why = f"forced: the {FAMILIES[op]} family is toggled to its fallback"
    else:
        try:
            if ask_netra():
                _served[op] += 1
                if _recorder is not None:
                    _recorder.append({"op": op, "served": "netra", "detail": explain() if explain else "netra call returned OK"})
                return
            why = "not a CUDA tensor"
        except NetraError as e:
            if e.status != Status.NOT_SUPPORTED:
                raise
            why = str(e)
    _fallbacks[op] += 1
    _reasons[op] = why
    if _recorder is not None:
        _recorder.append({"op": op, "served": "fallback", "detail": why})
    run_torch()


def _explained(f):
    """An explain callable that is only evaluated while recording."""
    return f if _recorder is not None else None


# ---- the capturable torch implementations (the ops' fallbacks, and the step's framework path) ------

def fallback_argmax(logits, out):
    out.copy_(torch.argmax(logits, dim=-1))


def fallback_norm(kind, x, residual, gate, weight, out, eps, zero_centred):
    out.copy_(_norm._torch(kind, x, residual, gate, weight, eps, zero_centred).view(out.shape))


def dense_attention(q, k_buffer, v_buffer, kv_table, kv_lens, k_scale, v_scale, T, softmax_scale, out):
    """Attention over an engine's dense slot table (kv_table int64 [B, L], kv_lens int32 [B]; the
    first kv_lens[b] entries of row b are request b's positions, the rest any valid slot), capturable:
    FP32 softmax on the dequantized E4M3 cache; token t of a request of length n sees positions
    < n - T + t + 1 (the contract's semantics, as netra.attention.reference computes them)."""
    B, L = kv_table.shape
    e4m3 = torch.float8_e4m3fn
    k = (k_buffer.view(e4m3) if k_buffer.dtype == torch.uint8 else k_buffer)[kv_table].float() * k_scale
    v = (v_buffer.view(e4m3) if v_buffer.dtype == torch.uint8 else v_buffer)[kv_table].float() * v_scale
    hkv = k_buffer.shape[1]
    qq = q.view(B, T, hkv, q.shape[1] // hkv, q.shape[-1]).float()
    s = torch.einsum("btgjd,blgd->bgjtl", qq, k) * softmax_scale
    t = torch.arange(T, device=q.device).view(1, T, 1)
    visible = torch.arange(L, device=q.device).view(1, 1, L) < (kv_lens.view(B, 1, 1) - T + t + 1)
    s = s.masked_fill(~visible[:, None, None], float("-inf"))
    w = torch.softmax(s, dim=-1).nan_to_num(0.0)
    out.copy_(torch.einsum("bgjtl,blgd->btgjd", w, v).reshape(out.shape).to(out.dtype))


def fallback_attention_gqa8(q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, out, kv_last_page_len,
                            tokens_per_request, page_size, softmax_scale, kv_table=None, kv_lens=None):
    """dense_attention when the caller passes its slot table (capturable), else
    netra.attention.reference on the CSR (reads it on the host: not capturable)."""
    if kv_table is not None and kv_lens is not None:
        dense_attention(q, k_buffer, v_buffer, kv_table, kv_lens, k_scale, v_scale, tokens_per_request, softmax_scale, out)
        return
    _attention.reference(q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale, tokens_per_request=tokens_per_request,
                         page_size=page_size, kv_last_page_len=kv_last_page_len, softmax_scale=softmax_scale, out=out)


def _slot_rows(slots, pool):
    """(clamped slot indices, mask of the rows that own a real slot: not the sentinel, in range)."""
    n = pool.shape[0]
    return slots.long().clamp(0, n - 1), (slots >= 0) & (slots < n - 1)


def _commit(pool, idx, real, new):
    """pool[idx[b]] = new[b] for real rows; padded rows write the sentinel's own value back."""
    mask = real.view(-1, *([1] * (new.dim() - 1)))
    pool.index_copy_(0, idx, torch.where(mask, new.to(pool.dtype), pool[idx]))


def fallback_gdn_conv(x, weight, y, slots, state, windows):
    idx, real = _slot_rows(slots, state)
    channel_major = state.shape[1] == _gdn.D
    hist = state[idx] if channel_major else state[idx].transpose(1, 2)
    out, extra = _gdn.conv_torch(x, weight, hist.contiguous(), windows is not None)
    y.copy_(out)
    if windows is not None:
        windows.copy_(extra if windows.shape[2] == _gdn.D else extra.transpose(2, 3))
    else:
        _commit(state, idx, real, extra if channel_major else extra.transpose(1, 2))


def fallback_gdn_precompute(y, a, b, a_log, dt_bias, q, k, decay, beta):
    for dst, src in zip((q, k, decay, beta), _gdn.precompute_torch(y, a, b, a_log, dt_bias)):
        dst.copy_(src.view_as(dst))


def fallback_gdn_recurrent(q, k, v, decay, beta, state, slots, out, commit: bool):
    idx, real = _slot_rows(slots, state)
    o, new = _gdn.recurrent_torch(q, k, v, decay, beta, state[idx], q.shape[0] // slots.shape[0])
    out.copy_(o)
    if commit:
        _commit(state, idx, real, new)


def fallback_gdn_replay(q, k, v, decay, beta, state, slots, accepted, conv_windows, conv_state):
    T = q.shape[0] // slots.shape[0]
    idx, real = _slot_rows(slots, state)
    real = real & (accepted >= 1) & (accepted <= T)
    _, new = _gdn.recurrent_torch(q, k, v, decay, beta, state[idx], T, accepted=accepted, outputs=False)
    _commit(state, idx, real, new)
    rows = torch.arange(slots.shape[0], device=slots.device)
    _commit(conv_state, idx, real, conv_windows[rows, (accepted.long() - 1).clamp(0, T - 1)])


def _experts_bf16(w, s):
    """Every expert's weights dequantized to BF16 (E4M3 x its 128 x 128 block's scale, rounded once)."""
    e, o, i = w.shape
    d = w.to(torch.bfloat16).view(e, o // 128, 128, i // 128, 128)
    return d.mul_(s.to(torch.bfloat16)[:, :, None, :, None]).view(e, o, i)


def fallback_moe_gate_up(hidden, ids, w13, s13, out):
    """gate_up on the framework path, capturable at any token count: the contract's per-128 E4M3
    quantization of hidden, every expert's product in BF16 (FP32 accumulation), the routed rows kept."""
    m = hidden.shape[0]
    q, sx = _experts.quantize_hidden(hidden)
    x = (q.float().view(m, 16, 128) * sx.view(m, 16, 1)).view(m, 2048).to(torch.bfloat16)
    y = torch.matmul(x, _experts_bf16(w13, s13).transpose(1, 2))  # [experts, m, 1024]
    t = torch.arange(m, device=hidden.device).repeat_interleave(9)
    out.copy_(y[ids.reshape(-1).long(), t])


def fallback_moe_down(act, act_scales, ids, route_weights, w2, s2, out):
    """down on the framework path, capturable: each route's dequantized act through its expert in
    BF16 (FP32 accumulation), the nine routes weighted and summed in FP32."""
    if act.dtype == torch.bfloat16:  # gate_up's output: act_quant first
        act, act_scales = _routing.act_quant_torch(act)
    m, e = ids.shape[0], ids.reshape(-1).long()
    a = (act.float().view(-1, 4, 128) * act_scales.view(-1, 4, 1)).view(-1, 512).to(torch.bfloat16)
    t = torch.arange(m, device=act.device).repeat_interleave(9)
    grid = torch.zeros(w2.shape[0], m, 512, dtype=torch.bfloat16, device=act.device)
    grid[e, t] = a  # a token's nine routes name nine different experts
    y = torch.matmul(grid, _experts_bf16(w2, s2).transpose(1, 2))[e, t].float().view(m, 9, -1)
    out.copy_((y * route_weights.view(m, 9, 1)).sum(dim=1).to(out.dtype))


def fallback_moe_act_quant(gate_up, out, scales):
    q, s = _routing.act_quant_torch(gate_up)
    out.copy_(q.view(torch.uint8) if out.dtype == torch.uint8 else q)
    scales.copy_(s)


def fallback_moe_block(hidden, router_weight, shared_gate_weight, w13, s13, w2, s2, ids, route_weights, gate_up, act, act_scales, out):
    _routing.router_torch(hidden, router_weight, ids, route_weights)
    _routing.shared_gate_torch(hidden, shared_gate_weight, ids, route_weights)
    fallback_moe_gate_up(hidden, ids, w13, s13, gate_up)
    fallback_moe_act_quant(gate_up, act, act_scales)
    fallback_moe_down(act, act_scales, ids, route_weights, w2, s2, out)


# ---- the custom ops ------------------------------------------------------------------------------------

def _op(name, mutates):
    """torch.library.custom_op("netra::<name>") whose fake implementation writes nothing (the op's
    results live in the mutated caller buffers)."""
    def wrap(fn):
        op = torch.library.custom_op(f"netra::{name}", mutates_args=mutates)(fn)
        op.register_fake(lambda *args, **kwargs: None)
        return op
    return wrap


@_op("argmax", ("out",))
def argmax(logits: torch.Tensor, out: torch.Tensor) -> None:
    h = _handles_for(logits)
    _run("argmax", lambda: h is not None and h.argmax(logits, out, fallback=False) is not None, lambda: fallback_argmax(logits, out),
         _explained(lambda: h.argmax.explain(logits, out)))


@_op("rms_norm", ("out",))
def rms_norm(x: torch.Tensor, weight: torch.Tensor, out: torch.Tensor, eps: float, zero_centred: bool) -> None:
    h = _handles_for(x)
    _run("rms_norm", lambda: h is not None and h.norm.rms_norm(x, weight, eps, zero_centred=zero_centred, out=out, fallback=False) is not None,
         lambda: fallback_norm("rms", x, None, None, weight, out, eps, zero_centred),
         _explained(lambda: h.norm.explain("rms", x, weight, eps, zero_centred=zero_centred, out=out)))


@_op("add_rms_norm", ("residual", "out"))
def add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, out: torch.Tensor, eps: float, zero_centred: bool) -> None:
    h = _handles_for(x)
    _run("add_rms_norm",
         lambda: h is not None and h.norm.add_rms_norm(x, residual, weight, eps, zero_centred=zero_centred, out=out, fallback=False) is not None,
         lambda: fallback_norm("add", x, residual, None, weight, out, eps, zero_centred),
         _explained(lambda: h.norm.explain("add", x, weight, eps, residual=residual, zero_centred=zero_centred, out=out)))


@_op("gated_rms_norm", ("out",))
def gated_rms_norm(o: torch.Tensor, z: torch.Tensor, weight: torch.Tensor, out: torch.Tensor, eps: float) -> None:
    h = _handles_for(o)
    _run("gated_rms_norm", lambda: h is not None and h.norm.gated_rms_norm(o, z, weight, eps, out=out, fallback=False) is not None,
         lambda: fallback_norm("gated", o, None, z, weight, out, eps, False),
         _explained(lambda: h.norm.explain("gated", o, weight, eps, gate=z, out=out)))


@_op("attention_gqa8", ("out",))
def attention_gqa8(q: torch.Tensor, k_buffer: torch.Tensor, v_buffer: torch.Tensor, qo_indptr: torch.Tensor, kv_indptr: torch.Tensor,
                   kv_indices: torch.Tensor, k_scale: torch.Tensor, v_scale: torch.Tensor, out: torch.Tensor,
                   kv_last_page_len: Optional[torch.Tensor], phase: str, tokens_per_request: int, page_size: int, softmax_scale: float,
                   kv_table: Optional[torch.Tensor] = None, kv_lens: Optional[torch.Tensor] = None) -> None:
    """kv_table / kv_lens (optional, page size 1): the same positions as the engine's dense slot
    table, read only by the torch fallback (capturable with them)."""
    h = _handles_for(q)
    args = (q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, k_scale, v_scale)
    kw = dict(phase=phase, tokens_per_request=tokens_per_request, page_size=page_size, kv_last_page_len=kv_last_page_len,
              softmax_scale=softmax_scale, out=out)
    _run("attention_gqa8", lambda: h is not None and h.attention(*args, **kw, fallback=False) is not None,
         lambda: fallback_attention_gqa8(*args, out, kv_last_page_len, tokens_per_request, page_size, softmax_scale, kv_table, kv_lens),
         _explained(lambda: h.attention.explain(*args, **kw)))


@_op("gdn_conv", ("y", "state", "windows"))
def gdn_conv(x: torch.Tensor, weight: torch.Tensor, y: torch.Tensor, slots: torch.Tensor, state: torch.Tensor,
             windows: Optional[torch.Tensor]) -> None:
    h = _handles_for(x)
    _run("gdn_conv", lambda: h is not None and h.gdn.conv(x, weight, y, slots, state, windows, fallback=False) is not None,
         lambda: fallback_gdn_conv(x, weight, y, slots, state, windows))


@_op("gdn_precompute", ("q", "k", "decay", "beta"))
def gdn_precompute(y: torch.Tensor, a: torch.Tensor, b: torch.Tensor, a_log: torch.Tensor, dt_bias: torch.Tensor, q: torch.Tensor,
                   k: torch.Tensor, decay: torch.Tensor, beta: torch.Tensor) -> None:
    h = _handles_for(y)
    _run("gdn_precompute", lambda: h is not None and h.gdn.precompute(y, a, b, a_log, dt_bias, q, k, decay, beta, fallback=False) is not None,
         lambda: fallback_gdn_precompute(y, a, b, a_log, dt_bias, q, k, decay, beta))


@_op("gdn_verify", ("out",))
def gdn_verify(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, decay: torch.Tensor, beta: torch.Tensor, state: torch.Tensor,
               slots: torch.Tensor, out: torch.Tensor) -> None:
    h = _handles_for(q)
    _run("gdn_verify", lambda: h is not None and h.gdn.verify(q, k, v, decay, beta, state, slots, out, fallback=False) is not None,
         lambda: fallback_gdn_recurrent(q, k, v, decay, beta, state, slots, out, commit=False))


@_op("gdn_m16", ("state", "out"))
def gdn_m16(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, decay: torch.Tensor, beta: torch.Tensor, state: torch.Tensor,
            slots: torch.Tensor, out: torch.Tensor) -> None:
    """The committed core (outputs and the state after the request's tokens): M16 (one request of 16
    tokens) and the decode step (B 1..128 requests of one token, contracts/gdn/decode.hpp); netra
    reads the token count from the tensors (q rows / slots)."""
    h = _handles_for(q)
    _run("gdn_m16", lambda: h is not None and h.gdn.m16(q, k, v, decay, beta, state, slots, out, fallback=False) is not None,
         lambda: fallback_gdn_recurrent(q, k, v, decay, beta, state, slots, out, commit=True))


def _replay_explain(h, *tensors):
    return explained(_gdn_lib().netra_gdn_replay_explain, h.gdn._handle, *_tensor.Tensors(10).fill(*tensors))


@_op("gdn_replay", ("state", "conv_state"))
def gdn_replay(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, decay: torch.Tensor, beta: torch.Tensor, state: torch.Tensor,
               slots: torch.Tensor, accepted: torch.Tensor, conv_windows: torch.Tensor, conv_state: torch.Tensor) -> None:
    h = _handles_for(q)
    t = (q, k, v, decay, beta, state, slots, accepted, conv_windows, conv_state)
    _run("gdn_replay", lambda: h is not None and h.gdn.replay(*t, fallback=False) is not None, lambda: fallback_gdn_replay(*t),
         _explained(lambda: _replay_explain(h, *t)))


@_op("moe_act_quant", ("out", "scales"))
def moe_act_quant(gate_up: torch.Tensor, out: torch.Tensor, scales: torch.Tensor) -> None:
    h = _handles_for(gate_up)
    _run("moe_act_quant", lambda: h is not None and h.routing.act_quant(gate_up, out, scales, fallback=False) is not None,
         lambda: fallback_moe_act_quant(gate_up, out, scales), _explained(lambda: h.routing.explain_act_quant(gate_up, out, scales)))


def _routing_op(name, run_torch):
    """moe_router (slots 0..7) and moe_shared_gate (slot 8): one signature, the MoeRouting method
    and its explain named after the op."""
    method = name[len("moe_"):]

    def op(hidden: torch.Tensor, gate_weight: torch.Tensor, ids: torch.Tensor, weights: torch.Tensor) -> None:
        h = _handles_for(hidden)
        _run(name, lambda: h is not None and getattr(h.routing, method)(hidden, gate_weight, ids, weights, fallback=False) is not None,
             lambda: run_torch(hidden, gate_weight, ids, weights),
             _explained(lambda: getattr(h.routing, "explain_" + method)(hidden, gate_weight, ids, weights)))

    op.__name__ = op.__qualname__ = name
    return _op(name, ("ids", "weights"))(op)


moe_router = _routing_op("moe_router", _routing.router_torch)
moe_shared_gate = _routing_op("moe_shared_gate", _routing.shared_gate_torch)


@_op("moe_gate_up", ("out",))
def moe_gate_up(hidden: torch.Tensor, ids: torch.Tensor, w13: torch.Tensor, s13: torch.Tensor, out: torch.Tensor) -> None:
    h = _handles_for(hidden)
    _run("moe_gate_up", lambda: h is not None and h.experts.gate_up(hidden, ids, w13, s13, out) is not None,
         lambda: fallback_moe_gate_up(hidden, ids, w13, s13, out), _explained(lambda: h.experts.explain_gate_up(hidden, ids, w13, s13, out)))


@_op("moe_down", ("out",))
def moe_down(act: torch.Tensor, act_scales: Optional[torch.Tensor], ids: torch.Tensor, route_weights: torch.Tensor, w2: torch.Tensor,
             s2: torch.Tensor, out: torch.Tensor) -> None:
    h = _handles_for(act)
    _run("moe_down", lambda: h is not None and h.experts.down(act, ids, route_weights, w2, s2, act_scales, out) is not None,
         lambda: fallback_moe_down(act, act_scales, ids, route_weights, w2, s2, out),
         _explained(lambda: h.experts.explain_down(act, ids, route_weights, w2, s2, act_scales, out)))


@_op("moe_block", ("ids", "route_weights", "gate_up", "act", "act_scales", "out"))
def moe_block(hidden: torch.Tensor, router_weight: torch.Tensor, shared_gate_weight: torch.Tensor, w13: torch.Tensor, s13: torch.Tensor,
              w2: torch.Tensor, s2: torch.Tensor, ids: torch.Tensor, route_weights: torch.Tensor, gate_up: torch.Tensor, act: torch.Tensor,
              act_scales: torch.Tensor, out: torch.Tensor, fused: bool) -> None:
    h = _handles_for(hidden)
    weights = (hidden, router_weight, shared_gate_weight, w13, s13, w2, s2)
    buffers = {"ids": ids, "route_weights": route_weights, "gate_up": gate_up, "act": act, "act_scales": act_scales, "out": out}
    _run("moe_block", lambda: h is not None and h.block(*weights, buffers, fused=fused) is not None,
         lambda: fallback_moe_block(*weights, ids, route_weights, gate_up, act, act_scales, out),
         _explained(lambda: h.block.explain(*weights, buffers, fused=fused)))
