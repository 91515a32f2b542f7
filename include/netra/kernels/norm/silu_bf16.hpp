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
// Steps, for b = 1 + exp_f32(-z) in [1, +Inf]: dsl/newton_quotient.hpp for a finite nonzero z
//   (its reciprocal from the integer seed, or from the target's reciprocal instruction: the
//   same bits for every seed within 16 ulp of RN(1 / b), tests/kernels/test_norm_silu.cpp).
//   Specials by select: z = ±0 or ±Inf over a finite b: z; b = +Inf (z < -88.72, z = -Inf, NaN):
//   z's signed zero, NaN for z = -Inf or NaN.
#pragma once
#include "netra/dsl/newton_quotient.hpp"
#include "netra/dsl/vector_types.hpp"

namespace netra::kernels {

/// silu_f32(z) for a BF16 value z (widened exactly to FP32) from its divisor b = silu_divisor_f32(z),
/// without a division; Reciprocal: newton_quotient's (the integer seed and four steps, or the
/// target's reciprocal instruction and one step). Every select chooses between values already
/// computed by integer operations, so the compiler keeps selects (an fma / mul inline-asm arm would
/// be sunk into a branch: PTX 28 branches, measured slower).
template <class Reciprocal = integer_seeded> NETRA_HOST_DEVICE float silu_bf16_of(float z, float b, Reciprocal reciprocal = {}) {
  const float q = newton_quotient(z, b, reciprocal);
  const u32 zb = bit_cast<u32>(z), magnitude = zb & 0x7FFFFFFFu;
  const u32 finite_b = magnitude == 0 || magnitude == 0x7F800000u ? zb : bit_cast<u32>(q);  // z = ±0, ±Inf: z
  const u32 infinite_b = magnitude >= 0x7F800000u ? 0x7FC00000u : (zb & 0x80000000u);     // z / +Inf: ±0, NaN
  return bit_cast<float>(bit_cast<u32>(b) == 0x7F800000u ? infinite_b : finite_b);
}
template <class Reciprocal = integer_seeded> NETRA_HOST_DEVICE float silu_bf16(float z, Reciprocal reciprocal = {}) {
  return silu_bf16_of(z, silu_divisor_f32(z), reciprocal);
}

/// The gated norm's silu(z) from b = silu_divisor_f32(z), as contract field Chain spells it:
/// bit 1 silu_bf16_of (bit 16: its reciprocal seeded by the target's instruction), else silu_f32's
/// IEEE division. The same bits for every BF16 z.
template <u32 Chain> NETRA_HOST_DEVICE float gated_silu_of(float z, float b) {
  if constexpr ((Chain & 1) == 0) return div_rn(z, b);
  else if constexpr ((Chain & 16) != 0) return silu_bf16_of(z, b, instruction_seeded<1>{});
  else return silu_bf16_of(z, b);
}

/// The BF16 z of value v of a thread's chunks (8 values a chunk, two a word, the low half first).
template <u32 Chunks> NETRA_HOST_DEVICE float gate_z(const u32x4 (&z)[Chunks], u32 v) {
  const u32 word = z[v / 8][v % 8 / 2];
  return bit_cast<float>(v % 2 ? word & 0xFFFF0000u : word << 16);
}
/// The gated norm's g[i][e] = silu(z) of every value of a thread's chunks z, issued before the
/// sum; Chain bit 8: only the divisors b (the exponentials), gate_quotients turning them into g.
template <u32 Chain, u32 Chunks> NETRA_HOST_DEVICE void gates_of(const u32x4 (&z)[Chunks], float (&g)[Chunks][8]) {
NETRA_UNROLL
  for (u32 v = 0; v < 8 * Chunks; ++v) g[v / 8][v % 8] = (Chain & 8) != 0 ? silu_divisor_f32(gate_z(z, v)) : gated_silu_of<Chain>(gate_z(z, v), silu_divisor_f32(gate_z(z, v)));
}
/// Chain bit 8: the quotients of stage s of Stages (values [s 8 C / Stages, (s + 1) 8 C / Stages)).
template <u32 Chain, u32 Stages, u32 Chunks> NETRA_HOST_DEVICE void gate_quotients(const u32x4 (&z)[Chunks], float (&g)[Chunks][8], u32 stage) {
NETRA_UNROLL
  for (u32 v = stage * 8 * Chunks / Stages; v < (stage + 1) * 8 * Chunks / Stages; ++v) g[v / 8][v % 8] = gated_silu_of<Chain>(gate_z(z, v), g[v / 8][v % 8]);
}

}  // namespace netra::kernels
