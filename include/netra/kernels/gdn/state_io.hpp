// netra/kernels/gdn/state_io.hpp — one row group of a recurrent state column (32 consecutive key
// indices, contiguous in the [slots, 32, V, K] pool) between memory and FP32 registers.
// FP32 storage: 8 x 16 B; BF16 storage: 4 x 16 B, widened exactly on load, rounded to nearest
// even (NaN -> 0x7FFF, dsl/convert.hpp) on store — the only rounding storage adds.
#pragma once
#include "netra/contracts/gdn/model.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/vector_memory.hpp"

namespace netra::kernels::gdn_state_io {
inline constexpr u32 rows = 32;

template <class Target, u32 Storage> NETRA_DEVICE void load(const void* base, float (&s)[rows]) {
  if constexpr (Storage == gdn::state_storage::fp32) {
    NETRA_UNROLL
    for (u32 v = 0; v < rows / 4; ++v) {
      const u32x4 w = load_16B<Target>(static_cast<const float*>(base) + 4 * v);
      s[4 * v] = bit_cast<float>(w.x);
      s[4 * v + 1] = bit_cast<float>(w.y);
      s[4 * v + 2] = bit_cast<float>(w.z);
      s[4 * v + 3] = bit_cast<float>(w.w);
    }
  } else {
    NETRA_UNROLL
    for (u32 v = 0; v < rows / 8; ++v) {
      const u32x4 w = load_16B<Target>(static_cast<const u16*>(base) + 8 * v);
      NETRA_UNROLL
      for (u32 e = 0; e < 8; ++e) s[8 * v + e] = bit_cast<float>(e % 2 ? w[static_cast<int>(e / 2)] & 0xFFFF0000u : w[static_cast<int>(e / 2)] << 16);
    }
  }
}

template <class Target, u32 Storage> NETRA_DEVICE void store(void* base, const float (&s)[rows]) {
  if constexpr (Storage == gdn::state_storage::fp32) {
    NETRA_UNROLL
    for (u32 v = 0; v < rows / 4; ++v)
      store_16B<Target>(static_cast<float*>(base) + 4 * v, u32x4{bit_cast<u32>(s[4 * v]), bit_cast<u32>(s[4 * v + 1]),
                                                                  bit_cast<u32>(s[4 * v + 2]), bit_cast<u32>(s[4 * v + 3])});
  } else {
    NETRA_UNROLL
    for (u32 v = 0; v < rows / 8; ++v)
      store_16B<Target>(static_cast<u16*>(base) + 8 * v,
                        u32x4{pack_bf16x2<Target>(s[8 * v], s[8 * v + 1]), pack_bf16x2<Target>(s[8 * v + 2], s[8 * v + 3]),
                              pack_bf16x2<Target>(s[8 * v + 4], s[8 * v + 5]), pack_bf16x2<Target>(s[8 * v + 6], s[8 * v + 7])});
  }
}
}  // namespace netra::kernels::gdn_state_io
