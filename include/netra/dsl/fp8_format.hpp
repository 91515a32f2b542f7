// netra/dsl/fp8_format.hpp — the FP8 format as a type: OCP E4M3FN and E4M3FNUZ, with one
// conversion specification per format that gives the same bits on the host and on every target.
//
//   fp8::e4m3fn   (OCP; gfx950 and sm90a hardware): bias 7, max ±448 (0x7E / 0xFE), NaN 0x7F
//                 (also 0xFF on input), signed zeros, subnormals m * 2^-9.
//   fp8::e4m3fnuz (gfx942 hardware): bias 8, max ±240 (0x7F / 0xFF), one NaN 0x80, no negative
//                 zero, subnormals m * 2^-10. The same byte means half the E4M3FN value (outside
//                 the special codes), so a checkpoint in one format read as the other is wrong by 2x
//                 or worse: contracts name the format of every FP8 tensor (contracts/common.hpp's
//                 dtype::e4m3 / dtype::e4m3fnuz) and refuse the other.
//
// fp8_from_f32_reference<F>(x): round to nearest, ties to even; |x| >= max (finite or Inf)
// saturates to ±max; values that round to zero give 0x00 / 0x80 (E4M3FN) or 0x00 (E4M3FNUZ);
// any NaN -> F::nan_code. f32_from_fp8<F> is exact. tests/dsl/test_fp8_format.cpp checks both
// formats against a brute-force nearest-value search for all 2^16 BF16 inputs and the FP32 edges.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra {
namespace fp8 {
/// OCP E4M3FN.
struct e4m3fn {
  static constexpr const char* name = "float8_e4m3fn";
  static constexpr u32 bias = 7;
  static constexpr u8 max_code = 0x7E;
  static constexpr u8 nan_code = 0x7F;
  static constexpr bool signed_zero = true;
  static constexpr u32 max_bits = 0x43E00000u;  // 448.0f
  static constexpr u8 dlpack_code = 10;         // kDLFloat8_e4m3fn (DLPack 1.1)
};
/// E4M3FNUZ (AMD CDNA3).
struct e4m3fnuz {
  static constexpr const char* name = "float8_e4m3fnuz";
  static constexpr u32 bias = 8;
  static constexpr u8 max_code = 0x7F;
  static constexpr u8 nan_code = 0x80;
  static constexpr bool signed_zero = false;
  static constexpr u32 max_bits = 0x43700000u;  // 240.0f
  static constexpr u8 dlpack_code = 11;         // kDLFloat8_e4m3fnuz (DLPack 1.1)
};
}  // namespace fp8

template <class F> concept fp8_format = same_v<F, fp8::e4m3fn> || same_v<F, fp8::e4m3fnuz>;

/// The FP8 format a target's conversion and matrix instructions use (gfx1151 has none and is
/// given the OCP format in software).
template <class Target> using native_fp8_t = conditional_t<Target::fp8_is_ocp, fp8::e4m3fn, fp8::e4m3fnuz>;

/// The largest finite value of a format.
template <fp8_format F> inline constexpr float fp8_max_v = bit_cast<float>(F::max_bits);

template <fp8_format F> NETRA_HOST_DEVICE constexpr u8 fp8_from_f32_reference(float x) {
  const u32 b = bit_cast<u32>(x);
  const u32 sign = (b >> 24) & 0x80u;
  const u32 a = b & 0x7FFFFFFFu;
  const u8 zero = F::signed_zero ? static_cast<u8>(sign) : u8{0};
  if (a > 0x7F800000u) return F::nan_code;                           // NaN
  if (a >= F::max_bits) return static_cast<u8>(sign | F::max_code);  // |x| >= max, Inf included
  const i32 e = static_cast<i32>(a >> 23) - 127;                     // unbiased f32 exponent
  if (e >= 1 - static_cast<i32>(F::bias)) {                          // normal range of the format
    const u32 rounded = a + 0x7FFFFu + ((a >> 20) & 1u);             // keep 3 mantissa bits, RNE
    return static_cast<u8>(sign | ((rounded >> 20) - ((127u - F::bias) << 3)));
  }
  if ((a >> 23) == 0) return zero;  // f32 zero or subnormal: far below the format's subnormals
  // Subnormal: round |x| / 2^(-2 - bias) to an integer 0..8 (8 encodes the smallest normal).
  const u32 significand = (a & 0x7FFFFFu) | 0x800000u;  // |x| = significand * 2^(e - 23)
  const u32 shift = static_cast<u32>(21 - static_cast<i32>(F::bias) - e);  // >= 21
  if (shift >= 32) return zero;
  u32 q = significand >> shift;
  const u32 rem = significand & ((1u << shift) - 1u);
  const u32 half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return q == 0 ? zero : static_cast<u8>(sign | q);
}

template <fp8_format F> NETRA_HOST_DEVICE constexpr float f32_from_fp8(u8 v) {
  const u32 sign = static_cast<u32>(v & 0x80u) << 24;
  const u32 exp = (v >> 3) & 0xFu, man = v & 7u;
  if constexpr (F::signed_zero) {
    if (exp == 0xF && man == 7) return bit_cast<float>(0x7FC00000u | sign);  // NaN (both signs)
  } else {
    if (v == F::nan_code) return bit_cast<float>(0x7FC00000u);  // the only NaN
  }
  if (exp == 0) {  // subnormal: man * 2^(-2 - bias), exact
    const float mag = static_cast<float>(man) * bit_cast<float>((127u - 2u - F::bias) << 23);
    return sign ? -mag : mag;
  }
  return bit_cast<float>(sign | ((exp + 127u - F::bias) << 23) | (man << 20));
}

}  // namespace netra
