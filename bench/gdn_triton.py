"""A Triton peer for netra's GDN K0 verify bench (bench/gdn.py): the gated delta rule over T tokens
per request from a state pool row, outputs only (the pool is read, never written), with the torch
peer's inputs and semantics (python/netra/gdn.py recurrent_torch): per token t of request b and
value head hv (q / k head hv / 2), S = decay S; u = beta (v - S k); S = S + u k^T; o = S q (BF16).
Written for the bench (it is not a netra kernel and nothing in netra calls it).

Mapping: grid (batch, 32 value heads, 128 / BV); a program holds BV rows of its head's state
[V = 128, K = 128] in FP32 registers for all T tokens; Triton's autotuner picks BV and the warps
per shape on the first (eager) call, before any graph capture.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

H, HV, K, V = 16, 32, 128, 128


@triton.autotune(configs=[triton.Config({"BV": bv}, num_warps=w) for bv in (8, 16, 32) for w in (1, 2, 4)], key=["B", "STATE_BF16"])
@triton.jit
def _k0(Q, KK, Y, DECAY, BETA, STATE, OUT, B, T: tl.constexpr, STATE_BF16: tl.constexpr, BV: tl.constexpr):
    b = tl.program_id(0)
    hv = tl.program_id(1)
    vi = tl.program_id(2) * BV + tl.arange(0, BV)
    ki = tl.arange(0, 128)
    s = tl.load(STATE + ((b * 32 + hv) * 128 + vi[:, None]) * 128 + ki[None, :]).to(tl.float32)
    for t in range(T):
        row = b * T + t
        k = tl.load(KK + (row * 16 + hv // 2) * 128 + ki)
        q = tl.load(Q + (row * 16 + hv // 2) * 128 + ki)
        v = tl.load(Y + row * 8192 + 4096 + hv * 128 + vi).to(tl.float32)
        s = s * tl.load(DECAY + row * 32 + hv)
        u = tl.load(BETA + row * 32 + hv) * (v - tl.sum(s * k[None, :], 1))
        s = s + u[:, None] * k[None, :]
        tl.store(OUT + (row * 32 + hv) * 128 + vi, tl.sum(s * q[None, :], 1).to(tl.bfloat16))


def k0(q, k, y, decay, beta, state, T: int, accepted=None, outputs: bool = True):
    """recurrent_torch's K0 call (outputs of all T tokens, the state untouched): out [B T, 32, 128] BF16."""
    B = state.shape[0]
    out = torch.empty(B * T, HV, V, device=q.device, dtype=torch.bfloat16)
    _k0[lambda meta: (B, HV, V // meta["BV"])](q, k, y, decay, beta, state, out, B, T=T, STATE_BF16=1 if state.dtype == torch.bfloat16 else 0)
    return out


def best_config() -> str:
    """The configuration the autotuner chose last (for the record's note)."""
    c = _k0.best_config
    return f"BV {c.kwargs['BV']}, {c.num_warps} warps" if c is not None else "not tuned"
