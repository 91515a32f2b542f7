// netra/dsl/attention_fragment.hpp — how one wave computes attention scores S = Q K^T and the
// value sum O = P V for 8 query rows over a block of 64 positions with head dim 256, on the
// target's BF16 matrix instruction (fragment::matrix_instructions<Target>::bf16), with every
// operand built from 16-byte chunks (contiguous in memory) and the score accumulators reused as
// P's operand registers. K / V chunks are FP8 in the target's format (native_fp8_t<Target>),
// widened to BF16 exactly (dsl/convert_fp8_bf16.hpp).
//
// Freedoms used (neither changes a result): the contraction index of a product may be permuted
// as long as both operands share the permutation — head-dim elements for QK (so a lane's K bytes
// are contiguous) and positions for PV (so P comes straight from the score registers); and
// output rows of O^T may be any map of head-dim elements, undone by o_of().
// A plan is a geometry (one per instruction family: attention_geometry<Shape>) plus the products
// every geometry shares (attention_plan_t). Per geometry (per lane):
//   q_load(lane, j) -> (query row, first head-dim element) of 16-byte Q load j (8 BF16);
//                      rows >= 8 are padding (not loaded, zero).
//   k_read(lane, j) / v_read(lane, j) -> (position in the block, 16-byte chunk of its 256-byte row).
//   score_of(lane, i) -> (query row, position) of score item i; o_of(lane, i) -> (query row, d).
//   QK: K chunk qk_chunks * t + c feeds tile t's instructions qk_steps * c .. + qk_steps - 1
//       (qk_step(a, b, q0, q1, k4, step): Q loads 2c, 2c + 1 and the widened chunk); score item
//       i is accumulator item score_item(i) of tile score_tile(i).
//   PV: k-step kk takes pv_b(b, p, kk) from the score pair words and, per group (h, w), word w of
//       the V chunks pv_chunk(kk, h, i), i < pv_gather, giving pv_tiles_per_group instructions
//       pv_a<t> on M-tile pv_tile(h, w, t).
// The builders are host-callable so that tests/kernels/test_attention_plans.cpp and
// tests/dsl/test_target_attention_plan.cpp compose them with the host instruction models.
// The rows of a lane's scores are reduced over the lanes xor row_mask(0), xor row_mask(1).
#pragma once
#include "netra/dsl/convert_fp8_bf16.hpp"
#include "netra/dsl/fragment/target_shapes.hpp"

