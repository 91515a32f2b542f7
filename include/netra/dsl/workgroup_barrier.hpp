// netra/dsl/workgroup_barrier.hpp — a workgroup-wide barrier that also orders LDS / shared-memory
// accesses, target-neutral: every thread's LDS writes before the barrier are visible to every
// thread of the workgroup after it.
//   gfx950: release fence (workgroup) + s_barrier + acquire fence (workgroup); the fences make
//           the compiler wait for outstanding LDS operations (s_waitcnt lgkmcnt(0)) — a bare
//           s_barrier does not (docs/target-notes.md §6).
//   sm90a:  bar.sync 0 (orders shared-memory accesses of the participating threads).
// All threads of the workgroup must reach it (no divergent calls).
#pragma once
#include "netra/dsl/target.hpp"

/// Declares a workgroup-shared (LDS / shared memory) variable inside a kernel body. Host
/// compilers (which parse kernel templates for their constexpr maps but never run them) see a
/// static variable.
#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
#define NETRA_SHARED __shared__
/// The workgroup's dynamic LDS / shared memory (the launch's dynamic_lds_bytes) as bytes, 128-byte
/// aligned.
#define NETRA_DYNAMIC_SHARED_BYTES(NAME) extern __shared__ __attribute__((aligned(128))) ::netra::u8 NAME[]
#else
#define NETRA_SHARED static
#define NETRA_DYNAMIC_SHARED_BYTES(NAME) static ::netra::u8 NAME[1]
#endif

namespace netra {
template <class Target> struct workgroup_barrier_ops {
  static_assert(dependent_false_v<Target>, "netra::workgroup_barrier_ops: this compiler cannot generate code for the target");
};
#if defined(NETRA_COMPILER_HIP)
struct amdgcn_workgroup_barrier_ops {  // every AMD target (gfx950, gfx942, gfx1151)
  static NETRA_DEVICE void sync() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  }
  static NETRA_DEVICE void wave_sync() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
    __builtin_amdgcn_wave_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
  }
};
template <> struct workgroup_barrier_ops<gfx950> : amdgcn_workgroup_barrier_ops {};
template <> struct workgroup_barrier_ops<gfx942> : amdgcn_workgroup_barrier_ops {};
template <> struct workgroup_barrier_ops<gfx1151> : amdgcn_workgroup_barrier_ops {};
#endif
#if defined(NETRA_COMPILER_CUDA)
template <> struct workgroup_barrier_ops<sm90a> {
  static NETRA_DEVICE void sync() { asm volatile("bar.sync 0;" ::: "memory"); }
  static NETRA_DEVICE void wave_sync() { __syncwarp(); }
};
#endif
template <class Target> NETRA_DEVICE void workgroup_barrier() { workgroup_barrier_ops<Target>::sync(); }
/// The same for the lanes of one wave (every lane of the wave calls it): its LDS writes before are
/// visible to every lane of the wave after. gfx950: wavefront-scope fences around
/// s_barrier-free wave_barrier (the wave runs in lockstep; the fences make the compiler wait for
/// its LDS operations and keep them in order); sm90a: bar.warp.sync (__syncwarp), which orders
/// the participating threads' shared-memory accesses.
template <class Target> NETRA_DEVICE void wave_barrier() { workgroup_barrier_ops<Target>::wave_sync(); }
}  // namespace netra
