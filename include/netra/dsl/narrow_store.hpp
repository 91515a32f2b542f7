// netra/dsl/narrow_store.hpp — 8- and 4-byte global stores, target-neutral.
//
// Plain typed stores: both device compilers select the native instruction for them
// (global_store_dwordx2 / global_store_dword on gfx9, STG.E.64 / STG.E on sm_90a; checked in the
// disassembly of the act_quant code objects). `address` must be aligned to the store's size.
#pragma once
#include "netra/dsl/arch/target_ops.hpp"
#include "netra/dsl/config.hpp"

namespace netra {
struct alignas(8) u32x2 {
  u32 x, y;
};

/// Stores 8 bytes: `lo` at address, `hi` at address + 4 (the streaming policy: the target's
/// evict-first store, dsl/vector_types.hpp cache_policy).
template <class Target, cache_policy Policy = cache_policy::normal> NETRA_DEVICE void store_8B(void* address, u32 lo, u32 hi) {
  if constexpr (Policy == cache_policy::normal) *static_cast<u32x2*>(address) = u32x2{lo, hi};
  else target_ops<Target>::store_8B_streaming(address, lo, hi);
}
/// Stores 4 bytes.
template <class Target> NETRA_DEVICE void store_4B(void* address, u32 value) { *static_cast<u32*>(address) = value; }
}  // namespace netra
