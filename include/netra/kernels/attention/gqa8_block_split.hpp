// netra/kernels/attention/gqa8_block_split.hpp — which part of a block warp j of the BlockSplit = S
// warps of one contracts::attention_gqa8 wave computes (host and device; the Stages 0 staging,
// gqa8_stage_one_direct.hpp, uses it with a compile-time j). Over a plan (dsl/attention_fragment.hpp)
// with T score tiles and G = pv_halves * 4 PV operand groups (h, w):
//   QK: tiles [j T / S, (j + 1) T / S) (their K chunks k(qk_chunks t + c)); the scores of the
//       other tiles come through LDS, so every warp takes the whole block's online-softmax step;
//   PV: groups [j G / S, (j + 1) G / S), i.e. the M-tiles pv_tile(h, w, *) of those groups and
//       their o items; of each V chunk pv_chunk(kk, h, i) of its half h the warp reads words
//       [w0, w1) only (4 (w1 - w0) contiguous bytes).
// S = 1 is the whole block (w0, w1 = 0, 4). Each element's instructions are the unsplit plan's.
// A two-token plan (gqa8_wave_plan.hpp) splits each token's o alike: its groups feed both tokens.
#pragma once
#include "netra/dsl/attention_fragment.hpp"

namespace netra::kernels {

template <class Plan, u32 S, u32 J> struct gqa8_block_split {
  static constexpr u32 tiles = Plan::qk_tiles, groups = Plan::pv_halves * 4;
  static_assert(S >= 1 && J < S && tiles % S == 0 && groups % S == 0, "netra::kernels::gqa8_block_split: S must divide the plan's tiles and groups");
  static constexpr u32 t0 = J * tiles / S, t1 = (J + 1) * tiles / S;
  static constexpr u32 g0 = J * groups / S, g1 = (J + 1) * groups / S;
  static_assert(S == 1 || g0 / 4 == (g1 - 1) / 4, "netra::kernels::gqa8_block_split: a split warp's groups lie in one half");
  static constexpr u32 w0 = S == 1 ? 0 : g0 % 4, w1 = S == 1 ? 4 : w0 + (g1 - g0);

  NETRA_HOST_DEVICE static constexpr bool owns_tile(u32 t) { return t - t0 < t1 - t0; }  // unsigned: t0 <= t < t1
  NETRA_HOST_DEVICE static constexpr bool owns_group(u32 g) { return g - g0 < g1 - g0; }  // unsigned: g0 <= g < g1
  /// The PV group (4h + w) whose instructions write M-tile mt.
  NETRA_HOST_DEVICE static constexpr u32 group_of_tile(u32 mt) {
    for (u32 h = 0; h < Plan::pv_halves; ++h)
      for (u32 w = 0; w < 4; ++w)
        for (u32 t = 0; t < Plan::pv_tiles_per_group; ++t)
          if (Plan::pv_tile(h, w, t) == mt) return 4 * h + w;
    return groups;
  }
  /// Item i of o is in M-tile i / 4 of its token (a two-token plan's o: one token's tiles, then the other's).
  static constexpr u32 o_tiles = groups * Plan::pv_tiles_per_group;
  NETRA_HOST_DEVICE static constexpr bool owns_o_item(u32 i) { return S == 1 || owns_group(group_of_tile((i / 4) % o_tiles)); }
  NETRA_HOST_DEVICE static constexpr bool owns_score(u32 i) { return owns_tile(Plan::score_tile(i)); }
  /// Whether V chunk j of the block feeds one of the warp's groups (at k-step j's).
  NETRA_HOST_DEVICE static constexpr bool reads_v_chunk(u32 j) {
    if constexpr (S == 1) {
      return j < Plan::v_reads;
    } else {
      for (u32 kk = 0; kk < Plan::pv_steps; ++kk)
        for (u32 i = 0; i < Plan::pv_gather; ++i)
          if (Plan::pv_chunk(kk, g0 / 4, i) == j) return true;
      return false;
    }
  }
  /// The score exchange between a wave's warps (rows of Stride floats; rows past Plan::rows are
  /// padding, never written or kept): the warp's own score items of a block into the rows, and
  /// every item of the block back (after a barrier that orders the partner's writes).
  template <u32 Stride> NETRA_DEVICE static void write_scores(const float (&s)[Plan::scores], float* exchange, u32 lane) {
    NETRA_UNROLL
    for (u32 i = 0; i < Plan::scores; ++i) {
      const fragment_element e = Plan::score_of(lane, i);
      if (owns_score(i) && e.row < Plan::rows) exchange[e.row * Stride + e.col] = s[i];
    }
  }
  template <u32 Stride> NETRA_DEVICE static void read_scores(float (&s)[Plan::scores], const float* exchange, u32 lane) {
    NETRA_UNROLL
    for (u32 i = 0; i < Plan::scores; ++i) {
      const fragment_element e = Plan::score_of(lane, i);
      s[i] = e.row < Plan::rows ? exchange[e.row * Stride + e.col] : 0.0f;
    }
  }
};

}  // namespace netra::kernels
