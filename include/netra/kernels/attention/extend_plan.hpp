// netra/kernels/attention/extend_plan.hpp — how one wave of the native GQA4 extend
// (contracts::attention_gqa4_extend_native) computes the scores S = Q K^T and the value sum
// O = P V of its query rows over a block of 64 positions with head dim 128, on the target's BF16
// matrix instruction; the score accumulators are P's operand, every E4M3 word a lane reads is
// widened once (widen(word)), and each row's items meet dsl/attention_fragment.hpp's pair-view
// plan in the same order (so the native plan keeps the pair view's bits):
//   QK k-steps pair the same head-dim elements as the pair view's steps over the head's half
//   (whose other half there adds exact zeros); a row's score items sit at the same positions in
//   the same lane order; PV k-steps take the same positions in the same order.
// Interface (per lane; all maps host-callable, tests/kernels/test_attention_extend_plan.cpp):
//   rows: the wave's query rows (tile rows beyond them are padding: zero Q, never written);
//   q_load(lane, j) -> (row, first element) of 16-byte Q load j; q_operands(qa, q) builds them;
//   k_read / v_read(lane, j) -> (position, first byte in the 128-byte row) of K / V read j
//     (16 bytes; V: v_bytes);
//   score_of(lane, i), o_of(lane, i) -> (row, position / element); row_slot(i): which of the
//     lane's row_slots rows item i (score or o) belongs to (score_row_slot: the same, under the
//     name block_weights.hpp reads); its lanes: xor row_mask(0), row_mask(1);
//   qk(s, qa, k, widen): s = the unscaled FP32 scores; pv(o, p, v, widen): o += P V with p the
//     BF16 pair words of the weights (word w = items 2w, 2w + 1).
#pragma once
#include "netra/dsl/attention_fragment.hpp"

