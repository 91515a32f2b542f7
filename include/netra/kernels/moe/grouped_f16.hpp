// netra/kernels/moe/grouped_f16.hpp — FP32 <-> FP16 bits for the split-K partials
// (contracts/moe/grouped_down.hpp, KParts 2), written with integer operations so that every
// target and the host give the same bits:
//   f16_from_f32_rn: round to nearest, ties to even; |x| >= 65520 -> ±Inf; subnormals kept (and
//   rounded, below 2^-25 to ±0); NaN -> the quiet NaN 0x7E00 with x's sign.
//   f32_from_f16: exact.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::kernels::moe_grouped {

NETRA_HOST_DEVICE constexpr u16 f16_from_f32_rn(float f) {
  const u32 x = bit_cast<u32>(f);
  const u32 sign = (x >> 16) & 0x8000u, a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<u16>(sign | 0x7E00u);
  if (a >= 0x477FF000u) return static_cast<u16>(sign | 0x7C00u);  // 65520 = 65504 + half an ulp: ties to Inf (even)
  if (a >= 0x38800000u) {                                         // 2^-14: an FP16 normal
    const u32 m = a - (112u << 23);                               // exponent bias 127 -> 15
    return static_cast<u16>(sign | ((m + 0xFFFu + ((m >> 13) & 1u)) >> 13));
  }
  const u32 e = a >> 23;
  if (e < 102) return static_cast<u16>(sign);  // below 2^-25
  const u32 mant = (a & 0x7FFFFFu) | 0x800000u, shift = 126 - e;  // in units of 2^-24: mant >> shift
  u32 q = mant >> shift;
  const u32 rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<u16>(sign | q);
}

NETRA_HOST_DEVICE constexpr float f32_from_f16(u16 h) {
  const u32 sign = static_cast<u32>(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1F) return bit_cast<float>(sign | 0x7F800000u | (m << 13));
  if (e != 0) return bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
  const float magnitude = static_cast<float>(m) * 5.9604644775390625e-08f;  // m 2^-24: exact
  return bit_cast<float>(bit_cast<u32>(magnitude) | sign);
}

}  // namespace netra::kernels::moe_grouped
