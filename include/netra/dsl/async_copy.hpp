// netra/dsl/async_copy.hpp — 16-byte copies global -> LDS / shared memory that a thread issues
// now and consumes later, target-neutral.
//   copy_16B_to_lds<T>(dst, src, valid): copies 16 bytes, or writes 16 zero bytes without reading
//     `src` when `valid` is false (masked rows never touch memory; `src` must still be a global
//     address of the buffer, e.g. its first row).
//   commit_lds_copies<T>(): closes the thread's current group of copies.
//   wait_lds_copies<T, N>(): returns once at most N of the thread's groups are still in flight.
// Other threads see the bytes after wait_lds_copies and a workgroup_barrier.
//   sm90a:  cp.async.cg (src-size 0 for the zero fill) + commit_group / wait_group.
//   gfx950: a 16-byte global load and an LDS store in program order (the copy is complete when
//           the call returns; commit and wait do nothing). gfx950's asynchronous form,
//           global_load_lds_dwordx4, has no zero fill for masked rows.
#pragma once
#include "netra/dsl/vector_memory.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/async_copy.hpp"
#endif

namespace netra {
template <class Target> struct async_copy_ops {
  static_assert(dependent_false_v<Target>, "netra::async_copy_ops: this compiler cannot generate code for the target");
};
#if defined(NETRA_COMPILER_CUDA)
template <> struct async_copy_ops<sm90a> {
  static NETRA_DEVICE void copy(void* dst, const void* src, bool valid) {
    sm90a_isa::cp_async_cg_shared_global_16(dst, src, valid ? 16u : 0u);
  }
  static NETRA_DEVICE void commit() { sm90a_isa::cp_async_commit_group(); }
  template <u32 N> static NETRA_DEVICE void wait() { sm90a_isa::cp_async_wait_group<N>(); }
};
#endif
#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_permlane16_swap))
template <> struct async_copy_ops<gfx950> {
  static NETRA_DEVICE void copy(void* dst, const void* src, bool valid) {
    u32x4 v = {0, 0, 0, 0};
    if (valid) v = load_16B<gfx950, cache_policy::streaming>(src);
    *static_cast<u32x4*>(dst) = v;
  }
  static NETRA_DEVICE void commit() {}
  template <u32 N> static NETRA_DEVICE void wait() {}
};
#endif
template <class Target> NETRA_DEVICE void copy_16B_to_lds(void* dst, const void* src, bool valid) {
  async_copy_ops<Target>::copy(dst, src, valid);
}
template <class Target> NETRA_DEVICE void commit_lds_copies() { async_copy_ops<Target>::commit(); }
template <class Target, u32 Pending> NETRA_DEVICE void wait_lds_copies() { async_copy_ops<Target>::template wait<Pending>(); }
}  // namespace netra
