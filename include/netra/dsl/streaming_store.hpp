// netra/dsl/streaming_store.hpp — 16- and 8-byte global stores of data written once and not read
// again soon (streaming: evict first). sm90a: st.global.cs (cache streaming: L1 and L2 evict-first);
// AMD targets: the nontemporal store (global_store_dwordx4 / dwordx2 ... nt). The same bytes as
// store_16B / store_8B; only the caches' replacement hint differs. `address` must be aligned to
// the store's size.
#pragma once
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/vector_types.hpp"

namespace netra {

template <class Target> NETRA_DEVICE void store_16B_streaming(void* address, u32x4 value) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  asm volatile("st.global.cs.v4.b32 [%0], {%1,%2,%3,%4};" ::"l"(address), "r"(value.x), "r"(value.y), "r"(value.z), "r"(value.w) : "memory");
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  typedef u32 v4 __attribute__((ext_vector_type(4)));
  __builtin_nontemporal_store(v4{value.x, value.y, value.z, value.w}, static_cast<v4*>(address));
#else
  *static_cast<u32x4*>(address) = value;  // host pass: the same bytes
#endif
}

template <class Target> NETRA_DEVICE void store_8B_streaming(void* address, u32 lo, u32 hi) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  asm volatile("st.global.cs.v2.b32 [%0], {%1,%2};" ::"l"(address), "r"(lo), "r"(hi) : "memory");
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  typedef u32 v2 __attribute__((ext_vector_type(2)));
  __builtin_nontemporal_store(v2{lo, hi}, static_cast<v2*>(address));
#else
  *static_cast<u32x2*>(address) = u32x2{lo, hi};  // host pass: the same bytes
#endif
}

}  // namespace netra
