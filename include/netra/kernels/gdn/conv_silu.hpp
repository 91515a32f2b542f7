// netra/kernels/gdn/conv_silu.hpp — the conv update's SiLU, silu_f32(x) = x / (1 + exp_f32(-x)),
// with its division issued branch-free: the same bits as the IEEE division (div_rn) for every
// divisor that SiLU produces, from fma / mul / integer operations and selects only (no slow-path
// call), so the compiler can interleave the 8 channels' chains.
//
// quotient(x, d), d = 1 + exp_f32(-x) in [1, +Inf] or NaN (x NaN): dsl/newton_quotient.hpp for a
// finite nonzero x over a finite d, its reciprocal from the integer seed and four Newton steps
// (integer_seeded) or from the target's reciprocal instruction and two steps (two_steps_from_
// instruction: one step is not enough here — from seeds 1 ulp off RN(1 / ds) it misses RN for
// 31 divisors a binade); d = +Inf: x * 0 (+-0, NaN for infinite x); x = +-0 or +-Inf over a finite d: x.
// Proof: tests/kernels/test_gdn_conv_silu.cpp compares quotient with div_rn over all 2^32 FP32 x
// (the division's inputs are a function of x alone), on the host, where the same operations are
// IEEE-exact as on both targets; and for every scaled divisor ds in [1, 2^64] (every FP32 there;
// the all-ones significands excepted, where newton_quotient sets r from the exponent) and every
// seed within 16 ulp of RN(1 / ds), two steps give integer_seeded's reciprocal: the same quotient
// for every seed the instruction can return (PTX rcp.approx, v_rcp_f32: within 1 ulp).
//
// silu_lean(x) (contract field Silu lean): the same bits as silu_f32 with fewer selects. exp's
// argument is clamped, a = min(max(-x, -20), exp_high), so exp_f32_in_range (dsl/math.hpp: exp_f32
// without its range / NaN selects) is exact there and d = 1 + e^a is finite; for x > 20, 1 + e^-x
// rounds to 1 = 1 + e^-20, so the clamp changes no finite x's d. The quotient is newton_quotient's
// KeepZeroSign form (the remainder's sign flipped, q = fma(fma(ds, q0, -xs), -r, q0)): the same value for a
// nonzero x (RN is symmetric), and +-0 for x = +-0 by the arithmetic itself (no select). What is
// left: x > 20 -> x (only +Inf needs it: Inf - Inf in the remainder), x < -exp_high -> x * 0
// (there exp_f32(-x) = +Inf: -0, NaN for -Inf). A NaN x gives NaN whatever the clamp returns
// (q0 = xs r). Proof: test_gdn_conv_silu compares silu_lean with silu_f32 over all 2^32 x with
// both reciprocals (min / max are IEEE minNum / maxNum, exact on the host as on both targets).
#pragma once
#include "netra/dsl/newton_quotient.hpp"

namespace netra::kernels::gdn_conv_silu {

/// The instruction-seeded reciprocal this SiLU needs: the target's reciprocal instruction, two steps.
using two_steps_from_instruction = instruction_seeded<2>;

template <class Reciprocal = integer_seeded> NETRA_HOST_DEVICE float quotient(float x, float d, Reciprocal reciprocal = {}) {
  const float q = newton_quotient(x, d, reciprocal);
  const bool x_is_inf = (bit_cast<u32>(x) & 0x7FFFFFFFu) == 0x7F800000u;
  const float finite_d = x == 0.0f || x_is_inf ? x : q;
  return bit_cast<u32>(d) == 0x7F800000u ? mul_rn(x, 0.0f) : finite_d;
}

/// silu_f32(x) (dsl/math.hpp), bit for bit.
template <class Reciprocal = integer_seeded> NETRA_HOST_DEVICE float silu(float x, Reciprocal reciprocal = {}) {
  return quotient(x, add_rn(1.0f, exp_f32(-x)), reciprocal);
}

/// silu_f32(x), bit for bit, with fewer selects (above).
template <class Reciprocal = integer_seeded> NETRA_HOST_DEVICE float silu_lean(float x, Reciprocal reciprocal = {}) {
  using math_constants::exp_high;
  const float a = __builtin_fminf(__builtin_fmaxf(-x, -20.0f), exp_high);  // min.f32 / max.f32, v_min / v_max_f32
  const float q = newton_quotient<Reciprocal, true>(x, add_rn(1.0f, exp_f32_in_range(a)), reciprocal);
  const float large = x > 20.0f ? x : q;
  return x < -exp_high ? mul_rn(x, 0.0f) : large;
}

}  // namespace netra::kernels::gdn_conv_silu
