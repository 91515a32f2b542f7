// netra/dsl/attention_fragment.hpp — how one wave computes attention scores S = Q K^T and the
// value sum O = P V for 8 query rows over a block of 64 positions with head dim 256, on a BF16
// matrix instruction (dsl/matrix_fragment_bf16.hpp), with every operand built from 16-byte
// chunks (contiguous in memory) and the score accumulators reused as P's operand registers.
//
// Freedoms used (neither changes a result): the contraction index of a product may be permuted
// as long as both operands share the permutation — head-dim elements for QK (so a lane's K bytes
// are contiguous) and positions for PV (so P comes straight from the score registers); and
// output rows of O^T may be any map of head-dim elements, undone by o_of().
// Per plan (per lane):
//   q_load(lane, j) -> (query row, first head-dim element) of 16-byte Q load j (8 BF16);
//                      rows >= 8 are padding (not loaded, zero).
//   k_read(lane, j) / v_read(lane, j) -> (position in the block, 16-byte chunk of its 256-byte row).
//   score_of(lane, i) -> (query row, position) of score item i; o_of(lane, i) -> (query row, d).
//   qk(s, read_q, read_k) / pv(o, p, read_v) run the instructions, read_*(j) returning 16-byte
//   load / chunk j (Q load j holds the BF16 pairs q_load(lane, j) .. + 7); the builders they use are host-callable so that
//   tests/kernels/test_attention_plans.cpp composes them with the host instruction models.
// The rows of a lane's scores are reduced over the lanes xor row_mask(0), xor row_mask(1).
#pragma once
#include "netra/dsl/convert_e4m3_bf16.hpp"
#include "netra/dsl/matrix_fragment_bf16.hpp"

