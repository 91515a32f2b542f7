// netra/dsl/arch/sm90a/memory.hpp — 16-byte global accesses on sm_90a (LDG.E.128 / STG.E.128).
#pragma once
#include "netra/dsl/vector_types.hpp"

namespace netra::sm90a_isa {
/// ld.global.nc.v4.b32 (read-only path), with .L1::no_allocate for the streaming policy;
/// streaming_early: ld.global.L1::no_allocate.v4.b32 (the coherent path: ptxas keeps it where it
/// is issued, it does not sink it past barriers as it may an .nc load).
/// `address` must be 16-byte aligned; there is no hardware bounds check.
template <cache_policy Policy = cache_policy::normal> NETRA_DEVICE u32x4 ld_global_nc_v4_b32(const void* address) {
  u32x4 r;
  if constexpr (Policy == cache_policy::streaming_early)
    asm volatile("ld.global.L1::no_allocate.v4.b32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(address));
  else if constexpr (Policy == cache_policy::streaming)
    asm volatile("ld.global.nc.L1::no_allocate.v4.b32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(address));
  else
    asm volatile("ld.global.nc.v4.b32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(address));
  return r;
}

/// st.global.v4.b32, st.global.cs.v4.b32 (cache streaming: evict first) for the streaming policy.
/// `address` must be 16-byte aligned.
template <cache_policy Policy = cache_policy::normal> NETRA_DEVICE void st_global_v4_b32(void* address, u32x4 value) {
  if constexpr (Policy == cache_policy::normal)
    asm volatile("st.global.v4.b32 [%0], {%1,%2,%3,%4};" ::"l"(address), "r"(value.x), "r"(value.y), "r"(value.z), "r"(value.w)
                 : "memory");
  else
    asm volatile("st.global.cs.v4.b32 [%0], {%1,%2,%3,%4};" ::"l"(address), "r"(value.x), "r"(value.y), "r"(value.z), "r"(value.w)
                 : "memory");
}
/// st.global.cs.v2.b32 (the streaming policy's 8-byte store). `address` must be 8-byte aligned.
NETRA_DEVICE void st_global_cs_v2_b32(void* address, u32 lo, u32 hi) {
  asm volatile("st.global.cs.v2.b32 [%0], {%1,%2};" ::"l"(address), "r"(lo), "r"(hi) : "memory");
}
}  // namespace netra::sm90a_isa
