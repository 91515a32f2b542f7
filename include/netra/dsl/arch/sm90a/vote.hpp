// netra/dsl/arch/sm90a/vote.hpp — warp votes, one wrapper per PTX instruction.
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_CUDA)
namespace netra::sm90a_isa {
/// vote.sync.ballot.b32 over the full warp: bit i is `predicate` of lane i.
NETRA_DEVICE u32 vote_sync_ballot_b32(bool predicate) {
  u32 r;
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }" : "=r"(r) : "r"(predicate ? 1u : 0u));
  return r;
}
/// match.any.sync.b32 over the full warp: the lanes whose `value` equals this lane's.
NETRA_DEVICE u32 match_any_sync_b32(u32 value) {
  u32 r;
  asm volatile("match.any.sync.b32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(value));
  return r;
}
/// popc.b32
NETRA_DEVICE u32 popc_b32(u32 v) {
  u32 r;
  asm("popc.b32 %0, %1;" : "=r"(r) : "r"(v));
  return r;
}
}  // namespace netra::sm90a_isa
#endif
