"""The framework path's one-row BF16 projection as a Triton GEMV (the step's own code, not a netra
op): y [1, N] = x [1, K] W^T, W [N, K] BF16 rows contiguous, for the dense forms "gemv_bn4" and
"gemv_bn8" (netra.step.plan.BF16_FORMS) that model.tune_dense measures against cuBLAS at M = 1.

Mapping: grid (ceil(N / BN)); one program owns BN output columns and reads their BN weight rows
whole, BK columns at a time (the K / BK chunks unrolled: every load of a program is independent of
the others, so they are all in flight together), 4 warps. No tensor cores: each BF16 x BF16 product
is exact in FP32, accumulated per (row, column lane) across the chunks, then the BK lanes summed;
one RNE to BF16. Any summation order of the K exact products is within gamma_{K-1} E of the exact
sum (E = |x| |W|^T), so the output satisfies plan.dense_bf16_bound like every cuBLAS form.
"""

import torch

try:  # the kernel is a module-level function: Triton resolves the names it uses in the module's globals
    import triton
    import triton.language as tl
except ImportError:  # no Triton: mm() raises and the tune records the form as not available
    triton = tl = None

CONFIGS = {"gemv_bn4": {"BN": 4, "BK": 1024}, "gemv_bn8": {"BN": 8, "BK": 512}}

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


def mm(x, w, form):
    """y [1, N] BF16 = x [1, K] @ w [N, K]^T by the GEMV of `form` (a key of CONFIGS). Refused
    before launch (ValueError) outside its domain: one row, both BF16 and rows contiguous on one
    CUDA device, K a multiple of the form's BK."""
    if triton is None:
        raise RuntimeError("Triton is not installed")
    c = CONFIGS[form]
    m, k = x.shape
    if (m != 1 or x.dtype != torch.bfloat16 or w.dtype != torch.bfloat16 or w.shape[1] != k or x.stride(1) != 1
            or not w.is_contiguous() or k % c["BK"] or x.device != w.device or not x.is_cuda):
        raise ValueError(f"gemv {form}: x {tuple(x.shape)} {x.dtype} / w {tuple(w.shape)} {w.dtype} outside its domain "
                         f"(one row, BF16, rows contiguous, K a multiple of {c['BK']})")
    n = w.shape[0]
    out = torch.empty(1, n, dtype=torch.bfloat16, device=x.device)
    _gemv[(triton.cdiv(n, c["BN"]),)](x, w, out, n, K=k, BN=c["BN"], BK=c["BK"], num_warps=4)
    return out
