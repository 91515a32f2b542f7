// netra/dsl/group_max.hpp — unsigned 32-bit max over aligned groups of Lanes lanes of a wave
// (lanes g Lanes .. g Lanes + Lanes - 1); every lane of a group gets its group's max. Integer max
// does not depend on the order, so every spelling gives the same bits: sm90a with 16 or 32 lanes
// by redux.sync (one instruction per group in flight: a 16-lane group's max is the warp max of
// the values with the other half's replaced by 0), every other case the xor butterfly
// (masks 1 .. Lanes / 2). Every lane of the wave must take part.
#pragma once
#include "netra/dsl/wave_reduce.hpp"
#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/redux.hpp"
#endif

namespace netra {
template <class Target, u32 Lanes> NETRA_DEVICE u32 group_max_u32(u32 v) {
  static_assert(Lanes >= 1 && Lanes <= Target::wave_size && (Lanes & (Lanes - 1)) == 0,
                "netra::group_max_u32: Lanes must be a power of two of at most the wave size");
#if defined(NETRA_COMPILER_CUDA)
  if constexpr (same_v<Target, sm90a> && Lanes == 32) {
    return sm90a_isa::redux_sync_max_u32(v);
  } else if constexpr (same_v<Target, sm90a> && Lanes == 16) {
    const bool upper = (target_ops<Target>::lane_id() & 16u) != 0;
    const u32 low = sm90a_isa::redux_sync_max_u32(upper ? 0u : v), high = sm90a_isa::redux_sync_max_u32(upper ? v : 0u);
    return upper ? high : low;
  } else
#endif
  {
NETRA_UNROLL
    for (u32 mask = 1; mask < Lanes; mask <<= 1) {
      const u32 other = xor_shuffle_u32<Target>(v, mask);
      v = v < other ? other : v;
    }
    return v;
  }
}
}  // namespace netra
