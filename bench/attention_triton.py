"""A Triton peer for netra's paged FP8-KV attention benches: split-KV ("flash decoding") attention that
reads SGLang's token-slot pools k_buffer / v_buffer [slots, Hkv, D] E4M3 in place through
kv_indptr / kv_indices (page size 1), with the FP32 per-tensor k_scale / v_scale read on the device,
for the three shapes the benches time (contracts/attention/gqa8_paged.hpp and gqa4_extend.hpp):
  - GQA8 decode and split verification (Hq 16, Hkv 2, D 256, Tq 1 or 12; token t of a request of
    length L sees positions p < L - Tq + t + 1);
  - GQA4 extend (Hq 32, Hkv 8, D 128, 12 extension tokens with their own BF16 K/V
    [q_tokens, Hkv, D] after an FP8 prefix of kv_indptr's length; token t sees the prefix and
    extension tokens 0..t).
Written for the bench (it is not a netra kernel and nothing in netra calls it).

Mapping. Stage one: grid (slices + extend, Hkv * row blocks, batch); a program owns BLOCK_M query
rows (row r = token r // group, head r % group of its KV head) and one slice of the request's
positions (slice s: [s c, (s + 1) c), c = ceil(L / slices) rounded up to BLOCK_N), walks it in
blocks of BLOCK_N positions (tl.dot of BF16 Q and the widened K, online softmax in base 2 with
FP32 l, BF16 P into tl.dot with the widened V) and writes (m, l, o) to a workspace; with extend the
program after the last slice takes the 12 extension positions. Stage two: grid (Hkv * Tq * group,
batch); a program merges one row's slices (the maximum first, then sum_s 2^(m_s - M) (l_s, o_s))
and writes bf16(o / l), 0 where the row sees no position. The benches check it against the
contract's bound (bench/attention.py, bench/attention_extend.py).
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl


def row_tiling(hq: int, hkv: int, tq: int) -> tuple[int, int]:
    """(BLOCK_M, row blocks) of a KV head's tq x (hq / hkv) query rows: 16 to 64 rows a program."""
    rows = tq * (hq // hkv)
    block_m = max(16, min(64, triton.next_power_of_2(rows)))
    return block_m, math.ceil(rows / block_m)


@triton.jit
def _stage_one(Q, K, V, KE, VE, QO, KV_INDPTR, KV_INDICES, SCALES, M_WS, L_WS, O_WS, sm_scale, slices,
               HQ: tl.constexpr, HKV: tl.constexpr, D: tl.constexpr, TQ: tl.constexpr, BLOCK_M: tl.constexpr, ROW_BLOCKS: tl.constexpr,
               BLOCK_N: tl.constexpr, EXTEND: tl.constexpr):
    GROUP: tl.constexpr = HQ // HKV
    s = tl.program_id(0)
    h = tl.program_id(1) // ROW_BLOCKS
    rb = tl.program_id(1) % ROW_BLOCKS
    b = tl.program_id(2)
    r = rb * BLOCK_M + tl.arange(0, BLOCK_M)
    real = r < TQ * GROUP
    t = r // GROUP
    d = tl.arange(0, D)
    q0 = tl.load(QO + b)
    q = tl.load(Q + ((q0 + t[:, None]) * HQ + h * GROUP + (r % GROUP)[:, None]) * D + d[None, :], mask=real[:, None], other=0.0)
    kv0 = tl.load(KV_INDPTR + b).to(tl.int64)
    n = tl.load(KV_INDPTR + b + 1).to(tl.int64) - kv0
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    if (s == slices) & (EXTEND == 1):  # the extension's BF16 K/V, causal: token t sees extension tokens 0..t
        e = tl.arange(0, 16)
        em = e < TQ
        at = ((q0 + e) * HKV + h) * D
        k = tl.load(KE + at[:, None] + d[None, :], mask=em[:, None], other=0.0)
        sc = tl.dot(q, tl.trans(k)) * (sm_scale * 1.4426950408889634)
        sc = tl.where(em[None, :] & (e[None, :] <= t[:, None]), sc, float("-inf"))
        m_i = tl.max(sc, 1)
        safe = tl.where(m_i == float("-inf"), 0.0, m_i)
        p = tl.exp2(sc - safe[:, None])
        l_i = tl.sum(p, 1)
        v = tl.load(VE + at[:, None] + d[None, :], mask=em[:, None], other=0.0)
        acc = tl.dot(p.to(tl.bfloat16), v)
    else:
        k_scale = tl.load(SCALES)
        v_scale = tl.load(SCALES + 1)
        qk_scale = k_scale * sm_scale * 1.4426950408889634
        chunk = tl.cdiv(tl.cdiv(n, slices), BLOCK_N) * BLOCK_N
        lo = s * chunk
        hi = tl.minimum(lo + chunk, n)
        end = n - (1 - EXTEND) * (TQ - 1 - t)  # extend: the whole prefix; GQA8 rows see p < L - Tq + t + 1
        for start in range(lo, hi, BLOCK_N):
            pos = start + tl.arange(0, BLOCK_N)
            pm = pos < hi
            ids = tl.load(KV_INDICES + kv0 + pos, mask=pm, other=0)
            at = (ids * HKV + h) * D
            k = tl.load(K + at[:, None] + d[None, :], mask=pm[:, None], other=0.0).to(tl.bfloat16)
            sc = tl.dot(q, tl.trans(k)) * qk_scale
            sc = tl.where(pm[None, :] & (pos[None, :] < end[:, None]), sc, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(sc, 1))
            safe = tl.where(m_new == float("-inf"), 0.0, m_new)
            alpha = tl.exp2(m_i - safe)
            p = tl.exp2(sc - safe[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(V + at[:, None] + d[None, :], mask=pm[:, None], other=0.0).to(tl.bfloat16)
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
            m_i = m_new
        acc = acc * v_scale
    unit = ((b * (slices + EXTEND) + s) * HKV + h) * (ROW_BLOCKS * BLOCK_M) + r
    tl.store(M_WS + unit, m_i)
    tl.store(L_WS + unit, l_i)
    tl.store(O_WS + unit[:, None] * D + d[None, :], acc)


@triton.jit
def _stage_two(OUT, QO, M_WS, L_WS, O_WS, parts, HQ: tl.constexpr, HKV: tl.constexpr, D: tl.constexpr, TQ: tl.constexpr,
               ROWS: tl.constexpr, SB: tl.constexpr):
    GROUP: tl.constexpr = HQ // HKV
    u = tl.program_id(0)
    b = tl.program_id(1)
    h = u // (TQ * GROUP)
    r = u % (TQ * GROUP)
    d = tl.arange(0, D)
    sl = tl.arange(0, SB)
    base = (b * parts * HKV + h) * ROWS + r  # slice j of the row is j * HKV * ROWS units further
    big = tl.full([SB], float("-inf"), tl.float32)
    for j0 in range(0, parts, SB):
        big = tl.maximum(big, tl.load(M_WS + base + (j0 + sl) * (HKV * ROWS), mask=j0 + sl < parts, other=float("-inf")))
    top = tl.max(big, 0)
    top = tl.where(top == float("-inf"), 0.0, top)
    l_sum = tl.zeros([SB], tl.float32)
    o_sum = tl.zeros([D], tl.float32)
    for j0 in range(0, parts, SB):
        jm = j0 + sl < parts
        at = base + (j0 + sl) * (HKV * ROWS)
        w = tl.exp2(tl.load(M_WS + at, mask=jm, other=float("-inf")) - top)
        l_sum += w * tl.load(L_WS + at, mask=jm, other=0.0)
        o_sum += tl.sum(w[:, None] * tl.load(O_WS + at[:, None] * D + d[None, :], mask=jm[:, None], other=0.0), 0)
    l_all = tl.sum(l_sum, 0)
    o = tl.where(l_all > 0, o_sum / l_all, 0.0)
    q0 = tl.load(QO + b)
    tl.store(OUT + ((q0 + r // GROUP) * HQ + h * GROUP + r % GROUP) * D + d, o.to(tl.bfloat16))


class PagedAttention:
    """One configuration of the peer for calls of `batch` requests (its workspace allocated here,
    before any graph capture): `slices` per request, BLOCK_N positions a block, `warps` and `stages`
    as Triton's launch options."""

    def __init__(self, hq: int, hkv: int, d: int, tq: int, sm_scale: float, extend: bool, batch: int, slices: int,
                 block_n: int = 64, warps: int = 4, stages: int = 2):
        self.hq, self.hkv, self.d, self.tq, self.sm_scale, self.extend = hq, hkv, d, tq, sm_scale, extend
        self.batch, self.slices, self.block_n, self.warps, self.stages = batch, slices, block_n, warps, stages
        self.block_m, self.row_blocks = row_tiling(hq, hkv, tq)
        self.parts = slices + (1 if extend else 0)
        units = batch * self.parts * hkv * self.row_blocks * self.block_m
        self.m = torch.empty(units, device="cuda", dtype=torch.float32)
        self.l = torch.empty_like(self.m)
        self.o = torch.empty(units * d, device="cuda", dtype=torch.float32)

    def describe(self) -> str:
        return f"{self.slices} slices, BLOCK_N {self.block_n}, BLOCK_M {self.block_m}, {self.warps} warps, {self.stages} stages"

    def __call__(self, q, k_pool, v_pool, qo, kv_indptr, kv_indices, scales, out, k_ext=None, v_ext=None) -> None:
        """k_pool / v_pool: the E4M3 pools (torch.float8_e4m3fn); k_ext / v_ext: the extension's BF16 K/V (extend only)."""
        ke = k_ext if self.extend else q
        ve = v_ext if self.extend else q
        _stage_one[(self.parts, self.hkv * self.row_blocks, self.batch)](
            q, k_pool, v_pool, ke, ve, qo, kv_indptr, kv_indices, scales, self.m, self.l, self.o, self.sm_scale, self.slices,
            HQ=self.hq, HKV=self.hkv, D=self.d, TQ=self.tq, BLOCK_M=self.block_m, ROW_BLOCKS=self.row_blocks, BLOCK_N=self.block_n,
            EXTEND=1 if self.extend else 0, num_warps=self.warps, num_stages=self.stages)
        _stage_two[(self.hkv * self.tq * (self.hq // self.hkv), self.batch)](
            out, qo, self.m, self.l, self.o, self.parts, HQ=self.hq, HKV=self.hkv, D=self.d, TQ=self.tq,
            ROWS=self.row_blocks * self.block_m, SB=16, num_warps=4)


def configurations(hq: int, hkv: int, d: int, tq: int, sm_scale: float, extend: bool, batch: int, processors: int) -> list[PagedAttention]:
    """The configurations the benches try (the fastest is the peer, then checked against the contract): slices so that the
    grid covers the processors about once, twice or four times, BLOCK_N 32 / 64, 4 or 8 warps."""
    programs = batch * hkv * row_tiling(hq, hkv, tq)[1]
    out = []
    for cover in (1, 2, 4):
        slices = max(1, min(256, math.ceil(cover * processors / programs)))
        if any(c.slices == slices for c in out):
            continue
        for block_n, warps in ((64, 4), (32, 4), (64, 8)):
            out.append(PagedAttention(hq, hkv, d, tq, sm_scale, extend, batch, slices, block_n, warps))
    return out


def checked_peer(configs: list[PagedAttention], sets: int, out_like: torch.Tensor, call_for, check) -> dict:
    """The bench's peer record: the fastest configuration (graph-replayed over a few calls of set 0;
    ones Triton cannot build are skipped), checked on set 0 by check(out of set 0) and timed over
    every set (bench/common.checked_peer). call_for(config, s, out) gives the call on set s."""
    from bench import common
    name = "Triton split-KV paged FP8 attention (bench/attention_triton.py: the E4M3 pool read in place, scales on the device)"
    outs = [torch.empty_like(out_like) for _ in range(sets)]
    best, best_us, failures = None, float("inf"), []
    for cfg in configs:
        try:
            call = call_for(cfg, 0, outs[0])
            call()
            torch.cuda.synchronize()
            us = common.bench_graph([call], reps=5, warmup=2)["median_us"]
        except Exception as ex:  # noqa: BLE001 (a configuration out of registers or shared memory)
            failures.append(f"{cfg.describe()}: {type(ex).__name__}")
            continue
        if us < best_us:
            best, best_us = cfg, us
    if best is None:
        return common.peer(name, None, exact=False, note="not run: no configuration built (" + "; ".join(failures)[:200] + ")")
    return common.checked_peer(name, lambda s: call_for(best, s, outs[s]), sets, lambda: check(outs[0]),
                               f"the fastest of {len(configs)} configurations in this run: {best.describe()}")
