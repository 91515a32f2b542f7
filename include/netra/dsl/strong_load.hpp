// netra/dsl/strong_load.hpp — a 4-byte global load that observes device-scope memory: never
// served from a stale L1 line (sm90a: ld.relaxed.gpu.global.b32; gfx950: a relaxed agent-scope
// atomic load, global_load_dword sc1). For data another grid wrote that a kernel reads before
// wait_for_prerequisites() (programmatic dependent launch, dsl/sync.hpp), or after an acquire.
#pragma once
#include "netra/dsl/target.hpp"

namespace netra {
template <class Target> struct strong_load_ops {
  static_assert(dependent_false_v<Target>, "netra::strong_load_ops: this compiler cannot generate code for the target");
};
#if defined(NETRA_COMPILER_HIP)
template <> struct strong_load_ops<gfx950> {
  static NETRA_DEVICE u32 load_u32(const void* p) {
    return __hip_atomic_load(static_cast<const u32*>(p), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
};
/// gfx942: the same relaxed agent-scope atomic load (the compiler picks gfx942's cache bits).
template <> struct strong_load_ops<gfx942> : strong_load_ops<gfx950> {};
#endif
#if defined(NETRA_COMPILER_CUDA)
template <> struct strong_load_ops<sm90a> {
  /// ld.relaxed.gpu.global.b32
  static NETRA_DEVICE u32 load_u32(const void* p) {
    u32 r;
    asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(r) : "l"(p) : "memory");
    return r;
  }
};
#endif
/// The 4 bytes at `address` (4-byte aligned) as device-scope memory holds them.
template <class Target> NETRA_DEVICE u32 load_u32_strong(const void* address) { return strong_load_ops<Target>::load_u32(address); }
}  // namespace netra
