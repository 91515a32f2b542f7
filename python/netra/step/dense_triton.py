"""The framework path's BF16 projections as Triton kernels (the step's own code, not netra ops),
y [M, N] = x [M, K] W^T with W [N, K] BF16 rows contiguous: the dense forms "gemv_bn4" /
"gemv_bn8" (M = 1) and "split_k4" (2..128 rows, N <= 4096) of netra.step.plan.BF16_FORMS, which
model.tune_dense measures against cuBLAS per group and M before the step uses any of them.

Numerics (both kernels): every BF16 x BF16 product is exact in FP32 and the K of them are summed in
FP32 in a fixed order, so y is within gamma_{K-1} E of the exact product (E = |x| |W|^T) before its
one RNE to BF16 (plan.dense_bf16_bound; the GEMV's additions are IEEE FP32, split_k's inside an MMA
are the tensor cores', held to the bound by the tune's check); the same bits on every call.

gemv mapping: grid (ceil(N / BN)); one program owns BN output columns and reads their BN weight
rows whole, BK columns at a time (the K / BK chunks unrolled: every load of a program is
independent, all in flight together), accumulated per (row, column lane), the lanes summed last;
4 warps, no tensor cores.

split_k mapping: grid (N / BN, SPLIT); program (n, s) multiplies the rows (padded to BM in
registers, masked) by the BN weight rows of tile n over the K-slice s (tensor cores, FP32
accumulators), stores its FP32 partial to the call's workspace, then counts itself in flags[n]
(release / acquire at GPU scope after a CTA barrier); the last of the SPLIT programs of tile n sums
the SPLIT partials in slice order (fixed: the same bits whichever finishes last), writes the BF16
tile and resets flags[n] to 0 for the next call. One launch where cuBLAS takes a split-K kernel and
a separate reduce. flags persist per device (zeroed once, on the first call, which must be eager:
the step's warm-up call is).
"""

import torch

from netra.step.plan import FORM_DOMAIN

try:  # the kernels are module-level functions: Triton resolves the names they use in the module's globals
    import triton
    import triton.language as tl
except ImportError:  # no Triton: the forms raise and the tune records them as not available
    triton = tl = None

GEMV = {"gemv_bn4": {"BN": 4, "BK": 1024}, "gemv_bn8": {"BN": 8, "BK": 512}}
SPLIT_K = {"split_k4": {"BN": 64, "BK": 64, "SPLIT": 4}}  # rows and N: plan.FORM_DOMAIN
_flags = {}  # device -> int32 [max N / BN] zeros (each call leaves them zero)

