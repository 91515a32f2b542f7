// netra/kernels/attention/extend_plan.hpp — how one warp of the native GQA4 extend
// (contracts::attention_gqa4_extend_native) computes the scores S = Q K^T and the value sum
// O = P V of 16 query rows over a block of 64 positions with head dim 128, on sm90a's mma.sync
// m16n8k16 BF16 (A = Q or P, 16 rows x 16; B = K^T or V, 16 x 8; g = lane >> 2, t = lane & 3).
// A lane holds rows g (accumulator items 0, 1) and g + 8 (items 2, 3) of every tile.
//   QK: N-tile nt = positions 8nt .. 8nt + 7; k-step s (0..7) of chunk c = s / 4 pairs the
//     head-dim elements 64c + 16t + 4(s % 4) + {0, 1} (A words 0 / 1, B word 0) and + {2, 3}
//     (A words 2 / 3, B word 1): the k-steps of dsl/attention_fragment.hpp's sm90a plan over the
//     half of the pair view's 256-wide row that holds the head, without the zero half.
//   PV: the score accumulators of N-tiles 2kk, 2kk + 1 are P's A operand of k-step kk (positions
//     16kk .. 16kk + 15 in order, as in the pair view); column n of N-tile nd is element 16n + nd,
//     so lane (g, t) reads chunk g of positions 16kk + 2t + {0, 1, 8, 9} and widens each once for
//     all 16 N-tiles. A row's weights, sums and o items therefore meet the pair view's in the
//     same order (scores: positions 8nt + 2t + {0, 1} of row g in nt order, as score_of there).
// The lane maps are host-callable (tests/kernels/test_attention_extend_plan.cpp composes them
// with the m16n8k16 element maps).
#pragma once
#include "netra/dsl/attention_fragment.hpp"

