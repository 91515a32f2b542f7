"""The decode MoE expert projections and the whole decode MoE block of Qwen3.6-35B-A3B
(netra/c/moe_experts.h), for torch tensors on a CUDA device.

Shapes (contracts/moe/expert_{gate_up,down}.hpp; route r = t * 9 + s):
    hidden  bf16 [M, 2048]          ids int32 [M, 9]          route_weights float32 [M, 9]
    w13     float8_e4m3fn [257, 1024, 2048]   s13 float32 [257, 8, 16]
    w2      float8_e4m3fn [257, 2048, 512]    s2  float32 [257, 16, 4]
    gate_up out bf16 [9M, 1024]; act_quant out float8_e4m3fn [9M, 512] + float32 [9M, 4];
    down out bf16 [M, 2048]
netra runs on torch's current stream and may be captured into torch.cuda.CUDAGraph once the
handle exists. The torch functions at the end compute the same math (the contracts' quantization
and block scales) in float32 and serve as the reference path and the benchmark's torch peer.
"""
import ctypes

import torch

from netra import _tensor
from netra._handle import NativeHandle
from netra._library import check, declared_library, explained

E4M3_MAX = 448.0
BLOCK_UNFUSED, BLOCK_FUSED = 0, 1
_p, _t, _i32 = ctypes.c_void_p, _tensor.POINTER, ctypes.c_int
_text = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
_lib = declared_library({
    "netra_moe_experts_create": ([ctypes.POINTER(_p)], _i32),
    "netra_moe_experts_destroy": ([_p], None),
    "netra_moe_expert_gate_up": ([_p] + [_t] * 5 + [_p], _i32),
    "netra_moe_expert_down": ([_p] + [_t] * 7 + [_p], _i32),
    "netra_moe_expert_gate_up_explain": ([_p] + [_t] * 5 + _text, _i32),
    "netra_moe_expert_down_explain": ([_p] + [_t] * 7 + _text, _i32),
    "netra_moe_block_create": ([ctypes.POINTER(_p)], _i32),
    "netra_moe_block_destroy": ([_p], None),
    "netra_moe_block": ([_p] + [_t] * 13 + [_i32, _p], _i32),
    "netra_moe_block_explain": ([_p] + [_t] * 13 + [_i32] + _text, _i32),
})
_BLOCK_BUFFERS = ("ids", "route_weights", "gate_up", "act", "act_scales", "out")


class MoeExperts(NativeHandle):
    """gate_up and down on one CUDA device (create it before capturing a graph). Tensors go to
    libnetra as DLTensors filled from their metadata (netra/_tensor.py: no copy, allocated once per
    handle); the contracts check every one (dtype, shape, strides, alignment, device, and that the
    weights hold all 257 experts): a refused call raises NetraError and writes nothing."""

    def __init__(self, device=None):
        super().__init__("MoeExperts", _lib().netra_moe_experts_create, _lib().netra_moe_experts_destroy, device)
        self._gate_up, self._down = _tensor.Tensors(5), _tensor.Tensors(7)

    def gate_up(self, hidden, ids, w13, s13, out=None):
        """bf16 [9M, 1024]: route r's token row x W13[ids[r]] (hidden quantized per 128 inside)."""
        if out is None:
            out = torch.empty(9 * hidden.shape[0], 1024, dtype=torch.bfloat16, device=hidden.device)
        check(_lib().netra_moe_expert_gate_up(self._handle, *self._gate_up.fill(hidden, ids, w13, s13, out), self._stream()))
        return out

    def down(self, act, ids, route_weights, w2, s2, act_scales=None, out=None):
        """bf16 [M, 2048]: the weighted sum over each token's 9 routes of W2[ids[r]] x act[r].
        act: act_quant's float8_e4m3fn (or uint8) [9M, 512] with act_scales, or gate_up's bf16
        [9M, 1024] (act_quant fused; up to 4 tokens): its dtype picks the tactic."""
        if out is None:
            out = torch.empty(ids.shape[0], 2048, dtype=torch.bfloat16, device=act.device)
        check(_lib().netra_moe_expert_down(self._handle, *self._down.fill(act, act_scales, ids, route_weights, w2, s2, out), self._stream()))
        return out

    def explain_gate_up(self, hidden, ids, w13, s13, out):
        return explained(_lib().netra_moe_expert_gate_up_explain, self._handle, *_tensor.Tensors(5).fill(hidden, ids, w13, s13, out))

    def explain_down(self, act, ids, route_weights, w2, s2, act_scales, out):
        return explained(_lib().netra_moe_expert_down_explain, self._handle,
                         *_tensor.Tensors(7).fill(act, act_scales, ids, route_weights, w2, s2, out))


