// netra/dsl/vector_memory.hpp — 16-byte global loads and stores, target-neutral.
//
// Alignment contract: every address passed here is 16-byte aligned. Kernels guarantee it by
// construction from base pointers and strides that the contract's admits() has checked
// (base % 16 == 0, strides in elements a multiple of 16 / sizeof(element)). Neither target
// checks bounds in hardware for these global accesses: callers guard with the contract's shape.
#pragma once
#include "netra/dsl/arch/target_ops.hpp"

namespace netra {
template <class Target, cache_policy Policy = cache_policy::normal> NETRA_DEVICE u32x4 load_16B(const void* address) {
  return target_ops<Target>::template load_16B<Policy>(address);
}
template <class Target, cache_policy Policy = cache_policy::normal> NETRA_DEVICE void store_16B(void* address, u32x4 value) {
  target_ops<Target>::template store_16B<Policy>(address, value);
}

/// True when `address` satisfies the 16-byte alignment contract (host and device).
NETRA_HOST_DEVICE bool is_16B_aligned(const void* address) {
  return (reinterpret_cast<u64>(address) & 15u) == 0;
}
}  // namespace netra
