// netra/kernels/attention/gqa8_wave_plan.hpp — the matrix plan of one contracts::attention_gqa8
// wave: how many query tokens its tile holds (Contract::tokens_per_wave) and how its lane items
// map to rows. One token (decode; the GQA4 extend's pair view): the pair-view plan of
// dsl/attention_fragment.hpp, 8 real rows of a 16-row tile. Two tokens (verify, Tq even): all 16
// rows real, row 8 tau + r = head r of the wave's token tau, so no QK instruction multiplies padding.
// Per plan (besides dsl/attention_fragment.hpp's maps and products qk / pv):
//   score_row_slots: rows a lane's score items cover; score_row_slot(i): which one item i is in;
//   o_row_score_slot(k): the score slot of the lane that holds the statistics of o row slot k.
// Both two-token plans keep the one-token plan's association per row: a row's score items sit at
// the same positions in the same lane and item order, so l and every merge are the same bits
// (tests/kernels/test_attention_gqa8_pair_plan.cpp composes them with the instruction models).
//   MFMA (gfx950, gfx942): query rows are the 16 N columns (lane % 16): the pair view itself with
//     columns 8..15 real; a lane's items all belong to row lane % 16.
//   sm90a (mma.sync m16n8k16): QK's A rows g (token 0) and g + 8 (token 1) are both real, score
//     item i = accumulator item i % 4 of N-tile i / 4 (rows g, g + 8 as the extend's 16-row plan);
//     PV keeps O^T = V^T P^T per token: the V^T operands are built once and feed both tokens'
//     P^T (o items 64 tau + j are the one-token plan's item j of token tau).
#pragma once
#include "netra/dsl/attention_fragment.hpp"

