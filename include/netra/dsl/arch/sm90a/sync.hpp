// netra/dsl/arch/sm90a/sync.hpp — gpu-scope fences, atomics and strong loads on sm_90a (PTX
// memory model: a fence.acq_rel before a relaxed atomic publishes; a fence.acq_rel after
// observing it acquires).
#pragma once
#include "netra/dsl/vector_types.hpp"

namespace netra::sm90a_isa {
/// fence.proxy.async.shared::cta: orders this thread's generic-proxy shared-memory accesses with
/// the async proxy's (wgmma operand reads, bulk copies into shared memory).
NETRA_DEVICE void fence_proxy_async_shared_cta() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
/// fence.acq_rel.gpu
NETRA_DEVICE void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
/// atom.relaxed.gpu.global.add.u32: returns the previous value.
NETRA_DEVICE u32 atom_relaxed_gpu_add_u32(u32* address, u32 value) {
  u32 old;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(address), "r"(value) : "memory");
  return old;
}
/// ld.relaxed.gpu.global.v4.b32: a strong 16-byte load (not served from a stale L1 line).
NETRA_DEVICE u32x4 ld_relaxed_gpu_v4_b32(const void* address) {
  u32x4 r;
  asm volatile("ld.relaxed.gpu.global.v4.b32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(address)
               : "memory");
  return r;
}
/// griddepcontrol.launch_dependents: lets a grid launched after this one with programmatic
/// stream serialisation start its prologue now.
NETRA_DEVICE void griddepcontrol_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
/// griddepcontrol.wait: waits until the prerequisite grids completed and their memory operations
/// are visible (a no-op when the grid was launched without programmatic serialisation).
NETRA_DEVICE void griddepcontrol_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

/// max.f32: the larger operand; if exactly one operand is NaN, the other one (IEEE maxNum).
/// Subnormals are kept (no .ftz).
NETRA_DEVICE float max_f32(float a, float b) {
  float r;
  asm("max.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
}  // namespace netra::sm90a_isa
