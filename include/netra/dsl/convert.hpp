// netra/dsl/convert.hpp — exact FP32 -> BF16 and FP32 -> E4M3 conversions that give the same
// bits on the host, on gfx950 and on sm90a.
//
// netra's conversion semantics (the contract every kernel and oracle uses):
//   bf16(x): round to nearest, ties to even; overflow -> ±Inf; subnormals kept; any NaN -> 0x7FFF.
//   e4m3(x): OCP E4M3FN (bias 7, max 448), round to nearest, ties to even; |x| > 448 (finite or
//            Inf) saturates to ±448 (0x7E / 0xFE); subnormals (m * 2^-9) kept; values that round
//            to zero keep their sign (0x00 / 0x80); any NaN -> 0x7F.
// The *_reference functions are the specification, written on the bits, usable anywhere.
// pack_* are the device forms built on each target's conversion instruction (target_ops).
#pragma once
#include "netra/dsl/config.hpp"

namespace netra {

NETRA_HOST_DEVICE constexpr u16 bf16_from_f32_reference(float x) {
  const u32 b = bit_cast<u32>(x);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFFu;
  const u32 rounded = b + 0x7FFFu + ((b >> 16) & 1u);
  return static_cast<u16>(rounded >> 16);
}

NETRA_HOST_DEVICE constexpr float f32_from_bf16(u16 h) { return bit_cast<float>(static_cast<u32>(h) << 16); }

NETRA_HOST_DEVICE constexpr u8 e4m3_from_f32_reference(float x) {
  const u32 b = bit_cast<u32>(x);
  const u32 sign = (b >> 24) & 0x80u;
  const u32 a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7Fu;                                // NaN
  if (a >= 0x43E00000u) return static_cast<u8>(sign | 0x7Eu);       // |x| >= 448, Inf included
  const i32 e = static_cast<i32>(a >> 23) - 127;                    // unbiased f32 exponent
  if (e >= -6) {                                                    // E4M3 normal range
    const u32 rounded = a + 0x7FFFFu + ((a >> 20) & 1u);            // keep 3 mantissa bits, RNE
    return static_cast<u8>(sign | ((rounded >> 20) - ((127u - 7u) << 3)));
  }
  if ((a >> 23) == 0) return static_cast<u8>(sign);                 // f32 zero or subnormal: < 2^-126
  // E4M3 subnormal: round |x| / 2^-9 to an integer 0..8 (8 encodes the smallest normal, 0x08).
  const u32 significand = (a & 0x7FFFFFu) | 0x800000u;              // |x| = significand * 2^(e-23)
  const u32 shift = static_cast<u32>(14 - e);                       // >= 21
  if (shift >= 32) return static_cast<u8>(sign);
  u32 q = significand >> shift;
  const u32 rem = significand & ((1u << shift) - 1u);
  const u32 half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<u8>(sign | q);
}

NETRA_HOST_DEVICE constexpr float f32_from_e4m3(u8 v) {
  const u32 sign = static_cast<u32>(v & 0x80u) << 24;
  const u32 exp = (v >> 3) & 0xFu, man = v & 7u;
  if (exp == 0xF && man == 7) return bit_cast<float>(0x7FC00000u | sign);  // NaN
  if (exp == 0) {  // subnormal: man * 2^-9
    const float mag = static_cast<float>(man) * (1.0f / 512.0f);
    return sign ? -mag : mag;
  }
  return bit_cast<float>(sign | ((exp + 127u - 7u) << 23) | (man << 20));
}

}  // namespace netra

#include "netra/dsl/arch/target_ops.hpp"

namespace netra {
/// Two BF16 values packed as `lo` in bits 0..15, `hi` in bits 16..31 (memory order lo, hi).
template <class Target> NETRA_DEVICE u32 pack_bf16x2(float lo, float hi) { return target_ops<Target>::pack_bf16x2(lo, hi); }
/// Two E4M3 values packed as `lo` in bits 0..7, `hi` in bits 8..15 (memory order lo, hi).
template <class Target> NETRA_DEVICE u32 pack_e4m3x2(float lo, float hi) { return target_ops<Target>::pack_e4m3x2(lo, hi); }
}  // namespace netra
