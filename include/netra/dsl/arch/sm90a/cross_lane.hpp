// netra/dsl/arch/sm90a/cross_lane.hpp — warp shuffles, one wrapper per PTX instruction.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::sm90a_isa {
/// shfl.sync.bfly.b32 over the full warp: lane i receives `value` of lane i ^ lane_mask.
NETRA_DEVICE u32 shfl_sync_bfly_b32(u32 value, u32 lane_mask) {
  u32 r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(value), "r"(lane_mask));
  return r;
}

/// shfl.sync.idx.b32 over the full warp: lane i receives `value` of lane `source_lane`.
NETRA_DEVICE u32 shfl_sync_idx_b32(u32 value, u32 source_lane) {
  u32 r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(value), "r"(source_lane));
  return r;
}
}  // namespace netra::sm90a_isa
