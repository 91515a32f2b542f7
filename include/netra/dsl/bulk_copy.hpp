// netra/dsl/bulk_copy.hpp — asynchronous copies of contiguous global ranges into LDS / shared
// memory that complete on a barrier in LDS, target-neutral. The bytes in flight then cost no
// registers: a kernel whose loads must all be in flight at once (a decode GEMV streaming its
// weights) can keep more workgroups resident.
//   sm90a:  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes; the barrier is an
//           mbarrier with one arrival (expect_bytes) and transaction counting.
//   gfx950: not provided (gfx950::has_bulk_copy is false). A kernel there keeps its bytes in flight in
//           VGPRs (512 KiB of them per CU); global_load_lds (16 bytes per lane) would be the
//           instruction, not wired here.
// Use, per barrier and phase: one thread calls init() once, then the threads that use the barrier
// synchronise (workgroup_barrier); per phase one thread calls expect_bytes(total), any threads
// issue copy() for ranges summing to total, every reader calls wait(parity) before it reads the
// bytes; before a buffer is refilled its readers call release_for_copy().
// Copies are issued one at a time per wave (sm90a: a uniform-operand instruction, looped over
// the active lanes): a few large copies cost less than many small ones (docs/target-notes.md §9).
#pragma once
#include "netra/dsl/target.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/bulk_copy.hpp"
#endif

namespace netra {
/// An 8-byte barrier object in LDS.
struct alignas(8) lds_copy_barrier {
  u64 state;
};

/// The operations (only where the target has them; a kernel calls them under
/// `if constexpr (Target::has_bulk_copy)`).
template <class Target> struct bulk_copy_ops {};
#if defined(NETRA_COMPILER_CUDA)
template <> struct bulk_copy_ops<sm90a> {
  /// One thread initialises the barrier (one arrival per phase).
  static NETRA_DEVICE void init(lds_copy_barrier& b) { sm90a_isa::mbarrier_init(&b.state, 1); }
  static NETRA_DEVICE void expect_bytes(lds_copy_barrier& b, u32 bytes) { sm90a_isa::mbarrier_arrive_expect_tx(&b.state, bytes); }
  static NETRA_DEVICE void copy(void* lds, const void* global, u32 bytes, lds_copy_barrier& b) {
    sm90a_isa::cp_async_bulk_shared_global(lds, global, bytes, &b.state);
  }
  /// Waits for the barrier's phase of parity `parity` (its n-th use has parity n % 2).
  static NETRA_DEVICE void wait(lds_copy_barrier& b, u32 parity = 0) { sm90a_isa::mbarrier_wait_parity(&b.state, parity); }
  /// Every lane of a wave calls this after its last read of a buffer and before one of them
  /// issues a copy into it again: the wave's shared-memory reads are ordered before the copy
  /// engine's writes (proxy fence, then a wave barrier).
  static NETRA_DEVICE void release_for_copy() {
    sm90a_isa::fence_proxy_async_shared_cta();
    __syncwarp();
  }
};
#endif
}  // namespace netra
