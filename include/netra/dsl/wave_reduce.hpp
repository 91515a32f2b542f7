// netra/dsl/wave_reduce.hpp — wave-wide butterfly reductions with a fixed, documented order.
//
// Order: stage s (s = 0, 1, ..., log2(W) - 1) combines each lane with lane ^ 2^s, i.e. masks
// 1, 2, 4, ..., W/2 in that order; every lane ends with the result. For an operation that is
// commutative and associative on the value set (integer max/min, bitwise ops) the result does
// not depend on the order; for floating-point sums the order above *is* the contract: lane
// partials are added pairwise by xor distance 1, then 2, ..., so the sum of 64 lanes on gfx950
// and of 32 lanes on sm90a are different trees (a contract that needs one tree on both targets
// must reduce 32 lanes, then add the two halves explicitly).
#pragma once
#include "netra/dsl/arch/target_ops.hpp"

namespace netra {
/// Butterfly over the whole wave: v = op(v, shuffle_xor(v, mask)) for mask = 1, 2, ..., W/2.
/// `Shuffle` moves one value across lanes (see xor_shuffle_* below).
template <class Target, class T, class Op, class Shuffle> NETRA_DEVICE T wave_butterfly(T v, Op op, Shuffle shuffle) {
NETRA_UNROLL
  for (u32 mask = 1; mask < Target::wave_size; mask <<= 1) v = op(v, shuffle(v, mask));
  return v;
}

template <class Target> NETRA_DEVICE u32 xor_shuffle_u32(u32 v, u32 mask) { return target_ops<Target>::xor_shuffle(v, mask); }

template <class Target> NETRA_DEVICE u64 xor_shuffle_u64(u64 v, u32 mask) {
  const u32 lo = target_ops<Target>::xor_shuffle(static_cast<u32>(v), mask);
  const u32 hi = target_ops<Target>::xor_shuffle(static_cast<u32>(v >> 32), mask);
  return (static_cast<u64>(hi) << 32) | lo;
}

template <class Target> NETRA_DEVICE float xor_shuffle_f32(float v, u32 mask) {
  return bit_cast<float>(target_ops<Target>::xor_shuffle(bit_cast<u32>(v), mask));
}

/// Unsigned 64-bit max over the wave; every lane gets the result.
template <class Target> NETRA_DEVICE u64 wave_max_u64(u64 v) {
  return wave_butterfly<Target>(
      v, [](u64 a, u64 b) { return a < b ? b : a; }, [](u64 x, u32 m) { return xor_shuffle_u64<Target>(x, m); });
}

/// FP32 sum over the wave in the butterfly order above; every lane gets the same bits.
template <class Target> NETRA_DEVICE float wave_sum_f32(float v) {
  return wave_butterfly<Target>(
      v, [](float a, float b) { return a + b; }, [](float x, u32 m) { return xor_shuffle_f32<Target>(x, m); });
}

/// FP32 max over the wave (NaN-propagation is that of `a < b ? b : a`: callers that need NaN
/// semantics handle NaN before reducing).
template <class Target> NETRA_DEVICE float wave_max_f32(float v) {
  return wave_butterfly<Target>(
      v, [](float a, float b) { return a < b ? b : a; }, [](float x, u32 m) { return xor_shuffle_f32<Target>(x, m); });
}
}  // namespace netra
