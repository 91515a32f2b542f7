// netra/kernels/gdn/conv_silu.hpp — the conv update's SiLU, silu_f32(x) = x / (1 + exp_f32(-x)),
// with its division issued branch-free: the same bits as the IEEE division (div_rn) for every
// divisor that SiLU produces, from fma / mul / integer operations and selects only (no reciprocal
// instruction, no slow-path call), so the compiler can interleave the 8 channels' chains.
//
// quotient(x, d), d = 1 + exp_f32(-x) in [1, +Inf] or NaN (x NaN):
//   d > 2^64 (x < -44): x and d scaled by 2^-64 (exact: both stay normal; the quotient is the same);
//   r: seed 0x7EF311C3 - bits(ds) (relative error < 1/8), 4 Newton steps fma(r, fma(-ds, r, 1), r)
//     (the last from within an ulp: RN(1/ds), Markstein) except ds = 2^(k+1) (1 - 2^-24) (mantissa
//     all ones), where RN(1/ds) = 2^-(k+1) (1 + 2^-23) is set from the exponent;
//   q0 = xs r, q = fma(fma(-ds, q0, xs), r, q0) (the remainder is exact; RN(x / d) given RN(1/ds));
//   d = +Inf: x * 0 (+-0, NaN for infinite x); x = +-0 or +-Inf over a finite d: x.
// Proof: tests/kernels/test_gdn_conv_silu.cpp compares quotient with div_rn over all 2^32 FP32 x
// (the division's inputs are a function of x alone), on the host, where the same operations are
// IEEE-exact as on both targets.
#pragma once
#include "netra/dsl/math.hpp"

namespace netra::kernels::gdn_conv_silu {

NETRA_HOST_DEVICE float quotient(float x, float d) {
  const float s = d > 0x1p64f ? 0x1p-64f : 1.0f;
  const float xs = mul_rn(x, s), ds = mul_rn(d, s);
  const u32 bits = bit_cast<u32>(ds);
  float r = bit_cast<float>(0x7EF311C3u - bits);
  NETRA_UNROLL
  for (u32 i = 0; i < 4; ++i) r = fma_rn(r, fma_rn(-ds, r, 1.0f), r);
  r = (bits & 0x7FFFFFu) == 0x7FFFFFu ? bit_cast<float>(((253u - (bits >> 23)) << 23) | 1u) : r;
  const float q0 = mul_rn(xs, r);
  const float q = fma_rn(fma_rn(-ds, q0, xs), r, q0);
  const bool x_is_inf = (bit_cast<u32>(x) & 0x7FFFFFFFu) == 0x7F800000u;
  const float finite_d = x == 0.0f || x_is_inf ? x : q;
  return bit_cast<u32>(d) == 0x7F800000u ? mul_rn(x, 0.0f) : finite_d;
}

/// silu_f32(x) (dsl/math.hpp), bit for bit.
NETRA_HOST_DEVICE float silu(float x) { return quotient(x, add_rn(1.0f, exp_f32(-x))); }

}  // namespace netra::kernels::gdn_conv_silu
