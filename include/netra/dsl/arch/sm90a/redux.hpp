// netra/dsl/arch/sm90a/redux.hpp — warp reductions in one instruction (redux.sync, sm_80+).
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::sm90a_isa {
/// redux.sync.max.u32 over the full warp: every lane receives the largest `value` of the 32.
NETRA_DEVICE u32 redux_sync_max_u32(u32 value) {
  u32 r;
  asm volatile("redux.sync.max.u32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(value));
  return r;
}
}  // namespace netra::sm90a_isa