namespace netra::kernels {

template <class Shape> struct extend_plan {
  static_assert(dependent_false_v<Shape>, "netra::kernels::extend_plan: no native extend plan for this matrix fragment shape");
};

#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
/// o[4t .. 4t + 3] += A B: one instruction of Shape on tile t of a flat accumulator array.
template <class Shape, u32 N>
NETRA_DEVICE void extend_mma_tile(float (&o)[N], u32 t, const u32 (&a)[Shape::a_words], const u32 (&b)[Shape::b_words]) {
  float acc[4] = {o[4 * t], o[4 * t + 1], o[4 * t + 2], o[4 * t + 3]};
  mma<Shape>(acc, a, b, acc);
  o[4 * t] = acc[0], o[4 * t + 1] = acc[1], o[4 * t + 2] = acc[2], o[4 * t + 3] = acc[3];
}
#endif

/// Eight bytes of a V row (gfx950's V reads).
struct alignas(8) u32x2 {
  u32 x, y;
  NETRA_HOST_DEVICE constexpr u32 operator[](int i) const { return i == 0 ? x : y; }
};

/// sm90a, mma.sync m16n8k16 (A = Q or P 16 x 16, B = K^T or V 16 x 8; g = lane >> 2, t = lane & 3):
/// 16 rows per warp, rows g (items i % 4 < 2) and g + 8 of every tile.
///   QK: N-tile nt = positions 8nt .. 8nt + 7; k-step s (0..7) of chunk c = s / 4 pairs elements
///     64c + 16t + 4(s % 4) + {0, 1} (A words 0 / 1, B word 0) and + {2, 3} (A words 2 / 3, B word 1).
///   PV: the accumulators of N-tiles 2kk, 2kk + 1 are A of k-step kk (positions 16kk .. + 15);
///     column n of N-tile nd is element 16n + nd: lane (g, t) reads chunk g of positions
///     16kk + 2t + {0, 1, 8, 9}.
template <> struct extend_plan<mma_m16n8k16_bf16> {
  using shape = mma_m16n8k16_bf16;
  static constexpr u32 rows = 16, block = 64, head_dim = 128, q_loads = 8, k_reads = 16, v_reads = 16, v_bytes = 16;
  static constexpr u32 scores = 32, o_items = 64, row_slots = 2;
  using q_operands = u32[8][4];  // A of QK k-step s
  using v_raw = u32x4;
  NETRA_HOST_DEVICE static constexpr fragment_element q_load(u32 lane, u32 j) {
    return {(lane >> 2) + 8 * (j / 4), 64 * ((j / 2) % 2) + 16 * (lane & 3) + 8 * (j % 2)};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element k_read(u32 lane, u32 j) { return {8 * (j / 2) + (lane >> 2), 16 * (4 * (j % 2) + (lane & 3))}; }
  NETRA_HOST_DEVICE static constexpr fragment_element v_read(u32 lane, u32 j) {
    const u32 e = j % 4;
    return {16 * (j / 4) + 2 * (lane & 3) + (e & 1) + 8 * (e >> 1), 16 * (lane >> 2)};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element score_of(u32 lane, u32 i) {
    return {(lane >> 2) + 8 * ((i % 4) / 2), 8 * (i / 4) + 2 * (lane & 3) + i % 2};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element o_of(u32 lane, u32 i) {
    return {(lane >> 2) + 8 * ((i % 4) / 2), 32 * (lane & 3) + 16 * (i % 2) + i / 4};
  }
  NETRA_HOST_DEVICE static constexpr u32 row_slot(u32 i) { return (i % 4) / 2; }
  NETRA_HOST_DEVICE static constexpr u32 score_row_slot(u32 i) { return row_slot(i); }
  NETRA_HOST_DEVICE static constexpr u32 row_mask(u32 i) { return i == 0 ? 1u : 2u; }

  NETRA_HOST_DEVICE static void q_operands_of(q_operands& qa, const u32x4 (&q)[q_loads]) {
    NETRA_UNROLL
    for (u32 s = 0; s < 8; ++s) {
      const u32 j = 2 * (s / 4) + (s % 4) / 2, w = 2 * (s % 2);
      qa[s][0] = q[j][static_cast<int>(w)], qa[s][1] = q[4 + j][static_cast<int>(w)];
      qa[s][2] = q[j][static_cast<int>(w + 1)], qa[s][3] = q[4 + j][static_cast<int>(w + 1)];
    }
  }
  /// A of PV k-step kk from the weight pair words.
  NETRA_HOST_DEVICE static void pv_a(u32 (&a)[4], const u32 (&p)[scores / 2], u32 kk) {
    a[0] = p[4 * kk], a[1] = p[4 * kk + 1], a[2] = p[4 * kk + 2], a[3] = p[4 * kk + 3];
  }
  /// B of N-tile nd from word nd / 4 of the four V reads of a k-step, widened (x[e]: read 4kk + e).
  NETRA_HOST_DEVICE static void pv_b(u32 (&b)[2], const bf16x4 (&x)[4], u32 nd) {
    const bool hi = (nd % 4) / 2;
    const u32 x0 = hi ? x[0].hi : x[0].lo, x1 = hi ? x[1].hi : x[1].lo, x8 = hi ? x[2].hi : x[2].lo, x9 = hi ? x[3].hi : x[3].lo;
    b[0] = nd % 2 ? pair_halves<1>(x0, x1) : pair_halves<0>(x0, x1);
    b[1] = nd % 2 ? pair_halves<1>(x8, x9) : pair_halves<0>(x8, x9);
  }

#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
  template <class Read, class Widen> static NETRA_DEVICE void qk(float (&s)[scores], const q_operands& qa, Read k, Widen widen) {
    NETRA_UNROLL
    for (u32 nt = 0; nt < 8; ++nt) {
      s[4 * nt] = s[4 * nt + 1] = s[4 * nt + 2] = s[4 * nt + 3] = 0.0f;
      NETRA_UNROLL
      for (u32 c = 0; c < 2; ++c) {
        const u32x4 raw = k(2 * nt + c);
        NETRA_UNROLL
        for (u32 i = 0; i < 4; ++i) {
          const bf16x4 w = widen(raw[static_cast<int>(i)]);
          const u32 b[2] = {w.lo, w.hi};
          extend_mma_tile<shape>(s, nt, qa[4 * c + i], b);
        }
      }
    }
  }
  template <class Read, class Widen> static NETRA_DEVICE void pv(float (&o)[o_items], const u32 (&p)[scores / 2], Read v, Widen widen) {
    NETRA_UNROLL
    for (u32 kk = 0; kk < 4; ++kk) {
      u32 a[4];
      pv_a(a, p, kk);
      const v_raw raw[4] = {v(4 * kk), v(4 * kk + 1), v(4 * kk + 2), v(4 * kk + 3)};
      NETRA_UNROLL
      for (u32 i = 0; i < 4; ++i) {
        const bf16x4 x[4] = {widen(raw[0][static_cast<int>(i)]), widen(raw[1][static_cast<int>(i)]), widen(raw[2][static_cast<int>(i)]),
                             widen(raw[3][static_cast<int>(i)])};
        NETRA_UNROLL
        for (u32 nd = 4 * i; nd < 4 * i + 4; ++nd) {
          u32 b[2];
          pv_b(b, x, nd);
          extend_mma_tile<shape>(o, nd, a, b);
        }
      }
    }
  }
#endif
};

/// gfx950, v_mfma_f32_16x16x32_bf16 (wave64; r = lane % 16, q = lane / 16): positions / head-dim
/// slots on M, the wave's rows on the 16 N columns, 12 of them real (3 tokens x 4 heads;
/// columns 12..15 are padding). One row per lane (column r).
///   QK: S^T = K Q^T, M-tile t = positions 16t .. 16t + 15; k-step s (0..3) of chunk c = s / 2
///     pairs elements 64c + 16q + 8(s % 2) + 0..7 (Q load s is its B operand).
///   PV: O^T = V^T P^T; k-step kk pairs slot 8q + i with the position of score item 8kk + i; d-slot
///     (M-tile md, row r) is element 8r + md: lane r reads bytes 8r .. 8r + 7 of its 8 positions.
template <> struct extend_plan<mfma_f32_16x16x32_bf16> {
  using shape = mfma_f32_16x16x32_bf16;
  using view = attention_geometry<shape>;  // the pair view's builders (qk_a, pv_a)
  static constexpr u32 rows = 12, block = 64, head_dim = 128, q_loads = 4, k_reads = 8, v_reads = 16, v_bytes = 8;
  static constexpr u32 scores = 16, o_items = 32, row_slots = 1;
  using q_operands = u32x4[4];  // B of QK k-step s
  using v_raw = u32x2;
  NETRA_HOST_DEVICE static constexpr fragment_element q_load(u32 lane, u32 j) { return {lane % 16, 64 * (j / 2) + 16 * (lane / 16) + 8 * (j % 2)}; }
  NETRA_HOST_DEVICE static constexpr fragment_element k_read(u32 lane, u32 j) { return {16 * (j / 2) + lane % 16, 16 * (4 * (j % 2) + lane / 16)}; }
  NETRA_HOST_DEVICE static constexpr fragment_element score_of(u32 lane, u32 i) { return {lane % 16, 16 * (i / 4) + 4 * (lane / 16) + i % 4}; }
  NETRA_HOST_DEVICE static constexpr fragment_element v_read(u32 lane, u32 j) { return {score_of(lane, j).col, 8 * (lane % 16)}; }
  NETRA_HOST_DEVICE static constexpr fragment_element o_of(u32 lane, u32 i) { return {lane % 16, 8 * (4 * (lane / 16) + i % 4) + i / 4}; }
  NETRA_HOST_DEVICE static constexpr u32 row_slot(u32) { return 0; }
  NETRA_HOST_DEVICE static constexpr u32 score_row_slot(u32) { return 0; }
  NETRA_HOST_DEVICE static constexpr u32 row_mask(u32 i) { return view::row_mask(i); }

  NETRA_HOST_DEVICE static void q_operands_of(q_operands& qa, const u32x4 (&q)[q_loads]) {
    NETRA_UNROLL
    for (u32 s = 0; s < 4; ++s) qa[s] = q[s];
  }

#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
  template <class Read, class Widen> static NETRA_DEVICE void qk(float (&s)[scores], const q_operands& qa, Read k, Widen widen) {
    NETRA_UNROLL
    for (u32 t = 0; t < 4; ++t) {
      s[4 * t] = s[4 * t + 1] = s[4 * t + 2] = s[4 * t + 3] = 0.0f;
      NETRA_UNROLL
      for (u32 c = 0; c < 2; ++c) {
        const u32x4 raw = k(2 * t + c);
        const wide_chunk k4 = {{widen(raw.x), widen(raw.y), widen(raw.z), widen(raw.w)}};
        NETRA_UNROLL
        for (u32 sub = 0; sub < 2; ++sub) {
          u32 a[4];
          view::qk_a(a, k4, sub);
          const u32 b[4] = {qa[2 * c + sub].x, qa[2 * c + sub].y, qa[2 * c + sub].z, qa[2 * c + sub].w};
          extend_mma_tile<shape>(s, t, a, b);
        }
      }
    }
  }
  template <class Read, class Widen> static NETRA_DEVICE void pv(float (&o)[o_items], const u32 (&p)[scores / 2], Read v, Widen widen) {
    NETRA_UNROLL
    for (u32 kk = 0; kk < 2; ++kk) {
      const u32 b[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
      v_raw raw[8];
      NETRA_UNROLL
      for (u32 i = 0; i < 8; ++i) raw[i] = v(8 * kk + i);
      NETRA_UNROLL
      for (u32 w = 0; w < 2; ++w) {
        bf16x4 x[8];
        NETRA_UNROLL
        for (u32 i = 0; i < 8; ++i) x[i] = widen(raw[i][static_cast<int>(w)]);
        pv_tiles<0>(o, x, b, w);
      }
    }
  }
  template <u32 Half> static NETRA_DEVICE void pv_tiles(float (&o)[o_items], const bf16x4 (&x)[8], const u32 (&b)[4], u32 w) {
    if constexpr (Half < 4) {
      u32 a[4];
      view::template pv_a<Half>(a, x);
      extend_mma_tile<shape>(o, 4 * w + Half, a, b);
      pv_tiles<Half + 1>(o, x, b, w);
    }
  }
#endif
};

/// The native extend plan of a target's BF16 matrix instruction.
template <class Target> using extend_plan_of = extend_plan<typename attention_plan_of<Target>::shape>;

}  // namespace netra::kernels