namespace netra {

/// The BF16 of one 16-byte FP8 chunk: word i's four values in w[i].
struct wide_chunk {
  bf16x4 w[4];
};

#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
/// The widened reader of FP8 chunks read(j) (the target's format): j -> the BF16 of chunk j's four words.
template <class Target, class Read> NETRA_DEVICE auto widened(Read read) {
  return [read](u32 j) {
    const u32x4 x = read(j);
    return wide_chunk{{fp8x4_to_bf16x4<Target>(x.x), fp8x4_to_bf16x4<Target>(x.y), fp8x4_to_bf16x4<Target>(x.z), fp8x4_to_bf16x4<Target>(x.w)}};
  };
}
#endif

/// Halves of two BF16 pair words: the low (High = 0) or high (High = 1) value of x, then of y.
template <u32 High> NETRA_HOST_DEVICE constexpr u32 pair_halves(u32 x, u32 y) {
  return High == 0 ? (x & 0xFFFFu) | (y << 16) : (x >> 16) | (y & 0xFFFF0000u);
}

/// 16x16 wave64 MFMA, BF16 (gfx950: v_mfma_f32_16x16x32_bf16, E = 8; gfx942:
/// v_mfma_f32_16x16x16_bf16, E = 4), E = K / 4 the K values of a lane, r = lane % 16, q = lane / 16.
/// Both products put positions / head-dim slots on M and query rows on N (columns 8..15 are
/// padding, P = 0 there); the maps below are the shape's (checked by the static_assert).
///   QK: S^T(16 positions x 16 rows) = K Q^T; M-tile t holds positions 16t .. 16t + 15; step
///     sub = s % (16 / E) of chunk c pairs the elements 64c + 16q + E sub + 0 .. E - 1.
///   PV: O^T = V^T P^T; k-step kk pairs slot E q + i with the position of score item E kk + i
///     (where the score registers hold it); d-slot (M-tile mt, row r) is element 16r + mt.
template <class Shape> struct attention_geometry {
  using shape = Shape;
  using target = typename Shape::target;
  static constexpr u32 lane_k = Shape::k / 4;  // E
  NETRA_HOST_DEVICE static constexpr bool is_mfma_16x16() {
    if (Shape::m != 16 || Shape::n != 16 || Shape::wave_size != 64 || Shape::input_bits != 16 || Shape::d_items != 4) return false;
    for (u32 l = 0; l < 64; ++l)
      for (u32 v = 0; v < lane_k; ++v) {
        const fragment_element a = Shape::a_element(l, v), b = Shape::b_element(l, v), d = Shape::d_element(l, v % 4);
        if (a.row != l % 16 || a.col != lane_k * (l / 16) + v || b.row != a.col || b.col != l % 16 || d.row != 4 * (l / 16) + v % 4 || d.col != l % 16)
          return false;
      }
    return true;
  }
  static_assert(is_bf16_fragment_shape_v<Shape> || is_target_fragment_shape_v<Shape>, "netra::attention_geometry: not a BF16 fragment shape netra knows");
  static_assert(is_mfma_16x16() && (lane_k == 4 || lane_k == 8), "netra::attention_geometry: no attention plan for this matrix fragment shape");

  static constexpr u32 wave = 64, rows = 8, block = 64, head_dim = 256;
  static constexpr u32 q_loads = 8, k_reads = 16, v_reads = 16, scores = 16, o_items = 64;
  static constexpr u32 qk_chunks = 4, qk_tiles = 4, qk_steps = 16 / lane_k;
  static constexpr u32 pv_steps = block / Shape::k, pv_halves = 1, pv_gather = lane_k, pv_tiles_per_group = 4;
  using qk_accumulators = float[qk_tiles][4];
  static constexpr bool o_rows_are_score_rows = true;
  NETRA_HOST_DEVICE static constexpr u32 row_mask(u32 i) { return i == 0 ? 16u : 32u; }

  NETRA_HOST_DEVICE static constexpr fragment_element q_load(u32 lane, u32 j) { return {lane % 16, 64 * (j / 2) + 16 * (lane / 16) + 8 * (j % 2)}; }
  NETRA_HOST_DEVICE static constexpr fragment_element k_read(u32 lane, u32 j) { return {16 * (j / 4) + lane % 16, 4 * (j % 4) + lane / 16}; }
  NETRA_HOST_DEVICE static constexpr fragment_element score_of(u32 lane, u32 i) {
    const fragment_element d = Shape::d_element(lane, i % 4);
    return {d.col, 16 * (i / 4) + d.row};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element v_read(u32 lane, u32 j) { return {score_of(lane, j).col, lane % 16}; }
  NETRA_HOST_DEVICE static constexpr fragment_element o_of(u32 lane, u32 i) {
    const fragment_element d = Shape::d_element(lane, i % 4);
    return {d.col, 16 * d.row + i / 4};
  }
  NETRA_HOST_DEVICE static constexpr u32 stats_lane(u32 row) { return row; }
  static constexpr u32 o_row_slots = 1;
  NETRA_HOST_DEVICE static constexpr u32 o_row(u32 lane, u32) { return lane % 16; }
  NETRA_HOST_DEVICE static constexpr u32 o_row_slot(u32) { return 0; }
  NETRA_HOST_DEVICE static constexpr u32 score_tile(u32 i) { return i / 4; }
  NETRA_HOST_DEVICE static constexpr u32 score_item(u32 i) { return i % 4; }
  NETRA_HOST_DEVICE static constexpr u32 pv_chunk(u32 kk, u32, u32 i) { return lane_k * kk + i; }
  NETRA_HOST_DEVICE static constexpr u32 pv_tile(u32, u32 w, u32 t) { return 4 * w + t; }

  // Builders (host and device).
  /// K operand of step sub: the lane's BF16 pair words of elements E sub .. E sub + E - 1 of its chunk.
  NETRA_HOST_DEVICE static void qk_a(u32 (&a)[Shape::a_words], const wide_chunk& k4, u32 sub) {
    NETRA_UNROLL
    for (u32 i = 0; i < Shape::a_words; ++i) {
      const u32 el = lane_k * sub + 2 * i;
      a[i] = el % 4 == 0 ? k4.w[el / 4].lo : k4.w[el / 4].hi;
    }
  }
  /// Q^T operand of step sub from Q loads q0, q1 (elements 0..7, 8..15 of the lane's 16).
  NETRA_HOST_DEVICE static void qk_b(u32 (&b)[Shape::b_words], const u32x4& q0, const u32x4& q1, u32 sub) {
    NETRA_UNROLL
    for (u32 i = 0; i < Shape::b_words; ++i) {
      const u32 wi = lane_k * sub / 2 + i;
      b[i] = (wi < 4 ? q0 : q1)[static_cast<int>(wi % 4)];
    }
  }
  NETRA_HOST_DEVICE static void qk_step(u32 (&a)[Shape::a_words], u32 (&b)[Shape::b_words], const u32x4& q0, const u32x4& q1, const wide_chunk& k4,
                                        u32 step) {
    qk_a(a, k4, step % qk_steps);
    qk_b(b, q0, q1, step % qk_steps);
  }
  NETRA_HOST_DEVICE static void pv_b(u32 (&b)[Shape::b_words], const u32 (&p)[scores / 2], u32 kk) {
    NETRA_UNROLL
    for (u32 i = 0; i < Shape::b_words; ++i) b[i] = p[Shape::b_words * kk + i];
  }
  /// V^T operand of M-tile 4w + Half from word w of the E positions' chunks (slot order i).
  template <u32 Half> NETRA_HOST_DEVICE static void pv_a(u32 (&a)[Shape::a_words], const bf16x4 (&x)[lane_k]) {
    NETRA_UNROLL
    for (u32 i = 0; i < lane_k; i += 2) {
      const u32 x0 = Half < 2 ? x[i].lo : x[i].hi, x1 = Half < 2 ? x[i + 1].lo : x[i + 1].hi;
      a[i / 2] = pair_halves<Half % 2>(x0, x1);
    }
  }
};

/// sm90a: mma.sync m16n8k16 BF16, warp32; g = lane >> 2, t = lane & 3.
///   QK: S(16 x 8 positions) = Q(16 rows, 8 real: row g; rows g + 8 zero) K^T, N-tile nt holds
///     positions 8nt .. 8nt + 7; k-step s (0..15) of chunk c = s / 4 pairs the head-dim elements
///     64c + 16t + 4(s % 4) + {0, 1} (A word 0, B word 0) and + {2, 3} (A word 2, B word 1).
///   PV: O^T(16 d-slots x 8 rows) = V^T P^T, k-step kk = positions 16kk .. 16kk + 15 in order;
///     d-slot (M-tile mt, row g / g + 8) is head-dim element 32g + 2mt / 32g + 2mt + 1; group
///     g = 4h + w gathers word w of the chunks 8kk + 2pi + h (M-tiles 8h + 2w, + 1).
template <> struct attention_geometry<mma_m16n8k16_bf16> {
  using shape = mma_m16n8k16_bf16;
  using target = sm90a;
  static constexpr u32 wave = 32, rows = 8, block = 64, head_dim = 256;
  static constexpr u32 q_loads = 8, k_reads = 32, v_reads = 32, scores = 16, o_items = 64;
  static constexpr u32 qk_chunks = 4, qk_tiles = 8, qk_steps = 4;  // K chunks k(4nt + c) per chunk c
  static constexpr u32 pv_steps = 4, pv_halves = 2, pv_gather = 4, pv_tiles_per_group = 2;  // V chunks v(8kk + i) per step kk
  using qk_accumulators = float[qk_tiles][4];
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
  NETRA_HOST_DEVICE static constexpr u32 score_tile(u32 i) { return i / 2; }
  NETRA_HOST_DEVICE static constexpr u32 score_item(u32 i) { return i % 2; }
  NETRA_HOST_DEVICE static constexpr u32 pv_chunk(u32 kk, u32 h, u32 i) { return 8 * kk + 2 * i + h; }
  NETRA_HOST_DEVICE static constexpr u32 pv_tile(u32 h, u32 w, u32 t) { return 8 * h + 2 * w + t; }

  // Builders (host and device).
  /// Q operand of k-step `step` from Q load step / 2.
  NETRA_HOST_DEVICE static void qk_a(u32 (&a)[4], const u32x4& q, u32 step) {
    a[0] = q[static_cast<int>((2 * step) % 4)], a[1] = 0, a[2] = q[static_cast<int>((2 * step + 1) % 4)], a[3] = 0;
  }
  NETRA_HOST_DEVICE static void qk_b(u32 (&b)[2], bf16x4 k4) { b[0] = k4.lo, b[1] = k4.hi; }
  NETRA_HOST_DEVICE static u32 k_word(const u32x4& chunk, u32 step) { return chunk[static_cast<int>(step % 4)]; }
  NETRA_HOST_DEVICE static void qk_step(u32 (&a)[4], u32 (&b)[2], const u32x4& q0, const u32x4& q1, const wide_chunk& k4, u32 step) {
    qk_a(a, step % 4 < 2 ? q0 : q1, step);
    qk_b(b, k4.w[step % 4]);
  }
  /// P^T operand of k-step kk from the BF16 pair words of the scores (word w = items 2w, 2w + 1).
  NETRA_HOST_DEVICE static void pv_b(u32 (&b)[2], const u32 (&p)[scores / 2], u32 kk) { b[0] = p[2 * kk], b[1] = p[2 * kk + 1]; }
  /// V^T operand of M-tile 8h + 2w + Hi from word w of the four positions' chunk h (positions pi).
  template <u32 Hi> NETRA_HOST_DEVICE static void pv_a(u32 (&a)[4], const bf16x4 (&x)[4]) {
    const u32 x0 = Hi ? x[0].hi : x[0].lo, x1 = Hi ? x[1].hi : x[1].lo, x2 = Hi ? x[2].hi : x[2].lo, x3 = Hi ? x[3].hi : x[3].lo;
    a[0] = pair_halves<0>(x0, x1), a[1] = pair_halves<1>(x0, x1), a[2] = pair_halves<0>(x2, x3), a[3] = pair_halves<1>(x2, x3);
  }
};

/// A geometry with the products every geometry shares (device only).
template <class Geometry> struct attention_plan_t : Geometry {
  using G = Geometry;
  using shape = typename G::shape;
  static constexpr u32 pv_groups = G::pv_halves * 4;  // PV operand groups (h, w): g = 4h + w
#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
  /// acc[t] += the qk_steps instructions of head-dim chunk c (elements 64c .. 64c + 63) for every
  /// tile, from Q loads 2c, 2c + 1 and kw(j) = the widened K chunk j = qk_chunks * t + c
  /// (widened<Target>(k) when the chunks are FP8). qk() runs chunks 0..3 (two Q loads live).
  /// Tiles [T0, T1) only: a wave that computes part of the block's scores (the other tiles untouched).
  template <u32 T0 = 0, u32 T1 = G::qk_tiles, class ReadQ, class ReadWide>
  static NETRA_DEVICE void qk_chunk(typename G::qk_accumulators& acc, u32 c, ReadQ q, ReadWide kw) {
    const u32x4 q0 = q(2 * c), q1 = q(2 * c + 1);
    NETRA_UNROLL
    for (u32 t = T0; t < T1; ++t) {
      const wide_chunk k4 = kw(G::qk_chunks * t + c);
      NETRA_UNROLL
      for (u32 step = G::qk_steps * c; step < G::qk_steps * c + G::qk_steps; ++step) {
        u32 a[shape::a_words], b[shape::b_words];
        G::qk_step(a, b, q0, q1, k4, step);
        mma<shape>(acc[t], a, b, acc[t]);
      }
    }
  }
  /// The unscaled FP32 scores (score_of order) of finished accumulators.
  static NETRA_DEVICE void qk_scores(float (&s)[G::scores], const typename G::qk_accumulators& acc) {
    NETRA_UNROLL
    for (u32 i = 0; i < G::scores; ++i) s[i] = acc[G::score_tile(i)][G::score_item(i)];
  }
  /// s = scores of the block from Q and the widened K chunks (k_read order), unscaled FP32 dot
  /// products; tiles [T0, T1) only (the other items 0).
  template <u32 T0 = 0, u32 T1 = G::qk_tiles, class ReadQ, class ReadWide> static NETRA_DEVICE void qk(float (&s)[G::scores], ReadQ q, ReadWide kw) {
    typename G::qk_accumulators acc = {};
    NETRA_UNROLL
    for (u32 c = 0; c < G::qk_chunks; ++c) qk_chunk<T0, T1>(acc, c, q, kw);
    qk_scores(s, acc);
  }
  /// o[4 mt .. 4 mt + 3] += A B: one instruction on M-tile mt of the accumulator array.
  static NETRA_DEVICE void mma_tile(float (&o)[G::o_items], u32 mt, const u32 (&a)[shape::a_words], const u32 (&b)[shape::b_words]) {
    float acc[4] = {o[4 * mt], o[4 * mt + 1], o[4 * mt + 2], o[4 * mt + 3]};
    mma<shape>(acc, a, b, acc);
    o[4 * mt] = acc[0], o[4 * mt + 1] = acc[1], o[4 * mt + 2] = acc[2], o[4 * mt + 3] = acc[3];
  }
  /// Group (h, w)'s instructions pv_a<T>, pv_a<T + 1>, ... of k-step operand b.
  template <u32 T>
  static NETRA_DEVICE void pv_tiles(float (&o)[G::o_items], const bf16x4 (&x)[G::pv_gather], const u32 (&b)[shape::b_words], u32 h, u32 w) {
    if constexpr (T < G::pv_tiles_per_group) {
      u32 a[shape::a_words];
      G::template pv_a<T>(a, x);
      mma_tile(o, G::pv_tile(h, w, T), a, b);
      pv_tiles<T + 1>(o, x, b, h, w);
    }
  }
  /// o += P V over the positions of k-step kk (vw(j): the widened V chunk j); groups g = 4h + w in
  /// [G0, G1) only (a wave that owns part of O: the other groups' M-tiles untouched).
  template <u32 G0 = 0, u32 G1 = pv_groups, class ReadWide>
  static NETRA_DEVICE void pv_step(float (&o)[G::o_items], const u32 (&p)[G::scores / 2], u32 kk, ReadWide vw) {
    u32 b[shape::b_words];
    G::pv_b(b, p, kk);
    NETRA_UNROLL
    for (u32 h = 0; h < G::pv_halves; ++h)
      NETRA_UNROLL
      for (u32 w = 0; w < 4; ++w) {
        if (4 * h + w - G0 >= G1 - G0) continue;  // outside [G0, G1) (unsigned); constant once unrolled
        bf16x4 x[G::pv_gather];
        NETRA_UNROLL
        for (u32 i = 0; i < G::pv_gather; ++i) x[i] = vw(G::pv_chunk(kk, h, i)).w[w];
        pv_tiles<0>(o, x, b, h, w);
      }
  }
  /// o += P V over the block (widened V chunks in v_read order); groups [G0, G1) only.
  template <u32 G0 = 0, u32 G1 = pv_groups, class ReadWide> static NETRA_DEVICE void pv(float (&o)[G::o_items], const u32 (&p)[G::scores / 2], ReadWide vw) {
    NETRA_UNROLL
    for (u32 kk = 0; kk < G::pv_steps; ++kk) pv_step<G0, G1>(o, p, kk, vw);
  }
#endif
};

/// The plan of a matrix fragment shape, and of a target's BF16 matrix instruction.
template <class Shape> using attention_plan = attention_plan_t<attention_geometry<Shape>>;
template <class Target> using attention_plan_of = attention_plan<typename fragment::matrix_instructions<Target>::bf16>;

}  // namespace netra