namespace netra::kernels {

/// One token per wave: the pair-view plan, its rows all in one score slot.
template <class Shape> struct gqa8_single_plan : attention_plan<Shape> {
  static constexpr u32 tokens = 1, score_row_slots = 1;
  NETRA_HOST_DEVICE static constexpr u32 score_row_slot(u32) { return 0; }
  NETRA_HOST_DEVICE static constexpr u32 o_row_score_slot(u32) { return 0; }
};

/// Two tokens per wave, MFMA 16x16 shapes: the pair view with its 16 columns real.
template <class Shape> struct gqa8_pair_plan : gqa8_single_plan<Shape> {
  static_assert(Shape::n == 16 && Shape::wave_size == 64, "netra::kernels::gqa8_pair_plan: no two-token plan for this matrix fragment shape");
  static constexpr u32 tokens = 2, rows = 16;
};

/// Two tokens per wave, sm90a mma.sync m16n8k16 BF16 (g = lane >> 2, t = lane & 3).
template <> struct gqa8_pair_plan<mma_m16n8k16_bf16> {
  using view = attention_plan<mma_m16n8k16_bf16>;  // one token's plan: K / V reads, V^T operands, o map
  using shape = mma_m16n8k16_bf16;
  using target = typename view::target;
  static constexpr u32 tokens = 2, wave = 32, rows = 16, block = 64, head_dim = 256;
  static constexpr u32 q_loads = 16, k_reads = view::k_reads, v_reads = view::v_reads, scores = 32, o_items = 2 * view::o_items;
  static constexpr u32 qk_chunks = view::qk_chunks, qk_tiles = view::qk_tiles, pv_steps = view::pv_steps;
  static constexpr u32 pv_halves = view::pv_halves, pv_gather = view::pv_gather, pv_tiles_per_group = view::pv_tiles_per_group;
  static constexpr u32 score_row_slots = 2, o_row_slots = 2 * view::o_row_slots;
  static constexpr bool o_rows_are_score_rows = false;
  NETRA_HOST_DEVICE static constexpr u32 row_mask(u32 i) { return view::row_mask(i); }

  /// Q load j: token j / 8's load j % 8 of the one-token plan.
  NETRA_HOST_DEVICE static constexpr fragment_element q_load(u32 lane, u32 j) {
    const fragment_element e = view::q_load(lane, j % 8);
    return {e.row + 8 * (j / 8), e.col};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element k_read(u32 lane, u32 j) { return view::k_read(lane, j); }
  NETRA_HOST_DEVICE static constexpr fragment_element v_read(u32 lane, u32 j) { return view::v_read(lane, j); }
  NETRA_HOST_DEVICE static constexpr fragment_element score_of(u32 lane, u32 i) {
    return {(lane >> 2) + 8 * ((i % 4) / 2), 8 * (i / 4) + 2 * (lane & 3) + i % 2};
  }
  NETRA_HOST_DEVICE static constexpr u32 score_row_slot(u32 i) { return (i % 4) / 2; }
  NETRA_HOST_DEVICE static constexpr u32 score_tile(u32 i) { return i / 4; }
  NETRA_HOST_DEVICE static constexpr u32 pv_chunk(u32 kk, u32 h, u32 i) { return view::pv_chunk(kk, h, i); }
  /// Token 0's M-tile of group (h, w), instruction t (token 1's: + 16).
  NETRA_HOST_DEVICE static constexpr u32 pv_tile(u32 h, u32 w, u32 t) { return view::pv_tile(h, w, t); }
  NETRA_HOST_DEVICE static constexpr fragment_element o_of(u32 lane, u32 i) {
    const fragment_element e = view::o_of(lane, i % view::o_items);
    return {e.row + 8 * (i / view::o_items), e.col};
  }
  NETRA_HOST_DEVICE static constexpr u32 stats_lane(u32 row) { return view::stats_lane(row % 8); }
  NETRA_HOST_DEVICE static constexpr u32 o_row(u32 lane, u32 k) { return view::o_row(lane, k % view::o_row_slots) + 8 * (k / view::o_row_slots); }
  NETRA_HOST_DEVICE static constexpr u32 o_row_slot(u32 i) { return view::o_row_slot(i % view::o_items) + view::o_row_slots * (i / view::o_items); }
  NETRA_HOST_DEVICE static constexpr u32 o_row_score_slot(u32 k) { return k / view::o_row_slots; }

  // Builders (host and device).
  /// A of QK k-step `step` from token 0's and token 1's Q loads of the step (rows g, g + 8).
  NETRA_HOST_DEVICE static void qk_a(u32 (&a)[4], const u32x4& q0, const u32x4& q1, u32 step) {
    u32 lo[4], hi[4];
    view::qk_a(lo, q0, step);
    view::qk_a(hi, q1, step);
    a[0] = lo[0], a[1] = hi[0], a[2] = lo[2], a[3] = hi[2];
  }
  /// P^T of token `token` at PV k-step kk from the BF16 pair words (word 2 nt + token: N-tile nt's row g + 8 token).
  NETRA_HOST_DEVICE static void pv_b(u32 (&b)[2], const u32 (&p)[scores / 2], u32 kk, u32 token) { b[0] = p[4 * kk + token], b[1] = p[4 * kk + 2 + token]; }

#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
  /// s = the unscaled FP32 scores (score_of order) from Q loads q(j) and the widened K chunks kw(j);
  /// N-tiles [T0, T1) only (a BlockSplit warp's share: the other items are 0).
  template <u32 T0 = 0, u32 T1 = qk_tiles, class ReadQ, class ReadWide> static NETRA_DEVICE void qk(float (&s)[scores], ReadQ q, ReadWide kw) {
    float acc[qk_tiles][4] = {};
    NETRA_UNROLL
    for (u32 c = 0; c < qk_chunks; ++c) {
      const u32x4 q00 = q(2 * c), q01 = q(2 * c + 1), q10 = q(8 + 2 * c), q11 = q(8 + 2 * c + 1);
      NETRA_UNROLL
      for (u32 t = T0; t < T1; ++t) {
        const wide_chunk k4 = kw(qk_chunks * t + c);
        NETRA_UNROLL
        for (u32 step = 4 * c; step < 4 * c + 4; ++step) {
          u32 a[4];
          qk_a(a, step % 4 < 2 ? q00 : q01, step % 4 < 2 ? q10 : q11, step);
          const u32 b[2] = {k4.w[step % 4].lo, k4.w[step % 4].hi};
          mma<shape>(acc[t], a, b, acc[t]);
        }
      }
    }
    NETRA_UNROLL
    for (u32 i = 0; i < scores; ++i) s[i] = acc[i / 4][i % 4];
  }
  /// o += P V over the block for both tokens (vw(j): the widened V chunk j, read once for both);
  /// groups g = 4h + w in [G0, G1) only (a BlockSplit warp's share of the head dimension).
  template <u32 G0 = 0, u32 G1 = 4 * pv_halves, class ReadWide> static NETRA_DEVICE void pv(float (&o)[o_items], const u32 (&p)[scores / 2], ReadWide vw) {
    NETRA_UNROLL
    for (u32 kk = 0; kk < pv_steps; ++kk) {
      u32 b[2][2];
      pv_b(b[0], p, kk, 0);
      pv_b(b[1], p, kk, 1);
      NETRA_UNROLL
      for (u32 h = 0; h < 2; ++h)
        NETRA_UNROLL
        for (u32 w = 0; w < 4; ++w) {
          if (4 * h + w - G0 >= G1 - G0) continue;  // outside [G0, G1) (unsigned); constant once unrolled
          bf16x4 x[4];
          NETRA_UNROLL
          for (u32 i = 0; i < 4; ++i) x[i] = vw(view::pv_chunk(kk, h, i)).w[w];
          u32 a[2][4];
          view::pv_a<0>(a[0], x);
          view::pv_a<1>(a[1], x);
          NETRA_UNROLL
          for (u32 tok = 0; tok < 2; ++tok)
            NETRA_UNROLL
            for (u32 hi = 0; hi < 2; ++hi) {
              float* acc = o + 4 * (16 * tok + view::pv_tile(h, w, hi));
              float d[4] = {acc[0], acc[1], acc[2], acc[3]};
              mma<shape>(d, a[hi], b[tok], d);
              acc[0] = d[0], acc[1] = d[1], acc[2] = d[2], acc[3] = d[3];
            }
        }
    }
  }
#endif
};

/// The plan of a wave holding Tokens query tokens on Target's BF16 matrix instruction.
template <class Target, u32 Tokens>
using gqa8_wave_plan_of = conditional_t<Tokens == 1, gqa8_single_plan<typename fragment::matrix_instructions<Target>::bf16>,
                                        gqa8_pair_plan<typename fragment::matrix_instructions<Target>::bf16>>;

/// Tokens per wave of a contract (1 for a contract that does not say: the GQA4 extend's pair view).
template <class Contract> constexpr u32 gqa8_tokens_per_wave() {
  if constexpr (requires { Contract::tokens_per_wave; }) return Contract::tokens_per_wave;
  else return 1;
}

}  // namespace netra::kernels
