// netra/dsl/arch/amdgcn/memory.hpp — 16-byte global accesses on gfx9 (CDNA: gfx90a, gfx942, gfx950).
#pragma once
#include "netra/dsl/vector_types.hpp"

namespace netra::amdgcn_isa {
typedef u32 v4u32 __attribute__((ext_vector_type(4)));

/// global_load_dwordx4 (with `nt` for the streaming policies). `address` must be 16-byte aligned.
template <cache_policy Policy = cache_policy::normal> NETRA_DEVICE u32x4 global_load_dwordx4(const void* address) {
  const v4u32* p = static_cast<const v4u32*>(address);
  v4u32 v;
  if constexpr (Policy == cache_policy::streaming || Policy == cache_policy::streaming_early) v = __builtin_nontemporal_load(p);
  else v = *p;
  const u32 x = v.x, y = v.y, z = v.z, w = v.w;
  return u32x4{x, y, z, w};
}

/// global_store_dwordx4 (with `nt` for the streaming policies). `address` must be 16-byte aligned.
template <cache_policy Policy = cache_policy::normal> NETRA_DEVICE void global_store_dwordx4(void* address, u32x4 value) {
  v4u32 v = {value.x, value.y, value.z, value.w};
  if constexpr (Policy == cache_policy::normal) *static_cast<v4u32*>(address) = v;
  else __builtin_nontemporal_store(v, static_cast<v4u32*>(address));
}
/// global_store_dwordx2 nt (the streaming policies' 8-byte store). `address` must be 8-byte aligned.
NETRA_DEVICE void global_store_dwordx2_nt(void* address, u32 lo, u32 hi) {
  typedef u32 v2u32 __attribute__((ext_vector_type(2)));
  __builtin_nontemporal_store(v2u32{lo, hi}, static_cast<v2u32*>(address));
}
}  // namespace netra::amdgcn_isa
