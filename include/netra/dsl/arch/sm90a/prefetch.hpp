// netra/dsl/arch/sm90a/prefetch.hpp — bulk L2 prefetch on sm_90 (the copy engine fetches a
// contiguous range into L2 in the background; no registers, no completion to wait for).
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_CUDA)
namespace netra::sm90a_isa {
/// cp.async.bulk.prefetch.L2.global [address], bytes: address 16-byte aligned, bytes a multiple of 16.
NETRA_DEVICE void cp_async_bulk_prefetch_l2_global(const void* address, u32 bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(address), "r"(bytes) : "memory");
}
}  // namespace netra::sm90a_isa
#endif
