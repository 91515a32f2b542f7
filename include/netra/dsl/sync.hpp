// netra/dsl/sync.hpp — device-wide publication between workgroups of one launch, target-neutral.
//
// Pattern (used by kernels that let the last-arriving workgroup finish a reduction):
//   writer:  plain stores; fence_release<T>(); atomic_add_relaxed<T>(counter, 1)
//   reader:  observe the counter through its own atomic_add; fence_acquire<T>();
//            load_16B_after_acquire<T>(...) to read what the writers stored.
// Scope is the whole device (agent on gfx950, gpu on sm90a). No thread ever waits for another,
// so the pattern cannot deadlock whatever the scheduling.
#pragma once
#include "netra/dsl/arch/target_ops.hpp"

namespace netra {
template <class Target> NETRA_DEVICE void fence_release() { target_ops<Target>::fence_release(); }
template <class Target> NETRA_DEVICE void fence_acquire() { target_ops<Target>::fence_acquire(); }
template <class Target> NETRA_DEVICE u32 atomic_add_relaxed(u32* address, u32 value) {
  return target_ops<Target>::atomic_add_relaxed(address, value);
}
template <class Target> NETRA_DEVICE u32x4 load_16B_after_acquire(const void* address) {
  return target_ops<Target>::load_16B_after_acquire(address);
}
/// Programmatic dependent launch (sm90a; no-ops on gfx9, where the kernel boundary orders).
/// A kernel calls launch_dependents<T>() once it no longer needs to delay its successor's start;
/// a successor launched with programmatic serialisation calls wait_for_prerequisites<T>() before
/// it touches anything its predecessor writes (the wait covers completion and visibility).
template <class Target> NETRA_DEVICE void launch_dependents() { target_ops<Target>::launch_dependents(); }
template <class Target> NETRA_DEVICE void wait_for_prerequisites() { target_ops<Target>::wait_for_prerequisites(); }

/// When a kernel lets its successor start, decided once per launch (uniform): at construction,
/// before the kernel's own wait (`at_start`), or at after_stores(), once the thread's last store
/// is issued. Releasing at once lets the successor's workgroups launch and run their prologue
/// while a short, latency-bound grid works; a grid with work on every SM is better off releasing
/// after its stores, so kernels choose by the size of the call.
template <class Target> struct successor_release {
  bool at_start;
  NETRA_DEVICE explicit successor_release(bool release_at_start) : at_start(release_at_start) {
    if (at_start) launch_dependents<Target>();
  }
  NETRA_DEVICE void after_stores() const {
    if (!at_start) launch_dependents<Target>();
  }
};

/// Every lane of the wave receives `value` of lane `source_lane`.
template <class Target> NETRA_DEVICE u32 wave_broadcast(u32 value, u32 source_lane) {
  return target_ops<Target>::broadcast(value, source_lane);
}
}  // namespace netra
