// netra/kernels/norm/group_quarters.hpp — the E4M3 groups of a norm thread's four chunk slots where
// a group is 16 consecutive lanes, each lane holding one chunk of each of four groups (contract
// field Chain bit 32; rms / add_rms: slot s of lane j is chunk j + 64 s, group j / 16 + 4 s).
// Instead of four butterflies and four quantizers per lane:
//   amax:      per slot the packed 16-bit maximum of its BF16 magnitudes (bits & 0x7FFF, the integer
//              order of bf16x2_magnitude_max: NaN above +Inf); slots (0, 1) and (2, 3) paired in one
//              word each (lo: the even slot); the xor stage of mask 8 sends the pair the lane does not
//              keep (lane bit 3 set: it keeps pair 1), the stages 4, 2, 1 reduce the kept pair, lane
//              bit 2 picks the half: lane quarter s of the group (lanes 4 s .. 4 s + 3) holds slot s's
//              amax. An integer maximum: the same amax in any order.
//   quantizer: group_quantizer<Chain> of the lane's own slot (one per lane); slot s's m, d, rcp read
//              from lane 4 s of the group; the scale stored by that lane (stores_scale).
//   quotients: act_quant_divider::quotient of each value; where no group of the wave has
//              0 < amax < 2^-60 (scales_values), without the scaling by m (one wave-uniform branch).
// The bits of e4m3_block_quantizer::of and quotient for every value: only who computes what moves.
#pragma once
#include "netra/dsl/block_quant.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/wave_vote.hpp"
#include "netra/kernels/norm/group_reciprocal.hpp"

namespace netra::kernels {

template <class Target, u32 Chain> struct group_quarters {
  static constexpr u32 slots = 4;

  /// Lane quarter s holds slot s (host model: the same map).
  NETRA_HOST_DEVICE static constexpr u32 slot_of_lane(u32 lane) { return (lane >> 2) & 3u; }
  /// True for the lane that stores slot s's scale: the first lane of quarter s.
  NETRA_HOST_DEVICE static constexpr bool stores_scale(u32 lane, u32 s) { return (lane & 15u) == 4u * s; }

  /// The packed magnitudes of a chunk's 8 BF16 values: lo the even values' maximum, hi the odd's.
  NETRA_HOST_DEVICE static u32 chunk_magnitudes(const u32 (&words)[4]) {
    const u32 a = max_u16x2(words[0] & 0x7FFF7FFFu, words[1] & 0x7FFF7FFFu), b = max_u16x2(words[2] & 0x7FFF7FFFu, words[3] & 0x7FFF7FFFu);
    return max_u16x2(a, b);
  }
  /// Slots 2 p (lo) and 2 p + 1 (hi) in one word, each half its slot's maximum.
  NETRA_HOST_DEVICE static u32 pair_of(u32 even, u32 odd) {
    return max_u16x2((even & 0xFFFFu) | (odd << 16), (even >> 16) | (odd & 0xFFFF0000u));
  }
  /// The lane's two pairs before any exchange.
  struct pairs {
    u32 low, high;  // slots (0, 1), slots (2, 3)
    NETRA_HOST_DEVICE static pairs of(const u32 (&y)[slots][4]) {
      return {pair_of(chunk_magnitudes(y[0]), chunk_magnitudes(y[1])), pair_of(chunk_magnitudes(y[2]), chunk_magnitudes(y[3]))};
    }
    /// The pair a lane keeps and the one it sends at the stage of mask 8 (upper: lane bit 3).
    NETRA_HOST_DEVICE u32 kept(bool upper) const { return upper ? high : low; }
    NETRA_HOST_DEVICE u32 sent(bool upper) const { return upper ? low : high; }
  };
  /// The lane's slot's amax from its reduced pair (lane bit 2 picks the half).
  NETRA_HOST_DEVICE static u32 own_half(u32 kept, u32 lane) { return (lane & 4u) != 0 ? kept >> 16 : kept & 0xFFFFu; }
  /// The amax of the lane's slot over the group's 16 lanes (every lane of the wave takes part): the
  /// stage of mask 8 on the sent pair, then 4, 2, 1 on the kept one (tests/kernels/test_norm_group_quarters.cpp
  /// runs these stages over every lane of a wave32 and a wave64).
  NETRA_DEVICE static u32 amax(const u32 (&y)[slots][4]) {
    const pairs p = pairs::of(y);
    const u32 lane = lane_id<Target>();
    const bool upper = (lane & 8u) != 0;
    u32 kept = max_u16x2(p.kept(upper), xor_shuffle_u32<Target>(p.sent(upper), 8));
NETRA_UNROLL
    for (u32 mask = 4; mask >= 1; mask >>= 1) kept = max_u16x2(kept, xor_shuffle_u32<Target>(kept, mask));
    return own_half(kept, lane);
  }
  /// The lane that holds slot s of the lane's group (the broadcast's source).
  NETRA_HOST_DEVICE static constexpr u32 source_of(u32 lane, u32 s) { return (lane & ~15u) + 4u * s; }

  /// Quantizes the four slots' chunks y[s] into E4M3 words q[s] (two per chunk); returns the
  /// quantizer of the lane's own slot (its scale is the group's).
  NETRA_DEVICE static e4m3_block_quantizer quantize(const u32 (&y)[slots][4], u32 (&q)[slots][2]) {
    const u32 magnitude = amax(y);
    const e4m3_block_quantizer own = group_quantizer<Chain>(magnitude);
    if (wave_ballot<Target>(act_quant_divider::scales_values(magnitude)) != 0) divide<true>(own, y, q);
    else divide<false>(own, y, q);
    return own;
  }

 private:
  template <bool Scaled> NETRA_DEVICE static void divide(const e4m3_block_quantizer& own, const u32 (&y)[slots][4], u32 (&q)[slots][2]) {
    const u32 lane = lane_id<Target>();
NETRA_UNROLL
    for (u32 s = 0; s < slots; ++s) {
      const u32 source = source_of(lane, s);
      const act_quant_divider divider{Scaled ? bit_cast<float>(wave_broadcast<Target>(bit_cast<u32>(own.divider.m), source)) : 1.0f,
                                      bit_cast<float>(wave_broadcast<Target>(bit_cast<u32>(own.divider.d), source)),
                                      bit_cast<float>(wave_broadcast<Target>(bit_cast<u32>(own.divider.rcp), source))};
      u32 packed[4];
NETRA_UNROLL
      for (u32 e = 0; e < 4; ++e)
        packed[e] = pack_e4m3x2<Target>(divider.quotient<Scaled>(bit_cast<float>(y[s][e] << 16)), divider.quotient<Scaled>(bit_cast<float>(y[s][e] & 0xFFFF0000u)));
      q[s][0] = packed[0] | (packed[1] << 16);
      q[s][1] = packed[2] | (packed[3] << 16);
    }
  }
};

}  // namespace netra::kernels
