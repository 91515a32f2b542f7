"""The framework path's weight-only FP8 dense projection for 1..128 rows (the step's own Triton
code, not a netra op): y [M, N8 + NT] BF16 = x [M, K] BF16 times the checkpoint's E4M3 weights
[N8, K] with their float32 128 x 128 block scales, read as they are stored (one byte a weight: half
of the BF16 path's bytes, no activation quantization, no padding of M = 1 to 16 rows in memory),
with an optional BF16 tail [NT, K] (the GDN's in_proj_ba) in the same launch.

Numerics: per 128-column block the products of the BF16 x and the E4M3 codes widened to BF16 (both
exact) are summed in FP32 by the tensor cores, multiplied by the block's scale (one rounding) and
added in FP32 over the K / 128 blocks; the tail's block sums likewise with no scale; one RNE to
BF16. Against the FP64 product of x and the dequantized weights: |y - ref| <= 2^-8 |ref| (the
output rounding) + 2^-14 E (the FP32 sums, the tensor cores' alignment of the products included;
E = |x| |w|^T), the bound `check` applies. Not bitwise the BF16 path's (that one rounds each
dequantized weight to BF16 first): model.Dense uses one of the two at a given row count for both
paths of the step.

Mapping: grid (ceil((N8 + NT) / BN)); one program owns BN output columns for every row (rows
padded to MP = the power of two >= M, at least 16, in registers, masked: nothing is read or
written past M), BN <= 128 and dividing N8, so a program's columns share one row of scale blocks;
the K loop takes UNROLL 128-column blocks an iteration (that many independent loads in flight,
num_stages deep). Few rows want narrow programs (many of them stream the weights), more rows wide
ones (each program re-reads the activations): CONFIGS per MP, measured by model.tune_dense.
"""

import torch

try:  # the kernel is a module-level function: Triton resolves the names it uses in the module's globals
    import triton
    import triton.language as tl
except ImportError:  # no Triton: available() is False and model.tune_dense never offers this path
    triton = tl = None

MAX_ROWS = 128
CONFIGS = {  # per MP (the padded rows); measured per group shape by model.tune_dense
    16: ({"MP": 16, "BN": 16, "UNROLL": 4, "num_stages": 4, "num_warps": 4}, {"MP": 16, "BN": 16, "UNROLL": 8, "num_stages": 3, "num_warps": 4},
         {"MP": 16, "BN": 32, "UNROLL": 4, "num_stages": 4, "num_warps": 4}),
    32: ({"MP": 32, "BN": 64, "UNROLL": 2, "num_stages": 3, "num_warps": 4},),
    64: ({"MP": 64, "BN": 64, "UNROLL": 2, "num_stages": 3, "num_warps": 4}, {"MP": 64, "BN": 128, "UNROLL": 1, "num_stages": 4, "num_warps": 4}),
    128: ({"MP": 128, "BN": 64, "UNROLL": 2, "num_stages": 3, "num_warps": 4}, {"MP": 128, "BN": 128, "UNROLL": 1, "num_stages": 3, "num_warps": 8}),
}
_config = {}  # {(N8, NT, K, MP): the chosen config}


def rows_tile(m: int) -> int:
    """MP for m rows: the power of two >= m, at least 16 (the tensor cores' smallest M)."""
    return max(16, 1 << (m - 1).bit_length())


def configs_for(m: int):
    return CONFIGS[rows_tile(m)] if 1 <= m <= MAX_ROWS else ()


