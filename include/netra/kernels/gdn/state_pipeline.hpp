// netra/kernels/gdn/state_pipeline.hpp — the persistent recurrent core (contract field Persistent):
// its items are the plain grid's workgroups (x, hv, b) in launch order, n = x + X (hv + 32 b), and
// while one item's tokens run, each thread copies its own 16-byte state vectors of its workgroup's
// next item into LDS (asynchronous copies, dsl/async_copy.hpp): vector v of thread t at byte
// (v Threads + t) 16, so the 32 lanes of a wave read 32 consecutive 16-byte slots (no bank
// conflict). Only the copying thread reads its vectors back, after its own wait; it refills them
// only after a workgroup barrier that follows its reads.
#pragma once
#include "netra/contracts/gdn/model.hpp"
#include "netra/dsl/async_copy.hpp"

namespace netra::kernels::gdn_pipeline {
struct item3 {
  u32 x, hv, b;
};
/// Item n of a grid of `blocks_x` x 32 x B workgroups.
NETRA_HOST_DEVICE constexpr item3 item(u32 n, u32 blocks_x) { return {n % blocks_x, n / blocks_x % gdn::heads_v, n / (blocks_x * gdn::heads_v)}; }
/// The persistent grid: min(W, items) workgroups.
NETRA_HOST_DEVICE constexpr u32 workgroups(u32 persistent, u32 items) { return items < persistent ? items : persistent; }

/// One thread's slots of the workgroup's state buffer.
template <class Target, u32 Threads> struct buffer {
  u8* lds;
  u32 thread;
  NETRA_DEVICE void copy(u32 v, const void* source) const { copy_16B_to_lds<Target>(lds + (u64{v} * Threads + thread) * 16, source, true); }
  NETRA_DEVICE void commit() const { commit_lds_copies<Target>(); }
  /// Returns once every copy this thread issued has landed.
  NETRA_DEVICE void wait() const { wait_lds_copies<Target, 0>(); }
  NETRA_DEVICE u32x4 read(u32 v) const { return *reinterpret_cast<const u32x4*>(lds + (u64{v} * Threads + thread) * 16); }
};
}  // namespace netra::kernels::gdn_pipeline
