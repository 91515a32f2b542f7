// netra/kernels/attention/gqa8_stage_one_warpgroup.hpp — stage one of contracts::attention_gqa8
// with the field WarpgroupMma (verify, Tq even, Stages >= 2, BlockWarps 1; targets with
// has_warpgroup_mma): the products of a block run on the warpgroup matrix unit from LDS
// (dsl/warpgroup_mma.hpp) instead of per warp from registers; the staging, the order and the bits
// are the LDS ring's (gqa8_stage_one.hpp).
//
// Grid (slices, 2, batch); two warpgroups (Tq 10..16). Warp w of the workgroup is wave w of the
// two-token order: tokens 2w, 2w + 1 (their 8 heads each are rows 16w .. 16w + 15 of the Q operand,
// [8 Tq rows][256]; the last warpgroup's tile rows past 8 Tq read the first widened piece: padding
// rows, whose waves (>= Tq / 2) store nothing). The slice streams through the ring's pieces (K of
// block n / 2 for n even, V for n odd: ring staging's look-ups and 16-byte copies, one piece
// further ahead); the workgroup widens each piece to BF16 once, into one of two operand blocks in
// the matrix unit's core-matrix layout (gqa8_warpgroup_layout.hpp). Iteration n, after its one
// workgroup barrier: issue piece n + Stages; warpgroup g starts piece n's products (async), the
// workgroup widens piece n + 1 into the other block meanwhile, then g waits for its products:
//   K piece: S(64 rows x 64 positions) = Q_g K^T in 16 k-steps; k-step 4c + s sums the head-dim
//     elements 64c + 16t + 4s + 2h + e — the pair plan's QK k-step (gqa8_wave_plan.hpp) — so each
//     score is the per-warp plan's; the accumulator layout is the plan's score layout, and the
//     plan's block step (mask, scale, max, BF16 weights, l; block_weights, its weights branch-free:
//     the same bits, 13 % faster at prefix 49152) follows;
//   V piece: o = o * alpha, then O(64 rows x 256) += P V in 4 k-steps of 16 positions in order,
//     A = the block's BF16 weights straight from the score registers (the plan's P words).
// Every element is the per-warp plan's sum of the same k-steps in the same order (products exact,
// each k-step's sum added to the accumulator once), so the bits are the ring's; the GPU tests
// compare them with netra's order on the host. The epilogue (over the ring, Q and the widened
// blocks) stores each wave's (m, l, o) and writes out / the workspace as the ring's (gqa8_wave.hpp).
#pragma once
#include "netra/dsl/warpgroup_mma.hpp"
#include "netra/dsl/wave_vote.hpp"
#include "netra/kernels/attention/gqa8_stage_one.hpp"
#include "netra/kernels/attention/gqa8_warpgroup_widen.hpp"

