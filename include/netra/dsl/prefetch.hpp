// netra/dsl/prefetch.hpp — a hint that a contiguous range will be read soon, target-neutral.
//   sm90a:  cp.async.bulk.prefetch.L2.global (one thread issues it for the whole range);
//   gfx950: no L2 prefetch instruction: a no-op (kernels double-buffer in registers instead).
// `address` is 16-byte aligned and `bytes` a multiple of 16. Never changes results.
#pragma once
#include "netra/dsl/target.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/prefetch.hpp"
#endif

namespace netra {
template <class Target> struct prefetch_ops {
  static_assert(dependent_false_v<Target>, "netra::prefetch_ops: this compiler cannot generate code for the target");
};
#if defined(NETRA_COMPILER_HIP)
template <> struct prefetch_ops<gfx950> {
  static NETRA_DEVICE void l2(const void*, u32) {}
};
#endif
#if defined(NETRA_COMPILER_CUDA)
template <> struct prefetch_ops<sm90a> {
  static NETRA_DEVICE void l2(const void* address, u32 bytes) { sm90a_isa::cp_async_bulk_prefetch_l2_global(address, bytes); }
};
#endif
/// Asks the memory system to bring [address, address + bytes) into L2.
template <class Target> NETRA_DEVICE void prefetch_l2(const void* address, u32 bytes) { prefetch_ops<Target>::l2(address, bytes); }
}  // namespace netra
