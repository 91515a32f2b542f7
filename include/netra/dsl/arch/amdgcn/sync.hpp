// netra/dsl/arch/amdgcn/sync.hpp — agent-scope (device-wide) fences and atomics on gfx9 CDNA.
// The fences are the builtin forms, so the compiler emits the cache maintenance they imply
// (buffer_wbl2 before a release, buffer_inv after an acquire) and the waits.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::amdgcn_isa {
/// Release fence at agent scope: this thread's earlier writes are visible device-wide before its
/// later writes (buffer_wbl2 sc1 + s_waitcnt).
NETRA_DEVICE void fence_release_agent() { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent"); }
/// Acquire fence at agent scope: later loads observe what released writers published (buffer_inv sc1).
NETRA_DEVICE void fence_acquire_agent() { __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent"); }
/// global_atomic_add (returning), relaxed, agent scope.
NETRA_DEVICE u32 global_atomic_add_u32(u32* address, u32 value) {
  return __hip_atomic_fetch_add(address, value, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
}  // namespace netra::amdgcn_isa