namespace netra::kernels {

/// Whether a contract maps its products to warpgroups (false where it does not say: the GQA4 extend's pair view).
template <class Contract> constexpr bool gqa8_warpgroup_mma() {
  if constexpr (requires { Contract::warpgroup_mma; }) return Contract::warpgroup_mma;
  else return false;
}

template <class Contract> struct attention_gqa8_warpgroup_staging {
  using ring = attention_gqa8_ring_staging<Contract>;
  using wave_ops = attention_gqa8_wave<Contract>;
  using target = typename wave_ops::target;
  using plan = typename wave_ops::plan;
  using params = attention_gqa8_args;
  static_assert(target::has_warpgroup_mma && plan::tokens == 2 && Contract::block_warps == 1,
                "netra::kernels::attention_gqa8_warpgroup_staging: warpgroup products need two-token waves, BlockWarps 1 and a target "
                "with has_warpgroup_mma");
  static constexpr u32 S = Contract::stages, workgroup_size = Contract::workgroup_size;
  static constexpr u32 core_bytes = gqa8_warpgroup_layout::core_bytes, k_major_group_bytes = gqa8_warpgroup_layout::k_major_group_bytes;
  static constexpr u32 v_group_bytes = gqa8_warpgroup_layout::v_group_bytes;
  static_assert(Contract::wide_bytes == gqa8_warpgroup_layout::v_operand_bytes, "netra::kernels::attention_gqa8_warpgroup_staging: the widened block's bytes");
  /// The workgroup's queries (rows 8 token + head) into the Q operand (its layout: the pair plan's k-steps).
  static NETRA_DEVICE void load_queries(const params& p, const attention_gqa8_request<Contract>& r, u32 kv_head, u8* q) {
    for (u32 c = thread_id<target>(); c < Contract::rows * 32; c += workgroup_size) {
      const u32 row = c / 32, j = c % 32;
      const u32x4 x = load_16B<target>(wave_ops::query_chunk(p, r, kv_head, c));
      NETRA_UNROLL
      for (u32 w = 0; w < 4; ++w) *reinterpret_cast<u32*>(q + gqa8_warpgroup_layout::k_major_element_offset(row, 8 * j + 2 * w)) = x[static_cast<int>(w)];
    }
  }

  /// Piece n widened into `wide`: K as B of Q K^T (the k-steps above), V as B of P V.
  static NETRA_DEVICE void widen_piece(const u8* staged, u8* wide, bool is_v) {
    const u32 i = thread_id<target>();
    static_assert(workgroup_size == 256, "netra::kernels::attention_gqa8_warpgroup_staging: one widening item per thread of 256");
    if (!is_v) {  // item (position, c): chunks 4c .. 4c + 3 of the position
      const u32 pos = i % 8 + 8 * ((i / 8) % 8), c = i / 64;
      widen_k_item<target, Contract::head_dim>(wide, pos, c, [&](u32 t) { return *reinterpret_cast<const u32x4*>(staged + 16 * staged_k_chunk(pos, 4 * c + t)); });
    } else {  // item (element group dg, position group pg): one core matrix
      const u32 dg = i % 32;
      widen_v_item<target>(wide, dg, i / 32, [&](u32 pos) { return reinterpret_cast<const u32*>(staged + 16 * staged_v_chunk(pos, dg / 2) + 8 * (dg % 2)); });
    }
    lds_visible_to_matrix_unit<target>();  // read after the next workgroup barrier
  }

  struct lds_layout {
    typename ring::lds_layout r;
    u8* q;        // [8 Tq rows x 256] BF16, k_major_offset (the last warpgroup's rows past 8 Tq read wide[0]: padding)
    u8* wide;     // two widened pieces: n (read by the matrix unit) and n + 1 (being widened), by parity
    NETRA_DEVICE u8* wide_of(u32 n) const { return wide + (n % 2) * Contract::wide_bytes; }
  };

  static NETRA_DEVICE void run(const params& p) {
    NETRA_DYNAMIC_SHARED_BYTES(lds);
    lds_layout l{};
    l.r.ring = lds;
    l.q = lds + Contract::ring_bytes;
    l.wide = l.q + Contract::q_bytes;
    l.r.table = reinterpret_cast<i64*>(l.wide + 2 * Contract::wide_bytes);
    l.r.stats = reinterpret_cast<float*>(reinterpret_cast<u8*>(l.r.table) + Contract::table_bytes);
    float* epilogue = reinterpret_cast<float*>(lds);  // over the ring, Q and the wide pieces, after the loop
    const u32 slice = workgroup_id<target, 0>(), kv_head = workgroup_id<target, 1>(), b = workgroup_id<target, 2>();
    const u32 wave = wave_id<target>(), lane = lane_id<target>(), group = wave / 4;

    typename ring::slice_view v;
    static_cast<typename wave_ops::slice&>(v) = wave_ops::slice_of(p, b, slice);
    if (!v.r.writable) return;  // uniform over the workgroup
    v.rounds = v.blocks;
    v.pieces = 2 * v.rounds;
    i64 visible_end[2];
    NETRA_UNROLL
    for (u32 k = 0; k < 2; ++k) visible_end[k] = Contract::visible_end(v.r.length, 2 * wave + k);
    const float score_scale = mul_rn(*p.k_scale, Contract::softmax_scale), v_scale = *p.v_scale;

    load_queries(p, v.r, kv_head, l.q);
    typename ring::look_up lookups;
    for (u32 round = 0; round < ring::prologue_rounds; ++round) {
      lookups.start(p, v, round);
      lookups.finish(p, v, l.r);
    }
    lookups.start(p, v, ring::prologue_rounds);
    lds_visible_to_matrix_unit<target>();
    workgroup_barrier<target>();
    const u8* q_group = l.q + group * 8 * k_major_group_bytes;

    for (u32 n = 0; n < S; ++n) ring::issue(p, v, kv_head, n, l.r);
    wait_lds_copies<target, S - 1>();
    workgroup_barrier<target>();
    if (v.pieces > 0) widen_piece(l.r.ring, l.wide_of(0), false);
    softmax_stats st[2] = {softmax_empty(), softmax_empty()};
    float o[128] = {};
    u32 pb[plan::scores / 2] = {};
    float alpha[2] = {0.0f, 0.0f};
    // Iteration n: piece n (widened, in wide[n % 2]) on the matrix unit while the workgroup widens
    // piece n + 1 into wide[(n + 1) % 2]; one barrier a piece (piece n + 1 staged and wide[n % 2]
    // visible; wide[(n + 1) % 2] and piece n's ring slot free), piece n + S issued after it.
    for (u32 n = 0; n < v.pieces; ++n) {
      wait_lds_copies<target, S - 2>();
      workgroup_barrier<target>();
      ring::issue(p, v, kv_head, n + S, l.r);
      if ((n + S + 1) % 2 == 0 && (n + S + 1) / 2 >= ring::prologue_rounds) {  // the round of piece n + S + 1, started two iterations ago
        lookups.finish(p, v, l.r);
        lookups.start(p, v, (n + S + 1) / 2 + 1);
      }
      const u32 blk = n / 2;
      const u8* wide = l.wide_of(n);
      if (n % 2 == 0) {
        float s[plan::scores] = {};
        warpgroup_mma_fence<target>();
        NETRA_UNROLL
        for (u32 step = 0; step < 16; ++step)
          warpgroup_mma_bf16_m64n64_lds<target>(s, lds_operand_descriptor<target>(q_group + 2 * step * core_bytes, core_bytes, k_major_group_bytes),
                                                lds_operand_descriptor<target>(wide + 2 * step * core_bytes, core_bytes, k_major_group_bytes), step > 0);
        warpgroup_mma_commit<target>();
        if (n + 1 < v.pieces) widen_piece(l.r.ring + ((n + 1) % S) * Contract::piece_bytes, l.wide_of(n + 1), true);
        warpgroup_mma_wait<target, 0>();
        // The ring's mask as data: bit c of `valid` = column c's slot id >= 0 (two ballots over the
        // block's 64 ids), and columns below limit[k] visible to token slot k (causal).
        const i64* ids = l.r.table + (blk % Contract::table_rounds) * 64;
        const u64 valid = (wave_ballot<target>(ids[lane] >= 0) & 0xFFFFFFFFu) | wave_ballot<target>(ids[lane + 32] >= 0) << 32;
        const i64 block_start = v.start + 64 * static_cast<i64>(blk);
        u32 limit[2];
        NETRA_UNROLL
        for (u32 k = 0; k < 2; ++k) limit[k] = static_cast<u32>(min_of(i64{64}, max_of(i64{0}, visible_end[k] - block_start)));
        wave_ops::block_weights(st, pb, alpha, s, score_scale, [&](u32, fragment_element e) {
          return (((valid >> e.col) & 1u) != 0) & (e.col < limit[e.row / Contract::group]);
        }, weight_of_max{});
      } else {
        NETRA_UNROLL
        for (u32 i = 0; i < 128; ++i) o[i] = mul_rn(o[i], alpha[(i >> 1) & 1]);
        warpgroup_mma_fence<target>();
        NETRA_UNROLL
        for (u32 kk = 0; kk < 4; ++kk) {
          const u32 a[4] = {pb[4 * kk], pb[4 * kk + 1], pb[4 * kk + 2], pb[4 * kk + 3]};
          warpgroup_mma_bf16_m64n256_regs<target>(o, a, lds_operand_descriptor<target>(wide + 2 * kk * core_bytes, core_bytes, v_group_bytes), true);
        }
        warpgroup_mma_commit<target>();
        if (n + 1 < v.pieces) widen_piece(l.r.ring + ((n + 1) % S) * Contract::piece_bytes, l.wide_of(n + 1), false);
        warpgroup_mma_wait<target, 0>();
      }
    }

    workgroup_barrier<target>();  // every warp is done with the ring
    if (wave < Contract::waves) {
      const u32 g = lane >> 2, t = lane & 3;
      NETRA_UNROLL
      for (u32 i = 0; i < 128; ++i)
        epilogue[(wave * plan::rows + g + 8 * ((i >> 1) & 1)) * Contract::head_dim + 8 * (i >> 2) + 2 * t + (i & 1)] = o[i];
      if (t == 0)
        NETRA_UNROLL
        for (u32 k = 0; k < 2; ++k) {
          l.r.stats[(wave * plan::rows + g + 8 * k) * 2] = st[k].m;
          l.r.stats[(wave * plan::rows + g + 8 * k) * 2 + 1] = st[k].l;
        }
    }
    workgroup_barrier<target>();
    wave_ops::write_rows(p, v.r, b, slice, kv_head, epilogue, l.r.stats, v_scale);
  }
};

}  // namespace netra::kernels
