// netra/kernels/norm/silu_bf16.hpp — SiLU of a BF16 value without an IEEE division: silu(z) of
// the gated norm instances of contract field Chain bit 1, equal to silu_f32(z) = z / (1 +
// exp_f32(-z)) bit for bit for every one of the 65,536 BF16 inputs (a NaN for a NaN;
// tests/kernels/test_norm_silu.cpp checks them all on the host, whose operations are the
// device's: IEEE, one rounding each).
//
// Why: div.rn.f32 on sm90a is a fast path, a range check and a branch to a slow path per
// division; a thread's 8 SiLUs sit on the decode kernel's critical path, and with plain fma / mul /
// select steps, no branch, the 8 can overlap.
//
// Steps, for b = 1 + exp_f32(-z) in [1, +Inf]: dsl/newton_quotient.hpp for a finite nonzero z.
//   Specials by select: z = ±0 or ±Inf over a finite b: z; b = +Inf (z < -88.72, z = -Inf, NaN):
//   z's signed zero, NaN for z = -Inf or NaN.
#pragma once
#include "netra/dsl/newton_quotient.hpp"

namespace netra::kernels {

/// silu_f32(z) for a BF16 value z (widened exactly to FP32), without a division. Every select
/// chooses between values already computed by integer operations, so the compiler keeps selects
/// (an fma / mul inline-asm arm would be sunk into a branch: PTX 28 branches, measured slower).
NETRA_HOST_DEVICE float silu_bf16(float z) {
  const float b = add_rn(1.0f, exp_f32(-z));
  const float q = newton_quotient(z, b);
  const u32 zb = bit_cast<u32>(z), magnitude = zb & 0x7FFFFFFFu;
  const u32 finite_b = magnitude == 0 || magnitude == 0x7F800000u ? zb : bit_cast<u32>(q);  // z = ±0, ±Inf: z
  const u32 infinite_b = magnitude >= 0x7F800000u ? 0x7FC00000u : (zb & 0x80000000u);     // z / +Inf: ±0, NaN
  return bit_cast<float>(bit_cast<u32>(b) == 0x7F800000u ? infinite_b : finite_b);
}

/// The gated norm's silu(z): silu_bf16 (WithoutDivision) or silu_f32, the same bits.
template <bool WithoutDivision> NETRA_HOST_DEVICE float gated_silu(float z) {
  if constexpr (WithoutDivision) return silu_bf16(z);
  else return silu_f32(z);
}

}  // namespace netra::kernels
