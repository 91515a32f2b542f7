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
#include "netra/dsl/fp8_format.hpp"

namespace netra {

NETRA_HOST_DEVICE constexpr u16 bf16_from_f32_reference(float x) {
  const u32 b = bit_cast<u32>(x);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFFu;
  const u32 rounded = b + 0x7FFFu + ((b >> 16) & 1u);
  return static_cast<u16>(rounded >> 16);
}

NETRA_HOST_DEVICE constexpr float f32_from_bf16(u16 h) { return bit_cast<float>(static_cast<u32>(h) << 16); }

/// OCP E4M3FN, the format netra's E4M3 tensors carry (dsl/fp8_format.hpp has both formats).
NETRA_HOST_DEVICE constexpr u8 e4m3_from_f32_reference(float x) { return fp8_from_f32_reference<fp8::e4m3fn>(x); }

NETRA_HOST_DEVICE constexpr float f32_from_e4m3(u8 v) { return f32_from_fp8<fp8::e4m3fn>(v); }

}  // namespace netra

#include "netra/dsl/arch/target_ops.hpp"

namespace netra {
/// Two BF16 values packed as `lo` in bits 0..15, `hi` in bits 16..31 (memory order lo, hi).
template <class Target> NETRA_DEVICE u32 pack_bf16x2(float lo, float hi) { return target_ops<Target>::pack_bf16x2(lo, hi); }
/// Two E4M3 values packed as `lo` in bits 0..7, `hi` in bits 8..15 (memory order lo, hi).
template <class Target> NETRA_DEVICE u32 pack_e4m3x2(float lo, float hi) { return target_ops<Target>::pack_e4m3x2(lo, hi); }
}  // namespace netra
