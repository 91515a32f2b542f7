// netra/dsl/newton_quotient.hpp — RN(x / d) from fma / mul / integer operations and selects only
// (no reciprocal instruction, no division slow path), for the SiLU's divisor d = 1 + exp_f32(-x):
// the shared core of the branch-free SiLUs (kernels/gdn/conv_silu.hpp, kernels/norm/silu_bf16.hpp),
// each of which adds its own spelling of the special cases (x = +-0 or +-Inf, d = +Inf, NaN); its
// reciprocal part, newton_reciprocal, also serves kernels/norm/group_reciprocal.hpp.
//
// For a finite nonzero x and a finite d >= 1:
//   d > 2^64 (x < -44): x and d scaled by 2^-64 (exact: both stay normal; the quotient is the same);
//   r ~ 1 / ds: the integer seed 0x7EF311C3 - bits(ds) (relative error < 1/8), four Newton steps
//     r = fma(r, fma(-ds, r, 1), r); for a significand of all ones (ds = 2^(k+1) (1 - 2^-24)) the
//     steps stop at a tie below RN(1 / ds) = 2^-(k+1) (1 + 2^-23), which is set from the exponent;
//   q0 = xs r, q = fma(fma(-ds, q0, xs), r, q0) (the remainder is exact: Markstein's correction).
// The all-ones select chooses between integers, so the compiler keeps a select, not a branch.
// instruction_seeded<Steps> replaces the integer seed and four steps by the target's reciprocal
// instruction (dsl/math.hpp approx_reciprocal_f32) and Steps steps r = fma(r, fma(-ds, r, 1), r)
// (seeded_reciprocal): the same quotient for every seed within 16 ulp of RN(1 / ds) (the
// instruction's bound is 1 ulp) with one step over the BF16 SiLU's divisors, with two over every
// FP32 divisor (one misses there); the all-ones select kept (from a seed off RN(1 / ds) the step
// stops below it there).
// Proof: tests/kernels/test_gdn_conv_silu.cpp (all 2^32 FP32 x, against div_rn) and
// tests/kernels/test_norm_silu.cpp (all 65,536 BF16 z), on the host, where the same operations are
// IEEE-exact as on both targets.
#pragma once
#include "netra/dsl/math.hpp"

namespace netra {

/// ~1 / d for a normal d: the integer seed 0x7EF311C3 - bits(d) and four Newton steps (within an ulp
/// of RN(1 / d); callers add the correction their proof needs: here the all-ones select, in
/// kernels/norm/group_reciprocal.hpp one more step).
NETRA_HOST_DEVICE float newton_reciprocal(float d) {
  float r = bit_cast<float>(0x7EF311C3u - bit_cast<u32>(d));
  NETRA_UNROLL
  for (u32 step = 0; step < 4; ++step) r = fma_rn(r, fma_rn(-d, r, 1.0f), r);
  return r;
}

/// ~1 / d for a normal d with a normal reciprocal: `seed` (within 16 ulp of RN(1 / d)) and one
/// Newton step.
NETRA_HOST_DEVICE float seeded_reciprocal(float d, float seed) { return fma_rn(seed, fma_rn(-d, seed, 1.0f), seed); }

/// Reciprocal strategies (newton_quotient's, the norm group quantizer's): the integer seed and four
/// steps, or the target's reciprocal instruction and Steps Newton steps (0: the seed alone, for a
/// caller that adds its own step).
struct integer_seeded {
  NETRA_HOST_DEVICE float operator()(float d) const { return newton_reciprocal(d); }
};
template <u32 Steps> struct instruction_seeded {
  NETRA_HOST_DEVICE float operator()(float d) const {
    if constexpr (Steps == 0) return approx_reciprocal_f32(d);
    else return seeded_reciprocal(d, instruction_seeded<Steps - 1>{}(d));
  }
};

/// RN(x / d) (the file comment). KeepZeroSign: the remainder taken with the opposite sign,
/// fma(fma(ds, q0, -xs), -r, q0) — the same quotient, and -0 / d = -0 (the other form gives +0
/// there, which its callers select away).
template <class Reciprocal = integer_seeded, bool KeepZeroSign = false>
NETRA_HOST_DEVICE float newton_quotient(float x, float d, Reciprocal reciprocal = {}) {
  const float scale = d > 0x1p64f ? 0x1p-64f : 1.0f;
  const float xs = mul_rn(x, scale), ds = mul_rn(d, scale);
  const u32 bits = bit_cast<u32>(ds);
  float r = reciprocal(ds);
  const u32 all_ones = ((253u - (bits >> 23)) << 23) | 1u;
  r = bit_cast<float>((bits & 0x007FFFFFu) == 0x007FFFFFu ? all_ones : bit_cast<u32>(r));
  const float q0 = mul_rn(xs, r);
  if constexpr (KeepZeroSign) return fma_rn(fma_rn(ds, q0, -xs), -r, q0);
  else return fma_rn(fma_rn(-ds, q0, xs), r, q0);
}

}  // namespace netra