if triton is not None:
    @triton.jit
    def _block_sums(acc, xp, x_ok, wp, w_ok, sp, K, UNROLL: tl.constexpr, SCALED: tl.constexpr):
        """acc + sum over the K / 128 column blocks of x_block @ w_block^T (times the block's scale
        sp[block] when SCALED: E4M3 codes; else BF16 rows, masked by w_ok)."""
        for kb in range(0, K // 128, UNROLL):
            for u in tl.static_range(UNROLL):
                xt = tl.load(xp + (kb + u) * 128, mask=x_ok, other=0.0)
                if SCALED:
                    part = tl.dot(xt, tl.trans(tl.load(wp + (kb + u) * 128).to(tl.bfloat16))) * tl.load(sp + kb + u)
                else:
                    part = tl.dot(xt, tl.trans(tl.load(wp + (kb + u) * 128, mask=w_ok, other=0.0)))
                acc += part
        return acc

    @triton.jit
    def _w8_mm(x, x_row, wq, ws, tail, out, M, N8, NT, K,
               BN: tl.constexpr, UNROLL: tl.constexpr, MP: tl.constexpr):
        n0 = tl.program_id(0) * BN
        rm = tl.arange(0, MP)
        rn = n0 + tl.arange(0, BN)
        rk = tl.arange(0, 128)
        x_ok = (rm[:, None] < M) & (rk[None, :] < 128)  # [MP, 128]: the live rows
        xp = x + rm[:, None] * x_row + rk[None, :]
        acc = tl.zeros((MP, BN), dtype=tl.float32)
        if n0 < N8:  # E4M3 rows: a program's BN rows share one row of scale blocks
            acc = _block_sums(acc, xp, x_ok, wq + rn[:, None].to(tl.int64) * K + rk[None, :], x_ok, ws + (n0 // 128) * (K // 128), K,
                              UNROLL, True)
        else:  # the BF16 tail's rows (masked past NT)
            rt = rn - N8
            acc = _block_sums(acc, xp, x_ok, tail + rt[:, None].to(tl.int64) * K + rk[None, :], (rt[:, None] < NT) & (rk[None, :] < 128),
                              ws, K, UNROLL, False)
        tl.store(out + rm[:, None] * (N8 + NT) + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N8 + NT))


def available() -> bool:
    return triton is not None


def admits(x, wq, config) -> bool:
    """Rows 1..128 (config's MP the rows' tile), rows contiguous, K a multiple of 128 UNROLL, N8 a
    multiple of 128 (BN divides 128)."""
    m, k = x.shape
    return (triton is not None and x.is_cuda and x.dtype == torch.bfloat16 and 1 <= m <= MAX_ROWS and config["MP"] == rows_tile(m)
            and x.stride(1) == 1 and wq.shape[1] == k and k % (128 * config["UNROLL"]) == 0 and wq.shape[0] % 128 == 0
            and 128 % config["BN"] == 0)


def mm(x, wq, ws, tail=None, config=None):
    """y [M, N8 + NT] BF16 (see the module text); config: one of configs_for(M) (default: the one
    chosen for this shape and MP by choose(), else the first)."""
    m, k = x.shape
    n8, nt = wq.shape[0], 0 if tail is None else tail.shape[0]
    c = config or _config.get((n8, nt, k, rows_tile(m))) or next(iter(configs_for(m)), None)
    if c is None or not admits(x, wq, c) or ws.shape != (n8 // 128, k // 128) or not ws.is_contiguous() or (tail is not None and tail.shape[1] != k):
        raise ValueError(f"dense_w8: x {tuple(x.shape)} / weights {tuple(wq.shape)} / scales {tuple(ws.shape)} outside the kernel's domain")
    out = torch.empty(m, n8 + nt, dtype=torch.bfloat16, device=x.device)
    _w8_mm[(triton.cdiv(n8 + nt, c["BN"]),)](x, x.stride(0), wq, ws, x if tail is None else tail, out, m, n8, nt, k,
                                            BN=c["BN"], UNROLL=c["UNROLL"], MP=c["MP"],
                                            num_stages=c["num_stages"], num_warps=c["num_warps"])
    return out


def choose(n8, nt, k, config):
    """Fixes the config mm() uses for this weight shape at config's MP (model.tune_dense's measured
    choice)."""
    _config[(n8, nt, k, config["MP"])] = config


def reference(x, wq, ws, tail=None):
    """(FP64 product of x and the dequantized weights (+ tail), FP64 E = |x| |w|^T)."""
    o, i = wq.shape
    w = (wq.double().view(o // 128, 128, i // 128, 128) * ws.double()[:, None, :, None]).view(o, i)
    if tail is not None:
        w = torch.cat([w, tail.double()])
    xd = x.double()
    return xd @ w.t(), xd.abs() @ w.abs().t()


def check(y, ref, mag) -> dict:
    """The bound of the module text: worst |y - ref| / (2^-8 |ref| + 2^-14 E + 2^-120) (<= 1 holds)."""
    r = (y.double() - ref).abs() / (2.0 ** -8 * ref.abs() + 2.0 ** -14 * mag + 2.0 ** -120)
    worst = float(r.max()) if r.numel() else 0.0
    return {"worst": worst, "ok": worst <= 1.0 and bool(torch.isfinite(y).all())}
