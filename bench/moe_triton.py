"""A Triton peer for netra's MoE bench (bench/moe_block.py): the block's two expert GEMMs as one
grouped, 128 x 128 block-scaled FP8 GEMM kernel over the route stream, in the form of a serving
engine's fused MoE (routes sorted by expert into blocks of BLOCK_M rows, one program per (block,
BLOCK_N columns), the K loop one 128-wide scale block at a time), with netra's route metadata
(ids [M, 9]) and, for down, netra's act_quant output as inputs:
  gate_up: the hidden states quantized per 128 (python/netra/moe_experts.py quantize_hidden, torch;
           made beforehand where the GEMM is timed alone), then out[r] = W13[ids[r]] x[r // 9] ->
           BF16 [9M, 1024];
  down:    y[r] = W2[ids[r]] act[r] (FP32), then out[t] = sum_j w[t, j] y[9t + j] (torch) -> BF16.
Two forms of the products: `tl.dot` on the E4M3 operands (Hopper's FP8 matrix instruction) or on
the operands widened to BF16 (exact) with FP32 accumulation. The sort into blocks (align) is made
once per layer before timing, as a serving engine makes it beside the router: these are the GEMMs
alone. Triton's autotuner picks BLOCK_N, the warps and the pipeline depth per shape (BLOCK_M: 16
up to 128 tokens, else 64); this is not a serving engine's tuned configuration table. Written for the bench (it is not a netra kernel and nothing in netra calls it).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

EXPERTS = 257


@triton.autotune(configs=[triton.Config({"BLOCK_N": bn}, num_warps=w, num_stages=s) for bn in (16, 32, 64, 128) for w in (4, 8) for s in (3, 4, 5)],
                 key=["N", "K", "ROUTES", "BLOCK_M", "FP8_DOT"])
@triton.jit
def _grouped(A, A_SCALE, W, W_SCALE, EXPERT_OF_BLOCK, ROUTE_OF_SLOT, OUT, ROUTES, N, K: tl.constexpr, TOKEN_ROWS: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FP8_DOT: tl.constexpr):
    e = tl.load(EXPERT_OF_BLOCK + tl.program_id(0))
    if e >= 0:
        slot = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        route = tl.load(ROUTE_OF_SLOT + slot)
        valid = route >= 0
        if TOKEN_ROWS:  # gate_up reads token rows, down route rows
            row = tl.where(valid, route // 9, 0)
        else:
            row = tl.where(valid, route, 0)
        n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        kk = tl.arange(0, 128)
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
        for kb in range(K // 128):
            a = tl.load(A + row[:, None] * K + kb * 128 + kk[None, :])
            w = tl.load(W + e.to(tl.int64) * N * K + n[:, None] * K + kb * 128 + kk[None, :])
            if FP8_DOT:
                part = tl.dot(a, tl.trans(w))
            else:
                part = tl.dot(a.to(tl.bfloat16), tl.trans(w.to(tl.bfloat16)))
            sa = tl.load(A_SCALE + row * (K // 128) + kb)
            sw = tl.load(W_SCALE + (e * (N // 128) + n // 128) * (K // 128) + kb)
            acc += part * sa[:, None] * sw[None, :]
        tl.store(OUT + route[:, None].to(tl.int64) * N + n[None, :], acc.to(OUT.dtype.element_ty), mask=valid[:, None])


class Routes:
    """The route stream sorted by expert into blocks of `block_m` slots (-1: padding), made once."""

    def __init__(self, ids: torch.Tensor, block_m: int):
        e = ids.reshape(-1).long()
        routes = e.numel()
        counts = torch.bincount(e, minlength=EXPERTS)
        padded = (counts + block_m - 1) // block_m * block_m
        starts = torch.cumsum(padded, 0) - padded
        order = torch.argsort(e, stable=True)
        rank = torch.arange(routes, device=e.device) - (torch.cumsum(counts, 0) - counts)[e[order]]
        self.blocks = -(-routes // block_m) + min(routes, EXPERTS)  # an upper bound: each expert used adds at most one partial block
        self.route_of_slot = torch.full((self.blocks * block_m,), -1, dtype=torch.int32, device=e.device)
        self.route_of_slot[starts[e[order]] + rank] = order.to(torch.int32)
        self.expert_of_block = torch.full((self.blocks,), -1, dtype=torch.int32, device=e.device)
        used = padded > 0
        for_blocks = torch.repeat_interleave(torch.arange(EXPERTS, device=e.device)[used], padded[used] // block_m)
        self.expert_of_block[:for_blocks.numel()] = for_blocks.to(torch.int32)
        self.routes, self.block_m = routes, block_m


def block_m_for(tokens: int) -> int:
    return 16 if tokens <= 128 else 64


def _launch(a, a_scale, w, w_scale, routes: Routes, out, token_rows: bool, fp8_dot: bool) -> None:
    n, k = w.shape[1], w.shape[2]
    _grouped[lambda meta: (routes.blocks, n // meta["BLOCK_N"])](
        a, a_scale, w, w_scale, routes.expert_of_block, routes.route_of_slot, out, routes.routes, n, K=k, TOKEN_ROWS=token_rows,
        BLOCK_M=routes.block_m, FP8_DOT=fp8_dot)


def gate_up(hidden, routes: Routes, w13, s13, fp8_dot: bool, quantized=None):
    """BF16 [9M, 1024]: the hidden states quantized per 128 (or `quantized` = quantize_hidden's
    (q, scales), made beforehand: the GEMM alone), then the grouped GEMM."""
    if quantized is None:
        from netra.moe_experts import quantize_hidden
        quantized = quantize_hidden(hidden)
    q, sx = quantized
    out = torch.empty(routes.routes, w13.shape[1], device=q.device, dtype=torch.bfloat16)
    _launch(q, sx, w13, s13, routes, out, True, fp8_dot)
    return out


def down(act, act_scales, routes: Routes, route_weights, w2, s2, fp8_dot: bool):
    """BF16 [M, 2048]: the grouped GEMM per route in FP32, then the routes weighted and summed."""
    y = torch.empty(routes.routes, w2.shape[1], device=act.device, dtype=torch.float32)
    _launch(act, act_scales, w2, s2, routes, y, False, fp8_dot)
    m = route_weights.shape[0]
    return (y.view(m, 9, -1) * route_weights.view(m, 9, 1)).sum(dim=1).to(torch.bfloat16)
