// netra/kernels/norm/silu_bf16.hpp — SiLU of a BF16 value without an IEEE division: silu(z) of
// the gated norm's decode instances, equal to silu_f32(z) = z / (1 + exp_f32(-z)) bit for bit for
// every one of the 65,536 BF16 inputs (a NaN for a NaN; tests/kernels/test_norm_silu.cpp checks
// them all on the host, whose operations are the device's: IEEE, one rounding each).
//
// Why: div.rn.f32 on sm90a is a fast path, a range check and a branch to a slow path per
// division; a thread's 8 SiLUs sit on the decode kernel's critical path, and with plain fma / mul /
// select steps, no branch, the 8 can overlap.
//
// Steps, for b = 1 + exp_f32(-z) in [1, +Inf]:
//   1. b >= 2^64 (z <= -44): z and b both scaled by 2^-64 (exact; the quotient is unchanged and
//      normal: |z / b| >= 2^-123).
//   2. y ~ 1 / b: the integer seed 0x7EF311C3 - bits(b), three Newton steps y = fma(y, fma(-b, y, 1), y)
//      (not always RN(1 / b): 0.016 % of the b in [1, 2^64) differ); for a b whose significand
//      is all ones y = RN(1 / b) = 2^-(e + 1) (1 + 2^-23) from b's exponent e (there the steps stop
//      at a tie below it, and z = 2^-23's quotient, just above a midpoint, would round down).
//   3. q0 = z y, q = fma(fma(-b, q0, z), y, q0) (Markstein's correction with the remainder).
//   Specials by select: b = 2 (|z| < 2^-24, subnormals included) q = z * 0.5 (the quotient,
//   rounded once); z non-finite or b = +Inf (z < -88.72): q = z * (b = +Inf ? 0 : 1), i.e. -0
//   for finite z, NaN for z = -Inf, +Inf for z = +Inf, NaN for NaN.
#pragma once
#include "netra/dsl/math.hpp"

namespace netra::kernels {

/// silu_f32(z) for a BF16 value z (widened exactly to FP32), without a division.
NETRA_HOST_DEVICE float silu_bf16(float z) {
  const float inf = bit_cast<float>(0x7F800000u);
  const float b = add_rn(1.0f, exp_f32(-z));
  const float scale = b >= 0x1p64f ? 0x1p-64f : 1.0f;
  const float bs = mul_rn(b, scale), zs = mul_rn(z, scale);
  const u32 bits = bit_cast<u32>(bs);
  float y = bit_cast<float>(0x7EF311C3u - bits);
NETRA_UNROLL
  for (int step = 0; step < 3; ++step) y = fma_rn(y, fma_rn(-bs, y, 1.0f), y);
  y = (bits & 0x007FFFFFu) == 0x007FFFFFu ? bit_cast<float>(((253u << 23) - (bits & 0x7F800000u)) | 1u) : y;
  const float q0 = mul_rn(zs, y);
  const float q = fma_rn(fma_rn(-bs, q0, zs), y, q0);
  const bool regular = (bit_cast<u32>(z) & 0x7FFFFFFFu) < 0x7F800000u && b < inf;  // z finite, b finite (not NaN)
  const float special = mul_rn(z, b < inf ? 1.0f : 0.0f);
  return regular ? (b == 2.0f ? mul_rn(z, 0.5f) : q) : special;
}

}  // namespace netra::kernels
