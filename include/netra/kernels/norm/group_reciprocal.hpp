// netra/kernels/norm/group_reciprocal.hpp — the E4M3 group's quantizer (dsl/block_quant.hpp's
// e4m3_block_quantizer::of) without its one IEEE division: the same scale, m, d and rcp bits for
// every BF16 magnitude (tests/kernels/test_norm_group_reciprocal.cpp checks all 32,768 of them on
// the host, whose operations are the device's: IEEE, one rounding each), so every E4M3 byte is
// the quantizer's. Used by the gated norm instances of contract field Chain bit 2.
//
// rcp = RN(1 / d): d = divisor * m is 1 * 2^64 (amax 0), a normal scale * m in [2^-80, 2^120]
// (finite amax > 0), or NaN (a non-finite group). dsl/newton_quotient.hpp's newton_reciprocal (the
// integer seed and four Newton steps), then one more step's correction
// fma(fma(-d, y, 1), y, y); a NaN d gives the NaN of 1 / NaN (every byte of the group 0x7F either way).
#pragma once
#include "netra/dsl/block_quant.hpp"
#include "netra/dsl/newton_quotient.hpp"

namespace netra::kernels {

NETRA_HOST_DEVICE e4m3_block_quantizer group_quantizer_without_division(u32 magnitude) {
  const float scale = act_quant_scale_fast(magnitude);
  const float divisor = act_quant_divisor(magnitude, scale);
  const float m = magnitude < 0x2180u ? 0x1p64f : 1.0f;  // act_quant_divider::make's scaling
  const float d = mul_rn(divisor, m);
  float y = newton_reciprocal(d);
  y = fma_rn(fma_rn(-d, y, 1.0f), y, y);
  return {scale, act_quant_divider{m, d, y}};
}

/// A group's quantizer: without the division (WithoutDivision) or e4m3_block_quantizer::of, the same bits.
template <bool WithoutDivision> NETRA_HOST_DEVICE e4m3_block_quantizer group_quantizer(u32 magnitude) {
  if constexpr (WithoutDivision) return group_quantizer_without_division(magnitude);
  else return e4m3_block_quantizer::of(magnitude);
}

}  // namespace netra::kernels