namespace netra::kernels {

template <class Shape> struct extend_plan {
  static_assert(dependent_false_v<Shape>, "netra::kernels::extend_plan: no native extend plan for this matrix fragment shape");
};

template <> struct extend_plan<mma_m16n8k16_bf16> {
  using shape = mma_m16n8k16_bf16;
  static constexpr u32 rows = 16, block = 64, head_dim = 128, q_loads = 8, k_reads = 16, v_reads = 16, scores = 32, o_items = 64;
  using q_operands = u32[8][4];   // A operand of QK k-step s
  using accumulators = float[8][4];  // S per N-tile
  using o_accumulators = float[16][4];

  /// Q load j: 8 BF16 of row g + 8 (j / 4) from element 64 ((j / 2) % 2) + 16t + 8 (j % 2).
  NETRA_HOST_DEVICE static constexpr fragment_element q_load(u32 lane, u32 j) {
    return {(lane >> 2) + 8 * (j / 4), 64 * ((j / 2) % 2) + 16 * (lane & 3) + 8 * (j % 2)};
  }
  /// K read j (N-tile j / 2, chunk c = j % 2): (position, 16-byte chunk of the 128-byte row).
  NETRA_HOST_DEVICE static constexpr fragment_element k_read(u32 lane, u32 j) { return {8 * (j / 2) + (lane >> 2), 4 * (j % 2) + (lane & 3)}; }
  /// V read j (k-step j / 4, e = j % 4): position 16 (j / 4) + 2t + (e & 1) + 8 (e >> 1), chunk g.
  NETRA_HOST_DEVICE static constexpr fragment_element v_read(u32 lane, u32 j) {
    const u32 e = j % 4;
    return {16 * (j / 4) + 2 * (lane & 3) + (e & 1) + 8 * (e >> 1), lane >> 2};
  }
  /// Score item i = accumulator [i / 4][i % 4]: (row, position).
  NETRA_HOST_DEVICE static constexpr fragment_element score_of(u32 lane, u32 i) {
    return {(lane >> 2) + 8 * ((i % 4) / 2), 8 * (i / 4) + 2 * (lane & 3) + i % 2};
  }
  /// O item i = accumulator [i / 4][i % 4]: (row, head-dim element).
  NETRA_HOST_DEVICE static constexpr fragment_element o_of(u32 lane, u32 i) {
    return {(lane >> 2) + 8 * ((i % 4) / 2), 32 * (lane & 3) + 16 * (i % 2) + i / 4};
  }
  /// The lanes a row's items are reduced over: xor 1, xor 2 (the t of one g).
  NETRA_HOST_DEVICE static constexpr u32 row_mask(u32 i) { return i == 0 ? 1u : 2u; }

  // Builders (host and device).
  /// A operand of k-step s from the 8 Q loads (load j in q[j]).
  NETRA_HOST_DEVICE static void qk_a(u32 (&a)[4], const u32x4 (&q)[q_loads], u32 s) {
    const u32 c = s / 4, i = s % 4, j = 2 * c + i / 2, w = 2 * (i % 2);
    a[0] = q[j][static_cast<int>(w)], a[1] = q[4 + j][static_cast<int>(w)], a[2] = q[j][static_cast<int>(w + 1)], a[3] = q[4 + j][static_cast<int>(w + 1)];
  }
  /// B operand of k-step s % 4 from K read 2nt + s / 4, widened.
  NETRA_HOST_DEVICE static void qk_b(u32 (&b)[2], const wide_chunk& k, u32 s) { b[0] = k.w[s % 4].lo, b[1] = k.w[s % 4].hi; }
  /// A operand of PV k-step kk from the BF16 weight pairs p[nt][rh] (row g + 8 rh, items 2 rh, 2 rh + 1).
  NETRA_HOST_DEVICE static void pv_a(u32 (&a)[4], const u32 (&p)[8][2], u32 kk) {
    a[0] = p[2 * kk][0], a[1] = p[2 * kk][1], a[2] = p[2 * kk + 1][0], a[3] = p[2 * kk + 1][1];
  }
  /// B operand of N-tile nd from the widened V reads of one k-step (x[e]: read 4kk + e).
  NETRA_HOST_DEVICE static void pv_b(u32 (&b)[2], const wide_chunk (&x)[4], u32 nd) {
    const u32 i = nd / 4, hi = (nd % 4) / 2;
    const u32 x0 = hi ? x[0].w[i].hi : x[0].w[i].lo, x1 = hi ? x[1].w[i].hi : x[1].w[i].lo;
    const u32 x8 = hi ? x[2].w[i].hi : x[2].w[i].lo, x9 = hi ? x[3].w[i].hi : x[3].w[i].lo;
    b[0] = nd % 2 ? pair_halves<1>(x0, x1) : pair_halves<0>(x0, x1);
    b[1] = nd % 2 ? pair_halves<1>(x8, x9) : pair_halves<0>(x8, x9);
  }

#if defined(NETRA_COMPILER_CUDA)
  /// acc = the block's unscaled FP32 scores (acc zeroed here); k(j): the E4M3 K read j, widen(word):
  /// its BF16 (each word widened once, when its k-step needs it).
  template <class Read, class Widen> static NETRA_DEVICE void qk(accumulators& acc, const q_operands& qa, Read k, Widen widen) {
    NETRA_UNROLL
    for (u32 nt = 0; nt < 8; ++nt) {
      acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
      NETRA_UNROLL
      for (u32 c = 0; c < 2; ++c) {
        const u32x4 raw = k(2 * nt + c);
        NETRA_UNROLL
        for (u32 i = 0; i < 4; ++i) {
          const bf16x4 w = widen(raw[static_cast<int>(i)]);
          u32 b[2] = {w.lo, w.hi};
          mma<shape>(acc[nt], qa[4 * c + i], b, acc[nt]);
        }
      }
    }
  }
  /// o += P V over the block (v(j): the E4M3 V read j; word i of the four reads of a k-step widened
  /// once for its 4 N-tiles).
  template <class Read, class Widen> static NETRA_DEVICE void pv(o_accumulators& o, const u32 (&p)[8][2], Read v, Widen widen) {
    NETRA_UNROLL
    for (u32 kk = 0; kk < 4; ++kk) {
      u32 a[4];
      pv_a(a, p, kk);
      const u32x4 raw[4] = {v(4 * kk), v(4 * kk + 1), v(4 * kk + 2), v(4 * kk + 3)};
      NETRA_UNROLL
      for (u32 i = 0; i < 4; ++i) {
        wide_chunk x[4];
        NETRA_UNROLL
        for (u32 e = 0; e < 4; ++e) x[e].w[i] = widen(raw[e][static_cast<int>(i)]);
        NETRA_UNROLL
        for (u32 nd = 4 * i; nd < 4 * i + 4; ++nd) {
          u32 b[2];
          pv_b(b, x, nd);
          mma<shape>(o[nd], a, b, o[nd]);
        }
      }
    }
  }
#endif
};

/// The native extend plan of a target's BF16 matrix instruction (gfx950's is not written).
template <class Target> using extend_plan_of = extend_plan<typename attention_plan_of<Target>::shape>;

}  // namespace netra::kernels
