// netra/dsl/block_quant.hpp — the E4M3 block quantizer of netra's FP8 activations: one FP32 scale
// per group of BF16 values, shared by every kernel that writes that format (act_quant, the expert
// down kernel's quantized path, the normalization kernels' FP8 outputs).
//
// Rules (bitwise, the same on the host, gfx950 and sm90a), for a group of BF16 values y:
//   amax = max |y| over the group, NaN counting above +Inf (bf16x2_magnitude_max: integer max of
//          the BF16 magnitudes: finite < 0x7F80 (+Inf) < 0x7FFF (netra's only NaN after BF16))
//   finite amax > 0: scale = amax / 448 (IEEE), q = e4m3(y / scale) (IEEE quotient, then
//                    dsl/convert.hpp's E4M3: RNE, saturating to ±448, subnormals kept)
//   amax = 0:        scale = +0.0, q = e4m3(y) (signed zeros kept)
//   amax = +Inf:     scale = +Inf, every q of the group = 0x7F (NaN)
//   amax = NaN:      scale = 0x7FC00000, every q of the group = 0x7F
// act_quant_scale_fast and act_quant_divider reach those bits without a division per value (their
// equality with the IEEE forms is checked exhaustively in tests/kernels/test_moe_act_quant_model.cpp).
#pragma once
#include "netra/dsl/convert.hpp"
#include "netra/dsl/math.hpp"

namespace netra {

/// The larger of the two BF16 magnitudes (bits without sign) held in a packed word: as integers,
/// finite < 0x7F80 (+Inf) < 0x7FFF (netra's only NaN after the BF16 rounding).
NETRA_HOST_DEVICE constexpr u32 bf16x2_magnitude_max(u32 word) {
  const u32 lo = word & 0x7FFFu, hi = (word >> 16) & 0x7FFFu;
  return lo < hi ? hi : lo;
}

/// The FP32 scale of a group from its largest BF16 magnitude (the rules above; for an FP8 format
/// other than E4M3FN, dsl/fp8_format.hpp, its maximum for 448: E4M3FNUZ 240).
template <fp8_format Format = fp8::e4m3fn> NETRA_HOST_DEVICE float act_quant_scale(u32 magnitude) {
  if (magnitude > 0x7F80u) return bit_cast<float>(0x7FC00000u);
  return div_rn(f32_from_bf16(static_cast<u16>(magnitude)), fp8_max_v<Format>);
}
/// act_quant_scale without a division: amax / 448 by Markstein's correction on the constant
/// r = RN(1 / 448): q0 = amax r, rem = fma(-q0, 448, amax) (exact), scale = fma(rem, r, q0);
/// +Inf for amax = +Inf, 0x7FC00000 for a NaN magnitude. Equal to act_quant_scale for every one
/// of the 32,768 BF16 magnitudes (tests/kernels/test_moe_act_quant_model.cpp checks them all); one
/// mul and two fma instead of an IEEE division (MUFU.RCP, its Newton steps and range check) on the
/// kernel's critical path (amax -> scale -> divisor -> reciprocal -> quotients).
NETRA_HOST_DEVICE float act_quant_scale_fast(u32 magnitude) {
  const float amax = f32_from_bf16(static_cast<u16>(magnitude));
  const float r = bit_cast<float>(0x3B124925u);  // RN(1 / 448)
  const float q0 = mul_rn(amax, r);
  const float scale = fma_rn(fma_rn(-q0, 448.0f, amax), r, q0);
  const float non_finite = magnitude == 0x7F80u ? bit_cast<float>(0x7F800000u) : bit_cast<float>(0x7FC00000u);
  return magnitude >= 0x7F80u ? non_finite : scale;
}
/// What the group's values are divided by: the scale, 1 for an all-zero group (signed zeros
/// pass unchanged), NaN for a non-finite group (every value becomes E4M3 NaN).
NETRA_HOST_DEVICE float act_quant_divisor(u32 magnitude, float scale) {
  if (magnitude == 0) return 1.0f;
  if (magnitude >= 0x7F80u) return bit_cast<float>(0x7FC00000u);
  return scale;
}

/// The division of a group's values by its divisor, without a division per value.
/// Per group: m = 2^64 when amax < 2^-60 (else 1), d = divisor * m, rcp = 1 / d (IEEE).
/// Per value: y' = y * m, q0 = y' * rcp, r = fma(d, q0, -y') (the exact remainder, negated),
/// q = fma(r, -rcp, q0) (Markstein's correction). Scaling by m is exact and keeps every remainder
/// representable; the negated remainder keeps a zero y's sign (-0: r = +0, q = -0 + -0), which the
/// quotient of y by a positive divisor has. q equals the IEEE quotient y / divisor after the E4M3
/// rounding for every pair of BF16 values |y| <= amax, both signs (tests/kernels/test_moe_act_quant_model.cpp
/// checks all 1.07e9 of them); its FP32 bits can differ only for quotients below 2^-10, which E4M3
/// rounds to a signed zero. Scaled = false skips y * m: the caller's group has m = 1, or amax 0
/// (every y is ±0, and ±0 * m = ±0), so y' = y.
struct act_quant_divider {
  float m, d, rcp;
  NETRA_HOST_DEVICE static act_quant_divider make(u32 magnitude, float divisor) {
    const float m = magnitude < 0x2180u ? 0x1p64f : 1.0f;  // 0x2180: BF16 bits of 2^-60
    const float d = mul_rn(divisor, m);
    return {m, d, div_rn(1.0f, d)};
  }
  /// True for the groups whose m is not 1 and whose values are not all zero (0 < amax < 2^-60).
  NETRA_HOST_DEVICE static constexpr bool scales_values(u32 magnitude) { return magnitude - 1u < 0x2180u - 1u; }
  template <bool Scaled = true> NETRA_HOST_DEVICE float quotient(float y) const {
    const float ys = Scaled ? mul_rn(y, m) : y;
    const float q0 = mul_rn(ys, rcp);
    return fma_rn(fma_rn(d, q0, -ys), -rcp, q0);
  }
};

/// A group's scale and the divider of its values, from the group's largest BF16 magnitude.
struct e4m3_block_quantizer {
  float scale;
  act_quant_divider divider;
  NETRA_HOST_DEVICE static e4m3_block_quantizer of(u32 magnitude) {
    const float scale = act_quant_scale_fast(magnitude);
    return {scale, act_quant_divider::make(magnitude, act_quant_divisor(magnitude, scale))};
  }
};

}  // namespace netra
