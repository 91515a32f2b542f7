// netra/kernels/norm/group_reciprocal.hpp — the E4M3 group's quantizer (dsl/block_quant.hpp's
// e4m3_block_quantizer::of) without its one IEEE division: the same scale, m, d and rcp bits for
// every BF16 magnitude (tests/kernels/test_norm_group_reciprocal.cpp checks all 32,768 of them on
// the host, whose operations are the device's: IEEE, one rounding each), so every E4M3 byte is
// the quantizer's. Used by the gated norm instances of contract field Chain bit 2.
//
// rcp = RN(1 / d): d = divisor * m is 1 * 2^64 (amax 0), a normal scale * m in [2^-80, 2^120]
// (finite amax > 0), or NaN (a non-finite group). dsl/newton_quotient.hpp's newton_reciprocal (the
// integer seed and four Newton steps) or, Chain bit 16, the target's reciprocal instruction alone
// (dsl/math.hpp approx_reciprocal_f32), then one more step's correction fma(fma(-d, y, 1), y, y);
// a NaN d gives the NaN of 1 / NaN (every byte of the group 0x7F either way). From the
// instruction: the same bits for every seed within 16 ulp of RN(1 / d) (its bound is 1 ulp;
// tests/kernels/test_norm_group_reciprocal.cpp checks each seed of that window for every magnitude).
#pragma once
#include "netra/dsl/block_quant.hpp"
#include "netra/dsl/newton_quotient.hpp"

namespace netra::kernels {

template <class Reciprocal = integer_seeded>
NETRA_HOST_DEVICE e4m3_block_quantizer group_quantizer_without_division(u32 magnitude, Reciprocal reciprocal = {}) {
  const float scale = act_quant_scale_fast(magnitude);
  const float divisor = act_quant_divisor(magnitude, scale);
  const float m = magnitude < 0x2180u ? 0x1p64f : 1.0f;  // act_quant_divider::make's scaling
  const float d = mul_rn(divisor, m);
  float y = reciprocal(d);
  y = fma_rn(fma_rn(-d, y, 1.0f), y, y);
  return {scale, act_quant_divider{m, d, y}};
}

/// A group's quantizer as contract field Chain spells it: bit 2 without the division (bit 16: from
/// the target's reciprocal instruction), else e4m3_block_quantizer::of; the same bits.
template <u32 Chain> NETRA_HOST_DEVICE e4m3_block_quantizer group_quantizer(u32 magnitude) {
  if constexpr ((Chain & 2) == 0) return e4m3_block_quantizer::of(magnitude);
  else if constexpr ((Chain & 16) != 0) return group_quantizer_without_division(magnitude, instruction_seeded<0>{});
  else return group_quantizer_without_division(magnitude);
}

}  // namespace netra::kernels
