// netra/dsl/arch/amdgcn/vote.hpp — wave64 votes on gfx9 CDNA, one wrapper per instruction.
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_HIP)
namespace netra::amdgcn_isa {
/// v_cmp_ne_u32 into an SGPR pair (the ballot idiom): bit i is `predicate` of lane i.
NETRA_DEVICE u64 ballot_w64(bool predicate) {
#if __has_builtin(__builtin_amdgcn_ballot_w64)
  return __builtin_amdgcn_ballot_w64(predicate);
#else  // older clang (hipRTC of ROCm 5): the icmp builtin emits the same v_cmp_ne_u32 (33 = ICMP_NE)
  return __builtin_amdgcn_uicmp(static_cast<u32>(predicate), 0u, 33);
#endif
}
/// s_bcnt1_i32_b64 (or v_bcnt_u32_b32 twice for a divergent value): number of set bits.
NETRA_DEVICE u32 bcnt_u64(u64 v) { return static_cast<u32>(__builtin_popcountll(v)); }
}  // namespace netra::amdgcn_isa
#endif
