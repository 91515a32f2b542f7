// netra/dsl/ordered_key.hpp — the ordered 64-bit argmax key.
//
// torch.argmax semantics as one unsigned max: high 32 bits hold the comparison class and value
// order, low 32 bits the bitwise complement of the index, so the maximum key is the greatest
// value and, among equal values, the lowest index.
//   order(NaN)   = 0xFFFFFFFF            every NaN is one class above all numbers, so the first
//                                          NaN (lowest index) wins among NaNs;
//   order(x)     = 0x80000000 + x_mag    for x >= +0 (x_mag = bits & 0x7FFFFFFF);
//   order(x)     = 0x80000000 - x_mag    for x <= -0, so +0 and -0 map to the same 0x80000000;
//   -inf -> 0x00800000, +inf -> 0xFF800000, largest finite -> 0xFF7FFFFF.
// Key 0 is below every real key (the smallest real order is 0x00800000): it is the identity.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra {
NETRA_HOST_DEVICE constexpr u32 argmax_order(u32 f32_bits) {
  const u32 magnitude = f32_bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return 0xFFFFFFFFu;
  const u32 sign_mask = static_cast<u32>(static_cast<i32>(f32_bits) >> 31);  // 0 or ~0
  return ((magnitude ^ sign_mask) - sign_mask) + 0x80000000u;               // ±magnitude + 2^31
}
NETRA_HOST_DEVICE constexpr u64 argmax_key(u32 order, u32 index) {
  return (static_cast<u64>(order) << 32) | static_cast<u32>(~index);
}
NETRA_HOST_DEVICE constexpr u32 argmax_key_index(u64 key) { return ~static_cast<u32>(key); }
inline constexpr u64 argmax_key_identity = 0;
}  // namespace netra
