// netra/dsl/arch/sm90a/async_copy.hpp — per-thread asynchronous 16-byte copies global -> shared
// memory on sm_80+ (LDGSTS), counted in commit groups per thread.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::sm90a_isa {
/// cp.async.cg.shared.global [dst], [src], 16, src_size: copies src_size (16 or 0) bytes and
/// zero-fills the rest; with src_size 0 nothing is read from `source`.
NETRA_DEVICE void cp_async_cg_shared_global_16(void* destination, const void* source, u32 source_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(static_cast<u32>(__cvta_generic_to_shared(destination))),
               "l"(source), "r"(source_bytes)
               : "memory");
}
/// cp.async.commit_group: the thread's copies issued since the last commit form one group.
NETRA_DEVICE void cp_async_commit_group() { asm volatile("cp.async.commit_group;" ::: "memory"); }
/// cp.async.wait_group N: returns once at most N of the thread's groups are still pending.
template <u32 Pending> NETRA_DEVICE void cp_async_wait_group() {
  static_assert(Pending <= 7, "netra::sm90a_isa::cp_async_wait_group: N must be in [0, 7]");
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}
}  // namespace netra::sm90a_isa
