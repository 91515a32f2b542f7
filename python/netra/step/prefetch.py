"""Weights read into the L2 ahead of their GEMM, on a side stream of the step (the step's own code,
not a netra op): while the decode step's latency-bound kernels run (the GDN's conv / precompute /
recurrence, the attention, the MoE block at a few tokens), HBM has bandwidth to spare; a weight
matrix read then is an L2 hit for the dense GEMM that follows. The bytes floor is unchanged (each
weight still leaves HBM once a step); nothing any kernel computes changes (the touch kernel writes
only its own sink).

Step(prefetch=...) (netra.step.model): "outs" reads each layer's out projection while its mixer
runs; "all" also reads the first `NEXT_IN_BYTES` of the next layer's input projection while the
norms and the MoE block run (forked after the out projection, joined before the input projection:
beside cuBLAS calls, so no programmatic-launch edge between two netra kernels becomes a join). Off by default; bench/step.py measures each mode against off (AB/BA, graph replays)
and checks the outputs bitwise equal.

Mapping of the touch kernel: grid PROGRAMS (few SMs: the concurrent netra kernels keep the rest),
one program strides over the tensor's int32 words BLOCK * UNROLL at a time (UNROLL independent
loads in flight, marked evict_last), 4 warps; each program stores the sum of what it read to
sink[program] (so the loads are not dead code).
"""

import torch

try:  # the kernel is a module-level function: Triton resolves the names it uses in the module's globals
    import triton
    import triton.language as tl
except ImportError:  # no Triton: touch() raises and the step's prefetch mode is refused at construction
    triton = tl = None

MODES = ("outs", "all")
PROGRAMS, BLOCK, UNROLL = 64, 1024, 8
NEXT_IN_BYTES = 24 << 20  # of the next layer's input projection (the MoE's own experts share the 60 MB L2)

if triton is not None:
    @triton.jit
    def _touch(src, n, sink, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
        pid = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.int32)
        for start in range(pid * BLOCK * UNROLL, n, tl.num_programs(0) * BLOCK * UNROLL):
            for u in tl.static_range(UNROLL):
                offs = start + u * BLOCK + tl.arange(0, BLOCK)
                acc += tl.load(src + offs, mask=offs < n, other=0, eviction_policy="evict_last")
        tl.store(sink + pid, tl.sum(acc, axis=0))


def sink(device):
    """The touch kernel's output words (one a program), allocated before capture."""
    return torch.empty(PROGRAMS, dtype=torch.int32, device=device)


def touch(t, out, limit_bytes=None):
    """Reads the first min(bytes of t, limit_bytes) of the contiguous tensor t (a whole number of
    int32 words) on the current stream; writes only out [PROGRAMS] int32."""
    if triton is None:
        raise RuntimeError("Triton is not installed")
    if not t.is_contiguous() or (t.numel() * t.element_size()) % 4 or out.shape != (PROGRAMS,) or out.dtype != torch.int32:
        raise ValueError(f"prefetch: a contiguous tensor of whole int32 words and a [{PROGRAMS}] int32 sink, got {tuple(t.shape)} {t.dtype}")
    words = t.view(-1).view(torch.int32)
    n = words.numel() if limit_bytes is None else min(words.numel(), limit_bytes // 4)
    _touch[(PROGRAMS,)](words, n, out, BLOCK=BLOCK, UNROLL=UNROLL, num_warps=4)
