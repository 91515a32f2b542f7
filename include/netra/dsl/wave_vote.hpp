// netra/dsl/wave_vote.hpp — wave-wide votes, target-neutral: a predicate of every lane as a bit
// mask (bit i = lane i; 64 bits on gfx950, the low 32 on sm90a), and bit counting on masks.
#pragma once
#include "netra/dsl/target.hpp"

#if defined(NETRA_COMPILER_HIP)
#include "netra/dsl/arch/amdgcn/cross_lane.hpp"
#include "netra/dsl/arch/amdgcn/vote.hpp"
#endif
#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/vote.hpp"
#endif

namespace netra {
template <class Target> struct wave_vote_ops {
  static_assert(dependent_false_v<Target>, "netra::wave_vote_ops: this compiler cannot generate code for the target");
};
#if defined(NETRA_COMPILER_HIP)
template <> struct wave_vote_ops<gfx950> {
  static NETRA_DEVICE u64 ballot(bool p) { return amdgcn_isa::ballot_w64(p); }
  static NETRA_DEVICE u32 popcount(u64 m) { return amdgcn_isa::bcnt_u64(m); }
  /// No match instruction on CDNA: one ballot per distinct value, leader = lowest lane not yet
  /// matched (its value read by ds_bpermute).
  static NETRA_DEVICE u64 match(u32 value) {
    u64 todo = amdgcn_isa::ballot_w64(true), mine = 0;
    while (todo != 0) {  // uniform
      const u32 leader = amdgcn_isa::bcnt_u64(todo ^ (todo - 1)) - 1;  // lowest set bit
      const u32 v = amdgcn_isa::ds_bpermute_b32(leader << 2, value);
      const u64 same = amdgcn_isa::ballot_w64(v == value);
      mine = v == value ? same : mine;
      todo &= ~same;
    }
    return mine;
  }
  /// Binary search on prefix counts (v_bcnt): 6 steps over 64 bits.
  static NETRA_DEVICE u32 nth_set(u64 mask, u32 n) {
    u32 base = 0;
    NETRA_UNROLL
    for (u32 width = 32; width >= 1; width >>= 1) {
      const u32 below = amdgcn_isa::bcnt_u64(mask & ((u64{1} << width) - 1));
      const bool up = below <= n;
      n = up ? n - below : n;
      mask = up ? mask >> width : mask;
      base = up ? base + width : base;
    }
    return base;
  }
};
/// gfx942 (CDNA3, wave64): the same instructions as gfx950 (s_bcnt, ds_bpermute, 64-bit ballots).
template <> struct wave_vote_ops<gfx942> : wave_vote_ops<gfx950> {};
#endif
#if defined(NETRA_COMPILER_CUDA)
template <> struct wave_vote_ops<sm90a> {
  static NETRA_DEVICE u64 ballot(bool p) { return sm90a_isa::vote_sync_ballot_b32(p); }
  static NETRA_DEVICE u32 popcount(u64 m) { return sm90a_isa::popc_b32(static_cast<u32>(m)); }
  static NETRA_DEVICE u64 match(u32 value) { return sm90a_isa::match_any_sync_b32(value); }
  /// Binary search on prefix counts (popc.b32): 5 steps over the warp's 32 bits.
  static NETRA_DEVICE u32 nth_set(u64 mask64, u32 n) {
    u32 mask = static_cast<u32>(mask64), base = 0;
    NETRA_UNROLL
    for (u32 width = 16; width >= 1; width >>= 1) {
      const u32 below = sm90a_isa::popc_b32(mask & ((1u << width) - 1u));
      const bool up = below <= n;
      n = up ? n - below : n;
      mask = up ? mask >> width : mask;
      base = up ? base + width : base;
    }
    return base;
  }
};
#endif

/// Bit i set when `predicate` is true in lane i (all lanes of the wave must call it).
template <class Target> NETRA_DEVICE u64 wave_ballot(bool predicate) { return wave_vote_ops<Target>::ballot(predicate); }
/// The lanes whose `value` equals this lane's, as a wave mask (all lanes of the wave must call it).
template <class Target> NETRA_DEVICE u64 wave_match(u32 value) { return wave_vote_ops<Target>::match(value); }
/// Lanes below `lane` as a wave mask.
NETRA_HOST_DEVICE constexpr u64 lanes_below(u32 lane) { return (u64{1} << lane) - 1; }
/// Number of set bits of a wave mask.
template <class Target> NETRA_DEVICE u32 mask_popcount(u64 mask) { return wave_vote_ops<Target>::popcount(mask); }
/// Position of the set bit of a wave mask with exactly n set bits below it (n < popcount);
/// the device form of nth_set_bit below.
template <class Target> NETRA_DEVICE u32 mask_nth_set(u64 mask, u32 n) { return wave_vote_ops<Target>::nth_set(mask, n); }

/// Number of set bits, written out (NVRTC has no __builtin_popcountll); host and device.
NETRA_HOST_DEVICE constexpr u32 bit_count_u64(u64 v) {
  v = v - ((v >> 1) & 0x5555555555555555ul);
  v = (v & 0x3333333333333333ul) + ((v >> 2) & 0x3333333333333333ul);
  v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Ful;
  return static_cast<u32>((v * 0x0101010101010101ul) >> 56);
}

/// Position of the set bit of `mask` that has exactly `n` set bits below it (n < popcount(mask));
/// a binary search on prefix counts, the same on every target (host-testable).
NETRA_HOST_DEVICE constexpr u32 nth_set_bit(u64 mask, u32 n) {
  u32 base = 0;
  for (u32 width = 32; width >= 1; width >>= 1) {
    const u64 low = width == 64 ? mask : (mask & ((u64{1} << width) - 1));
    const u32 below = bit_count_u64(low);
    if (below <= n) {
      n -= below;
      mask >>= width;
      base += width;
    }
  }
  return base;
}
}  // namespace netra
