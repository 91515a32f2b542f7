"""How exactly the H200's FP8 tensor-core path (wgmma, reached through cuBLASLt by torch._scaled_mm)
accumulates one scale block of the MoE expert GEMMs, measured against the bound the expert
contracts state for the matrix-unit sum P of a 128-K block (contracts/moe/expert_weights.hpp):

    |P_dev - P| <= 127 * 2^-23 * A,   A = sum_k |qa_k * qw_k|   (ratio bound 1.51e-5)

netra's sm90a expert kernels use mma.sync m16n8k32 E4M3 (lowered by ptxas to FP16 HMMA with FP32
accumulation); the issue asks whether native FP8 wgmma could replace it. This script answers the
precision half: it runs D = A(64 x 128) x B(128 x 16) in E4M3 with unit scales and FP32 output,
with and without cuBLAS's fast accumulation, on inputs built to expose alignment and truncation,
and reports max |D - P| / A per case (P exact in FP64: every product of two E4M3 values and every
partial sum of 128 of them is exact in binary64). With --block-sum (bench/fp8_block_sum.cu, built
by the CMake build as <build>/tests/fp8-block-sum) the same inputs also go through netra's own
instructions: the shipped mma.sync chain; FP8 wgmma with the block's four k32 instructions chained
in the tensor core (as cuBLASLt), in two chains of two, or each alone with the partial sums added
in FP32 registers (how often a wgmma kernel would have to promote to FP32 to stay within the
bound, if any promotion frequency does); and FP16 wgmma on the E4M3 values converted exactly (the
tensor-core path of mma.sync's emulation, on the warpgroup instruction). With --matrix-rate
(bench/fp8_matrix_rate.cu, <build>/tests/fp8-matrix-rate) it also records how many weight bytes per
second each of those paths can consume from shared memory over all SMs (the rate half).
Results: bench/results/evidence/fp8_accumulation_h200.json (evidence: the envelope of bench/schema.py).

usage: python3 bench/fp8_accumulation.py [--block-sum BIN] [--matrix-rate BIN] [--out PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench import common  # noqa: E402

BOUND = 127 * 2.0**-23
M, K, N = 64, 128, 16


def e4m3(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(-448, 448).to(torch.float8_e4m3fn)


def case_inputs(name: str, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A [M, K] and B [N, K] (row-major, K contiguous) in E4M3 on the GPU."""
    a = torch.randn(M, K, generator=g)
    b = torch.randn(N, K, generator=g)
    if name == "random":
        pass
    elif name == "one_large_term":  # one product of 448 * 448, the other 127 of magnitude ~2^-4 .. 2^-2
        a = a.abs() * 0.25 + 0.0625
        b = b.abs() * 0.25 + 0.0625
        a[:, 0] = 448.0
        b[:, 0] = 448.0
    elif name == "cancellation":  # +448*448 and -448*448 cancel; the small terms are the whole result
        a = a * 0.125
        b = b * 0.125
        a[:, 0], a[:, 64] = 448.0, 448.0
        b[:, 0], b[:, 64] = 448.0, -448.0
    elif name == "wide_exponents":  # magnitudes spread over the whole E4M3 range
        a = torch.sign(a) * torch.exp2(torch.randint(-9, 9, (M, K), generator=g).float())
        b = torch.sign(b) * torch.exp2(torch.randint(-9, 9, (N, K), generator=g).float())
    elif name == "small_after_large":  # large terms first in K, many small ones after them
        a = a.abs() * 2.0**-6
        b = b.abs() * 2.0**-6
        a[:, :4] = 448.0
        b[:, :4] = 240.0
    else:
        raise ValueError(name)
    return e4m3(a).cuda(), e4m3(b).cuda()


# bench/fp8_block_sum.cu's results, in its output order
BLOCK_SUM_WAYS = ["netra mma.sync m16n8k32 x4 (shipped)", "netra wgmma m64n16k32 x4 chained", "netra wgmma 2 chains of 2, FP32 add",
                  "netra wgmma each k32 alone, FP32 add", "netra wgmma m64n16k16 f16 x8 chained (E4M3 -> FP16 exact)"]


def scaled_mm(a8: torch.Tensor, b8: torch.Tensor, fast: bool) -> torch.Tensor:
    one = torch.ones((), device="cuda", dtype=torch.float32)
    return torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.float32, use_fast_accum=fast)


def block_sums(binary: str, a8: torch.Tensor, b8: torch.Tensor) -> list[torch.Tensor]:
    """D of every way of bench/fp8_block_sum.cu on these inputs."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.bin"), os.path.join(tmp, "out.bin")
        with open(src, "wb") as f:
            f.write(a8.view(torch.uint8).cpu().numpy().tobytes() + b8.view(torch.uint8).cpu().numpy().tobytes())
        subprocess.run([binary, src, dst], check=True)
        d = torch.frombuffer(bytearray(open(dst, "rb").read()), dtype=torch.float32).reshape(len(BLOCK_SUM_WAYS), M, N)
    return [d[i].cuda() for i in range(len(BLOCK_SUM_WAYS))]


def measure(d: torch.Tensor, a8: torch.Tensor, b8: torch.Tensor) -> dict:
    a64, b64 = a8.double(), b8.double()
    p = a64 @ b64.t()                # exact: products and 128-term sums of E4M3 values fit binary64
    mag = a64.abs() @ b64.abs().t()  # A
    err = (d.double() - p).abs()
    ratio = torch.where(mag > 0, err / mag, torch.zeros_like(err))
    return {"max_err_over_A": float(ratio.max()), "median_err_over_A": float(ratio.median()),
            "within_contract_bound": bool(float(ratio.max()) <= BOUND)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--block-sum", default=None, help="fp8-block-sum binary (bench/fp8_block_sum.cu)")
    p.add_argument("--matrix-rate", default=None, help="fp8-matrix-rate binary (bench/fp8_matrix_rate.cu)")
    a = p.parse_args()
    g = torch.Generator().manual_seed(7)
    records = []
    for name in ["random", "one_large_term", "cancellation", "wide_exponents", "small_after_large"]:
        a8, b8 = case_inputs(name, g)
        results = [(f"torch._scaled_mm, fast accumulation {'on' if fast else 'off'}", scaled_mm(a8, b8, fast)) for fast in (False, True)]
        if a.block_sum:
            results += list(zip(BLOCK_SUM_WAYS, block_sums(a.block_sum, a8, b8)))
        for path, d in results:
            r = {"case": name, "path": path, **measure(d, a8, b8)}
            records.append(r)
            print(r)
    rates = []
    if a.matrix_rate:
        out = subprocess.run([a.matrix_rate], check=True, capture_output=True, text=True).stdout
        rates = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        for r in rates:
            print(r)
    path = a.out or "bench/results/evidence/fp8_accumulation_h200.json"
    common.write_family(path, "fp8_accumulation", records, None,
                        "one 128-K scale block through each matrix path; error of the block sum over the sum of |products|",
                        evidence=True, shape={"m": M, "k": K, "n": N}, contract_ratio_bound=BOUND,
                        peer="torch._scaled_mm (cuBLASLt FP8 GEMM, wgmma on sm_90) and netra's own instructions (bench/fp8_block_sum.cu), "
                             "unit scales, FP32 output",
                        matrix_rate=rates)


if __name__ == "__main__":
    main()