class MoeBlock(NativeHandle):
    """The whole MoE block (router -> shared gate -> gate_up -> [act_quant] -> down) for 1..768
    tokens on one CUDA device, each stage through its tactic list (17..768 tokens: the grouped
    experts); intermediates live in `buffers(tokens)` (allocate them once, before capture). Every
    stage is checked before any is launched."""

    def __init__(self, device=None):
        super().__init__("MoeBlock", _lib().netra_moe_block_create, _lib().netra_moe_block_destroy, device)
        self._tensors = _tensor.Tensors(13)

    def buffers(self, tokens, gate_up=None):
        """The call's intermediates and output. gate_up (BF16 [9M, 1024]): the decode path (1..16
        tokens) writes it; above 16 tokens it is optional (written when present), and by default
        (gate_up=None) left out there."""
        d = self.device
        with_gate_up = tokens <= 16 if gate_up is None else gate_up
        return {
            "ids": torch.empty(tokens, 9, dtype=torch.int32, device=d),
            "route_weights": torch.empty(tokens, 9, dtype=torch.float32, device=d),
            "gate_up": torch.empty(9 * tokens, 1024, dtype=torch.bfloat16, device=d) if with_gate_up else None,
            "act": torch.empty(9 * tokens, 512, dtype=torch.float8_e4m3fn, device=d),
            "act_scales": torch.empty(9 * tokens, 4, dtype=torch.float32, device=d),
            "out": torch.empty(tokens, 2048, dtype=torch.bfloat16, device=d),
        }

    def __call__(self, hidden, router_weight, shared_gate_weight, w13, s13, w2, s2, buffers, fused=False):
        b = buffers
        args = self._tensors.fill(hidden, router_weight, shared_gate_weight, w13, s13, w2, s2, *(b.get(k) for k in _BLOCK_BUFFERS))
        check(_lib().netra_moe_block(self._handle, *args, BLOCK_FUSED if fused else BLOCK_UNFUSED, self._stream()))
        return b["out"]

    def explain(self, hidden, router_weight, shared_gate_weight, w13, s13, w2, s2, buffers, fused=False):
        """Each stage's tactics and their decisions for this call, in launch order."""
        args = _tensor.Tensors(13).fill(hidden, router_weight, shared_gate_weight, w13, s13, w2, s2, *(buffers.get(k) for k in _BLOCK_BUFFERS))
        return explained(_lib().netra_moe_block_explain, self._handle, *args, BLOCK_FUSED if fused else BLOCK_UNFUSED)


# ---- the same math in torch (float32), graph-capturable --------------------------------------------

def to_e4m3(x):
    """netra's E4M3 conversion: RNE, finite values and +-Inf saturate to +-448, NaN stays NaN."""
    return torch.where(torch.isnan(x), x, x.clamp(-E4M3_MAX, E4M3_MAX)).to(torch.float8_e4m3fn)


def quantize_hidden(hidden):
    """The gate_up contract's per-128 quantization (moe::hidden_block_quant): q = e4m3(x * (448 /
    amax)), scale = amax / 448; a block with NaN/Inf is all NaN; a block with 448 / amax = +Inf is
    all zero. Returns (float8 [M, 2048], float32 scales [M, 16]).

    r and the scale are one IEEE division each, tensor by tensor, as the contract says: torch
    computes `448.0 / amax` as amax.reciprocal() * 448 and `amax / 448.0` as amax * (1 / 448)
    (two roundings), and the 1-ulp different r flips the rounding of values that sit on an E4M3
    tie (x / amax = 3/4, ...): about 4 % of randn blocks then quantize differently, which moved
    whole routes outside the comparison policy."""
    x = hidden.float().view(hidden.shape[0], 16, 128)
    amax = x.abs().amax(dim=-1, keepdim=True)
    nonfinite = ~torch.isfinite(x).all(dim=-1, keepdim=True)
    e4m3_max = torch.full_like(amax, E4M3_MAX)
    r = torch.div(e4m3_max, amax)
    q = to_e4m3(x * r)
    q = torch.where(torch.isinf(r), torch.zeros_like(q, dtype=torch.float32), q.float())
    q = torch.where(nonfinite, torch.full_like(q, float("nan")), q)
    return q.to(torch.float8_e4m3fn).view(hidden.shape[0], 2048), torch.div(amax, e4m3_max).squeeze(-1)


def gate_up_torch(hidden, ids, w13, s13):
    """bf16 [9M, 1024] with float32 arithmetic on dequantized operands (gathers W13 per route)."""
    m = hidden.shape[0]
    q, sx = quantize_hidden(hidden)
    e = ids.reshape(-1).long()
    t = torch.arange(9 * m, device=hidden.device) // 9
    x = (q.float().view(m, 16, 128) * sx.view(m, 16, 1)).view(m, 2048)[t]
    w = (w13[e].float().view(-1, 8, 128, 16, 128) * s13[e].view(-1, 8, 1, 16, 1)).view(-1, 1024, 2048)
    return torch.bmm(w, x.unsqueeze(-1)).squeeze(-1).to(torch.bfloat16)


def down_torch(act, act_scales, ids, route_weights, w2, s2):
    """bf16 [M, 2048] from act_quant's outputs, float32 arithmetic, routes summed by torch."""
    m = ids.shape[0]
    e = ids.reshape(-1).long()
    a = (act.float().view(-1, 4, 128) * act_scales.view(-1, 4, 1)).view(-1, 512)
    w = (w2[e].float().view(-1, 16, 128, 4, 128) * s2[e].view(-1, 16, 1, 4, 1)).view(-1, 2048, 512)
    y = torch.bmm(w, a.unsqueeze(-1)).squeeze(-1).view(m, 9, 2048)
    return (y * route_weights.view(m, 9, 1)).sum(dim=1).to(torch.bfloat16)
