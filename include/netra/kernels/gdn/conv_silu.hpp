// netra/kernels/gdn/conv_silu.hpp — the conv update's SiLU, silu_f32(x) = x / (1 + exp_f32(-x)),
// with its division issued branch-free: the same bits as the IEEE division (div_rn) for every
// divisor that SiLU produces, from fma / mul / integer operations and selects only (no reciprocal
// instruction, no slow-path call), so the compiler can interleave the 8 channels' chains.
//
// quotient(x, d), d = 1 + exp_f32(-x) in [1, +Inf] or NaN (x NaN): dsl/newton_quotient.hpp for a
// finite nonzero x over a finite d; d = +Inf: x * 0 (+-0, NaN for infinite x); x = +-0 or +-Inf
// over a finite d: x.
// Proof: tests/kernels/test_gdn_conv_silu.cpp compares quotient with div_rn over all 2^32 FP32 x
// (the division's inputs are a function of x alone), on the host, where the same operations are
// IEEE-exact as on both targets.
#pragma once
#include "netra/dsl/newton_quotient.hpp"

namespace netra::kernels::gdn_conv_silu {

NETRA_HOST_DEVICE float quotient(float x, float d) {
  const float q = newton_quotient(x, d);
  const bool x_is_inf = (bit_cast<u32>(x) & 0x7FFFFFFFu) == 0x7F800000u;
  const float finite_d = x == 0.0f || x_is_inf ? x : q;
  return bit_cast<u32>(d) == 0x7F800000u ? mul_rn(x, 0.0f) : finite_d;
}

/// silu_f32(x) (dsl/math.hpp), bit for bit.
NETRA_HOST_DEVICE float silu(float x) { return quotient(x, add_rn(1.0f, exp_f32(-x))); }

}  // namespace netra::kernels::gdn_conv_silu
