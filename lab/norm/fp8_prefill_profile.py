"""Probe: the dispatched RMSNorm at 8192 tokens (norm_prefill, 2-1-0) with an E4M3 output and with a BF16 output, through
the Python package, for ncu (`-k netra_norm -s 2 -c 2`: each iteration launches the FP8 call, then the BF16 call). Not a
benchmark; issue 28's question: why the FP8 form runs ~5 us above its floor while the BF16 form sits on its own.

usage: NETRA_LIBRARY=build/libnetra.so PYTHONPATH=python python3 lab/norm/fp8_prefill_profile.py
"""
import torch

from netra.norm import Norm

x = torch.randn(8192, 2048, device="cuda").to(torch.bfloat16)
w = (torch.rand(2048, device="cuda") + 0.5).to(torch.bfloat16)
norm = Norm()
out8, scales = torch.empty(8192, 2048, device="cuda", dtype=torch.float8_e4m3fn), torch.empty(8192, 16, device="cuda")
out16 = torch.empty(8192, 2048, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    norm.rms_norm(x, w, 1e-6, fp8_out=True, out=out8, scales=scales, fallback=False)
    norm.rms_norm(x, w, 1e-6, out=out16, fallback=False)
torch.cuda.synchronize()
print("explain FP8:", norm.explain("rms", x, w, 1e-6, fp8_out=True, out=out8, scales=scales).splitlines()[-1])