if triton is not None:
    @triton.jit
    def _gemv(x, w, out, N, K: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        n = tl.program_id(0) * BN + tl.arange(0, BN)
        ok = n < N
        k = tl.arange(0, BK)
        rows = w + n.to(tl.int64)[:, None] * K + k[None, :]
        acc = tl.zeros((BN, BK), dtype=tl.float32)
        for k0 in tl.static_range(0, K, BK):
            acc += tl.load(rows + k0, mask=ok[:, None], other=0.0).to(tl.float32) * tl.load(x + k0 + k).to(tl.float32)[None, :]
        tl.store(out + n, tl.sum(acc, axis=1).to(tl.bfloat16), mask=ok)

    @triton.jit
    def _split_k(x, x_row, w, out, part, flags, M, N, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 SPLIT: tl.constexpr):
        pn = tl.program_id(0)
        ps = tl.program_id(1)
        tiles = tl.num_programs(0)
        rm = tl.arange(0, BM)
        cn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        KS = K // SPLIT
        live = rm[:, None] < M
        xp = x + rm[:, None] * x_row + (ps * KS + rk)[None, :]
        wp = w + (pn * BN + cn).to(tl.int64)[:, None] * K + (ps * KS + rk)[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, KS, BK):
            acc += tl.dot(tl.load(xp + k0, mask=live, other=0.0), tl.trans(tl.load(wp + k0)))
        tile = (rm[:, None] * BN + cn[None, :])
        tl.store(part + (ps * tiles + pn) * (BM * BN) + tile, acc)
        tl.debug_barrier()
        if tl.atomic_add(flags + pn, 1, sem="acq_rel", scope="gpu") == SPLIT - 1:
            total = tl.zeros((BM, BN), dtype=tl.float32)
            for s in tl.static_range(SPLIT):
                total += tl.load(part + (s * tiles + pn) * (BM * BN) + tile, cache_modifier=".cg")
            tl.store(out + rm[:, None] * N + (pn * BN + cn)[None, :], total.to(tl.bfloat16), mask=live)
            tl.atomic_xchg(flags + pn, 0, sem="relaxed", scope="gpu")


def _need_triton():
    if triton is None:
        raise RuntimeError("Triton is not installed")


def _refuse(form, x, w, why):
    return ValueError(f"{form}: x {tuple(x.shape)} {x.dtype} / w {tuple(w.shape)} {w.dtype} outside its domain ({why})")


def gemv(x, w, form):
    """y [1, N] BF16 by the GEMV of `form` (a key of GEMV). Refused before launch (ValueError)
    outside its domain: one row, both BF16 and rows contiguous on one CUDA device, K a multiple of BK."""
    _need_triton()
    c = GEMV[form]
    m, k = x.shape
    if (m != 1 or x.dtype != torch.bfloat16 or w.dtype != torch.bfloat16 or w.shape[1] != k or x.stride(1) != 1
            or not w.is_contiguous() or k % c["BK"] or x.device != w.device or not x.is_cuda):
        raise _refuse(form, x, w, f"one row, BF16, rows contiguous, K a multiple of {c['BK']}")
    n = w.shape[0]
    out = torch.empty(1, n, dtype=torch.bfloat16, device=x.device)
    _gemv[(triton.cdiv(n, c["BN"]),)](x, w, out, n, K=k, BN=c["BN"], BK=c["BK"], num_warps=4)
    return out


def split_k(x, w, form):
    """y [M, N] BF16 by the split-K GEMM of `form` (a key of SPLIT_K). Refused before launch
    (ValueError) outside its domain: the rows and N of plan.FORM_DOMAIN, N a multiple of BN, K a
    multiple of SPLIT BK, both BF16, rows contiguous, one CUDA device."""
    _need_triton()
    c, (lo, hi, max_n) = SPLIT_K[form], FORM_DOMAIN[form]
    m, k = x.shape
    n = w.shape[0]
    if (not lo <= m <= hi or n % c["BN"] or n > max_n or k % (c["SPLIT"] * c["BK"]) or x.dtype != torch.bfloat16
            or w.dtype != torch.bfloat16 or w.shape[1] != k or x.stride(1) != 1 or not w.is_contiguous() or x.device != w.device
            or not x.is_cuda):
        raise _refuse(form, x, w, f"{lo}..{hi} rows, N a multiple of {c['BN']} up to {max_n}, "
                                  f"K a multiple of {c['SPLIT'] * c['BK']}, BF16, rows contiguous")
    bm = max(16, 1 << (m - 1).bit_length())
    tiles = n // c["BN"]
    if x.device not in _flags:
        _flags[x.device] = torch.zeros(max(FORM_DOMAIN[f][2] // SPLIT_K[f]["BN"] for f in SPLIT_K), dtype=torch.int32, device=x.device)
    part = torch.empty(c["SPLIT"] * tiles * bm * c["BN"], dtype=torch.float32, device=x.device)
    out = torch.empty(m, n, dtype=torch.bfloat16, device=x.device)
    _split_k[(tiles, c["SPLIT"])](x, x.stride(0), w, out, part, _flags[x.device], m, n, K=k, BM=bm, BN=c["BN"], BK=c["BK"],
                                  SPLIT=c["SPLIT"], num_warps=4, num_stages=4)
    return out