namespace netra {

template <class Shape> struct attention_plan {
  static_assert(dependent_false_v<Shape>, "netra::attention_plan: no attention plan for this matrix fragment shape");
};

/// The BF16 of one 16-byte E4M3 chunk: word i's four values in w[i].
struct wide_chunk {
  bf16x4 w[4];
};

#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
/// The widened reader of E4M3 chunks read(j): j -> the BF16 of chunk j's four words.
template <class Target, class Read> NETRA_DEVICE auto widened(Read read) {
  return [read](u32 j) {
    const u32x4 x = read(j);
    return wide_chunk{{e4m3x4_to_bf16x4<Target>(x.x), e4m3x4_to_bf16x4<Target>(x.y), e4m3x4_to_bf16x4<Target>(x.z), e4m3x4_to_bf16x4<Target>(x.w)}};
  };
}
#endif

/// Halves of two BF16 pair words: the low (High = 0) or high (High = 1) value of x, then of y.
template <u32 High> NETRA_HOST_DEVICE constexpr u32 pair_halves(u32 x, u32 y) {
  return High == 0 ? (x & 0xFFFFu) | (y << 16) : (x >> 16) | (y & 0xFFFF0000u);
}

#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
/// o[4 mt .. 4 mt + 3] += A B: one instruction of `Shape` on M-tile mt of an accumulator array.
template <class Shape, u32 Items>
NETRA_DEVICE void mma_tile(float (&o)[Items], u32 mt, const u32 (&a)[Shape::a_words], const u32 (&b)[Shape::b_words]) {
  float acc[4] = {o[4 * mt], o[4 * mt + 1], o[4 * mt + 2], o[4 * mt + 3]};
  mma<Shape>(acc, a, b, acc);
  o[4 * mt] = acc[0], o[4 * mt + 1] = acc[1], o[4 * mt + 2] = acc[2], o[4 * mt + 3] = acc[3];
}
#endif

/// sm90a: mma.sync m16n8k16 BF16, warp32; g = lane >> 2, t = lane & 3.
///   QK: S(16 x 8 positions) = Q(16 rows, 8 real: row g; rows g + 8 zero) K^T, N-tile nt holds
///     positions 8nt .. 8nt + 7; k-step s (0..15) of chunk c = s / 4 pairs the head-dim elements
///     64c + 16t + 4(s % 4) + {0, 1} (A word 0, B word 0) and + {2, 3} (A word 2, B word 1).
///   PV: O^T(16 d-slots x 8 rows) = V^T P^T, k-step kk = positions 16kk .. 16kk + 15 in order;
///     d-slot (M-tile mt, row g / g + 8) is head-dim element 32g + 2mt / 32g + 2mt + 1.
template <> struct attention_plan<mma_m16n8k16_bf16> {
  using shape = mma_m16n8k16_bf16;
  using target = sm90a;
  static constexpr u32 wave = 32, rows = 8, block = 64, head_dim = 256;
  static constexpr u32 q_loads = 8, k_reads = 32, v_reads = 32, scores = 16, o_items = 64;
  static constexpr u32 qk_chunks = 4, pv_steps = 4;  // K chunks k(4nt + c) per chunk c; V chunks v(8kk + i) per step kk
  using qk_accumulators = float[8][4];
  static constexpr bool o_rows_are_score_rows = false;
  NETRA_HOST_DEVICE static constexpr u32 row_mask(u32 i) { return i == 0 ? 1u : 2u; }

  NETRA_HOST_DEVICE static constexpr fragment_element q_load(u32 lane, u32 j) { return {lane >> 2, 64 * (j / 2) + 16 * (lane & 3) + 8 * (j % 2)}; }
  NETRA_HOST_DEVICE static constexpr fragment_element k_read(u32 lane, u32 j) { return {8 * (j / 4) + (lane >> 2), 4 * (j % 4) + (lane & 3)}; }
  NETRA_HOST_DEVICE static constexpr fragment_element v_read(u32 lane, u32 j) {
    const u32 pi = (j / 2) % 4;
    return {16 * (j / 8) + 2 * (lane & 3) + (pi & 1) + 8 * (pi >> 1), 2 * (lane >> 2) + j % 2};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element score_of(u32 lane, u32 i) { return {lane >> 2, 8 * (i / 2) + 2 * (lane & 3) + i % 2}; }
  NETRA_HOST_DEVICE static constexpr fragment_element o_of(u32 lane, u32 i) {
    return {2 * (lane & 3) + (i & 1), 32 * (lane >> 2) + 2 * ((i / 4) % 16) + ((i % 4) >> 1)};
  }
  /// The lane that holds the statistics of query row `row`; a lane's o items cover o_row_slots
  /// rows: slot k is row o_row(lane, k), item i is in slot o_row_slot(i).
  NETRA_HOST_DEVICE static constexpr u32 stats_lane(u32 row) { return 4 * row; }
  static constexpr u32 o_row_slots = 2;
  NETRA_HOST_DEVICE static constexpr u32 o_row(u32 lane, u32 k) { return 2 * (lane & 3) + k; }
  NETRA_HOST_DEVICE static constexpr u32 o_row_slot(u32 i) { return i & 1; }

  // Builders (host and device).
  /// Q operand of k-step `step` from Q load step / 2.
  NETRA_HOST_DEVICE static void qk_a(u32 (&a)[4], const u32x4& q, u32 step) {
    a[0] = q[static_cast<int>((2 * step) % 4)], a[1] = 0, a[2] = q[static_cast<int>((2 * step + 1) % 4)], a[3] = 0;
  }
  NETRA_HOST_DEVICE static void qk_b(u32 (&b)[2], bf16x4 k4) { b[0] = k4.lo, b[1] = k4.hi; }
  NETRA_HOST_DEVICE static u32 k_word(const u32x4& chunk, u32 step) { return chunk[static_cast<int>(step % 4)]; }
  /// P^T operand of k-step kk from the BF16 pair words of the scores (word w = items 2w, 2w + 1).
  NETRA_HOST_DEVICE static void pv_b(u32 (&b)[2], const u32 (&p)[scores / 2], u32 kk) { b[0] = p[2 * kk], b[1] = p[2 * kk + 1]; }
  /// V^T operand of M-tile 8h + 2w + Hi from word w of the four positions' chunk h (positions pi).
  template <u32 Hi> NETRA_HOST_DEVICE static void pv_a(u32 (&a)[4], const bf16x4 (&x)[4]) {
    const u32 x0 = Hi ? x[0].hi : x[0].lo, x1 = Hi ? x[1].hi : x[1].lo, x2 = Hi ? x[2].hi : x[2].lo, x3 = Hi ? x[3].hi : x[3].lo;
    a[0] = pair_halves<0>(x0, x1), a[1] = pair_halves<1>(x0, x1), a[2] = pair_halves<0>(x2, x3), a[3] = pair_halves<1>(x2, x3);
  }

#if defined(NETRA_COMPILER_CUDA)
  /// acc[nt] += the four k-steps of head-dim chunk c (elements 64c .. 64c + 63) for every N-tile,
  /// from Q loads 2c, 2c + 1 and kw(j) = the widened K chunk j = 4nt + c (widened<Target>(k) when the
  /// chunks are E4M3). qk() runs chunks 0..3 (two Q loads live).
  template <class ReadQ, class ReadWide> static NETRA_DEVICE void qk_chunk(qk_accumulators& acc, u32 c, ReadQ q, ReadWide kw) {
    const u32x4 q0 = q(2 * c), q1 = q(2 * c + 1);
    NETRA_UNROLL
    for (u32 nt = 0; nt < 8; ++nt) {
      const wide_chunk k4 = kw(4 * nt + c);
      NETRA_UNROLL
      for (u32 step = 4 * c; step < 4 * c + 4; ++step) {
        u32 a[4], b[2];
        qk_a(a, step % 4 < 2 ? q0 : q1, step);
        qk_b(b, k4.w[step % 4]);
        mma<shape>(acc[nt], a, b, acc[nt]);
      }
    }
  }
  /// The unscaled FP32 scores (score_of order) of finished accumulators.
  static NETRA_DEVICE void qk_scores(float (&s)[scores], const qk_accumulators& acc) {
    NETRA_UNROLL
    for (u32 nt = 0; nt < 8; ++nt) s[2 * nt] = acc[nt][0], s[2 * nt + 1] = acc[nt][1];
  }
  /// s = scores of the block from Q and the widened K chunks (k_read order), unscaled FP32 dot products.
  template <class ReadQ, class ReadWide> static NETRA_DEVICE void qk(float (&s)[scores], ReadQ q, ReadWide kw) {
    qk_accumulators acc = {};
    NETRA_UNROLL
    for (u32 c = 0; c < qk_chunks; ++c) qk_chunk(acc, c, q, kw);
    qk_scores(s, acc);
  }
  /// o += P V over positions 16kk .. 16kk + 15 (vw(j): the widened V chunk j, j = 8kk .. 8kk + 7).
  template <class ReadWide> static NETRA_DEVICE void pv_step(float (&o)[o_items], const u32 (&p)[scores / 2], u32 kk, ReadWide vw) {
    u32 b[2];
    pv_b(b, p, kk);
    NETRA_UNROLL
    for (u32 h = 0; h < 2; ++h)
      NETRA_UNROLL
      for (u32 w = 0; w < 4; ++w) {
        bf16x4 x[4];
        NETRA_UNROLL
        for (u32 pi = 0; pi < 4; ++pi) x[pi] = vw(8 * kk + 2 * pi + h).w[w];
        const u32 mt = 8 * h + 2 * w;
        u32 a[4];
        pv_a<0>(a, x);
        mma_tile<shape>(o, mt, a, b);
        pv_a<1>(a, x);
        mma_tile<shape>(o, mt + 1, a, b);
      }
  }
  /// o += P V over the block (widened V chunks in v_read order).
  template <class ReadWide> static NETRA_DEVICE void pv(float (&o)[o_items], const u32 (&p)[scores / 2], ReadWide vw) {
    NETRA_UNROLL
    for (u32 kk = 0; kk < pv_steps; ++kk) pv_step(o, p, kk, vw);
  }
#endif
};

/// gfx950: v_mfma_f32_16x16x32_bf16, wave64; r = lane % 16, q = lane / 16. Both products with
/// positions / head-dim slots as M and query rows as N (columns 8..15 are padding, P = 0 there).
///   QK: S^T(16 positions x 16 rows) = K Q^T; M-tile mt holds positions 16mt .. 16mt + 15; k-step
///     s (0..7) of chunk c = s / 2 pairs the elements 64c + 16q + 8(s % 2) + 0..7.
///   PV: O^T = V^T P^T; k-step kk pairs slot 8q + i with position 32kk + 16(i / 4) + 4q + i % 4
///     (where the score registers hold it); d-slot (M-tile mt, row r) is element 16r + mt.
template <> struct attention_plan<mfma_f32_16x16x32_bf16> {
  using shape = mfma_f32_16x16x32_bf16;
  using target = gfx950;
  static constexpr u32 wave = 64, rows = 8, block = 64, head_dim = 256;
  static constexpr u32 q_loads = 8, k_reads = 16, v_reads = 16, scores = 16, o_items = 64;
  static constexpr u32 qk_chunks = 4, pv_steps = 2;
  using qk_accumulators = float[4][4];
  static constexpr bool o_rows_are_score_rows = true;
  NETRA_HOST_DEVICE static constexpr u32 row_mask(u32 i) { return i == 0 ? 16u : 32u; }

  NETRA_HOST_DEVICE static constexpr fragment_element q_load(u32 lane, u32 j) { return {lane % 16, 64 * (j / 2) + 16 * (lane / 16) + 8 * (j % 2)}; }
  NETRA_HOST_DEVICE static constexpr fragment_element k_read(u32 lane, u32 j) { return {16 * (j / 4) + lane % 16, 4 * (j % 4) + lane / 16}; }
  NETRA_HOST_DEVICE static constexpr fragment_element v_read(u32 lane, u32 j) {
    const u32 i = j % 8;
    return {32 * (j / 8) + 16 * (i / 4) + 4 * (lane / 16) + i % 4, lane % 16};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element score_of(u32 lane, u32 i) { return {lane % 16, 16 * (i / 4) + 4 * (lane / 16) + i % 4}; }
  NETRA_HOST_DEVICE static constexpr fragment_element o_of(u32 lane, u32 i) { return {lane % 16, 16 * (4 * (lane / 16) + i % 4) + i / 4}; }
  NETRA_HOST_DEVICE static constexpr u32 stats_lane(u32 row) { return row; }
  static constexpr u32 o_row_slots = 1;
  NETRA_HOST_DEVICE static constexpr u32 o_row(u32 lane, u32) { return lane % 16; }
  NETRA_HOST_DEVICE static constexpr u32 o_row_slot(u32) { return 0; }

  NETRA_HOST_DEVICE static void qk_a(u32 (&a)[4], bf16x4 lo, bf16x4 hi) { a[0] = lo.lo, a[1] = lo.hi, a[2] = hi.lo, a[3] = hi.hi; }
/// Q^T operand of k-step `step` from Q load `step`.
  NETRA_HOST_DEVICE static void qk_b(u32 (&b)[4], const u32x4& q) { b[0] = q.x, b[1] = q.y, b[2] = q.z, b[3] = q.w; }
  NETRA_HOST_DEVICE static u32 k_word(const u32x4& chunk, u32 step, u32 half) { return chunk[static_cast<int>(2 * (step % 2) + half)]; }
  NETRA_HOST_DEVICE static void pv_b(u32 (&b)[4], const u32 (&p)[scores / 2], u32 kk) {
    b[0] = p[4 * kk], b[1] = p[4 * kk + 1], b[2] = p[4 * kk + 2], b[3] = p[4 * kk + 3];
  }
  /// V^T operand of M-tile 4w + Half from word w of the eight positions' chunks (slot order i).
  template <u32 Half> NETRA_HOST_DEVICE static void pv_a(u32 (&a)[4], const bf16x4 (&x)[8]) {
    NETRA_UNROLL
    for (u32 i = 0; i < 8; i += 2) {
      const u32 x0 = Half < 2 ? x[i].lo : x[i].hi, x1 = Half < 2 ? x[i + 1].lo : x[i + 1].hi;
      a[i / 2] = pair_halves<Half % 2>(x0, x1);
    }
  }

#if defined(NETRA_COMPILER_HIP)
  /// acc[mt] += the two k-steps of head-dim chunk c for every M-tile (kw(j): the widened K chunk
  /// j = 4mt + c).
  template <class ReadQ, class ReadWide> static NETRA_DEVICE void qk_chunk(qk_accumulators& acc, u32 c, ReadQ q, ReadWide kw) {
    const u32x4 q0 = q(2 * c), q1 = q(2 * c + 1);
    NETRA_UNROLL
    for (u32 mt = 0; mt < 4; ++mt) {
      const wide_chunk k4 = kw(4 * mt + c);
      NETRA_UNROLL
      for (u32 step = 2 * c; step < 2 * c + 2; ++step) {
        u32 a[4], b[4];
        qk_a(a, k4.w[2 * (step % 2)], k4.w[2 * (step % 2) + 1]);
        qk_b(b, step % 2 == 0 ? q0 : q1);
        mma<shape>(acc[mt], a, b, acc[mt]);
      }
    }
  }
  static NETRA_DEVICE void qk_scores(float (&s)[scores], const qk_accumulators& acc) {
    NETRA_UNROLL
    for (u32 i = 0; i < scores; ++i) s[i] = acc[i / 4][i % 4];
  }
  template <class ReadQ, class ReadWide> static NETRA_DEVICE void qk(float (&s)[scores], ReadQ q, ReadWide kw) {
    qk_accumulators acc = {};
    NETRA_UNROLL
    for (u32 c = 0; c < qk_chunks; ++c) qk_chunk(acc, c, q, kw);
    qk_scores(s, acc);
  }
  /// o += P V over the 32 positions of k-step kk (V chunks v(8kk) .. v(8kk + 7)).
  template <class ReadWide> static NETRA_DEVICE void pv_step(float (&o)[o_items], const u32 (&p)[scores / 2], u32 kk, ReadWide vw) {
    u32 b[4];
    pv_b(b, p, kk);
    NETRA_UNROLL
    for (u32 w = 0; w < 4; ++w) {
      bf16x4 x[8];
      NETRA_UNROLL
      for (u32 i = 0; i < 8; ++i) x[i] = vw(8 * kk + i).w[w];
      u32 a[4];
      pv_a<0>(a, x), mma_tile<shape>(o, 4 * w, a, b);
      pv_a<1>(a, x), mma_tile<shape>(o, 4 * w + 1, a, b);
      pv_a<2>(a, x), mma_tile<shape>(o, 4 * w + 2, a, b);
      pv_a<3>(a, x), mma_tile<shape>(o, 4 * w + 3, a, b);
    }
  }
  template <class ReadWide> static NETRA_DEVICE void pv(float (&o)[o_items], const u32 (&p)[scores / 2], ReadWide vw) {
    NETRA_UNROLL
    for (u32 kk = 0; kk < pv_steps; ++kk) pv_step(o, p, kk, vw);
  }
#endif
};

/// The plan of a target's BF16 matrix instruction.
template <class Target> using attention_plan_of =
    attention_plan<conditional_t<same_v<Target, sm90a>, mma_m16n8k16_bf16, mfma_f32_16x16x32_bf16>>;

}  // namespace netra
