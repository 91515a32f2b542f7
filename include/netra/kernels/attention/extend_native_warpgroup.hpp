// netra/kernels/attention/extend_native_warpgroup.hpp — stage one of
// contracts::attention_gqa4_extend_native with the field WarpgroupMma (targets with
// has_warpgroup_mma): the products of a block run on the warpgroup matrix unit from LDS
// (dsl/warpgroup_mma.hpp) instead of per warp from registers; the slice, the staging, the block
// step, the epilogue and the bits are the per-warp plan's (extend_native_staging.hpp,
// extend_native.hpp).
//
// Grid (slices, 8, batch); one warpgroup (128 threads). Warp w holds operand rows 16w .. 16w + 15
// (row 4t + j: head 4 kv + j of extension token t; rows of tokens >= E_b are zero, rows 48..63
// padding: warp 3 and warps past the request's tokens take no block step and store nothing). Q
// goes into LDS once ([64 rows][128] BF16, gqa8_warpgroup_layout's K-major layout). The slice
// streams through the ring's pieces (K of block n / 2 for n even, V for n odd), issued Stages
// ahead; the workgroup widens each piece once into one of two operand blocks
// (gqa8_warpgroup_widen.hpp). Iteration n, after its one workgroup barrier: issue piece n + Stages;
// start piece n's products (async), widen piece n + 1 into the other block meanwhile, then wait:
//   K piece: S(64 rows x 64 positions) = Q K^T in 8 k-steps; k-step 4c + s sums the head-dim
//     elements 64c + 16t + 4s + 2h + e — extend_plan.hpp's sm90a QK k-step — and the accumulator
//     layout per warp is the plan's score layout, so the block step (block_weights.hpp) follows;
//   V piece: o = o * alpha, then O(64 rows x 128) += P V in 4 k-steps of 16 positions in order,
//     A = the BF16 weights straight from the score registers (the plan's P words).
// Every score and o element is the per-warp plan's sum of the same k-steps in the same order
// (products exact, each k-step's sum added to the accumulator once; o's columns are the elements
// in order where the plan permutes them), so the bits are the plan's; the GPU tests compare them
// with netra's order on the host. Math = false keeps the grid, the copies, the look-ups, Q and the
// workspace writes and drops the widening and the products: this mapping's floor.
#pragma once
#include "netra/dsl/warpgroup_mma.hpp"
#include "netra/kernels/attention/extend_native_staging.hpp"
#include "netra/kernels/attention/gqa8_warpgroup_widen.hpp"

namespace netra::kernels {

template <class Contract, bool Math = true> struct attention_extend_native_warpgroup_stage_one : extend_native_stage_one_kernel<Contract, Math> {
  using kernel = extend_native_stage_one_kernel<Contract, Math>;
  using typename kernel::staging, typename kernel::target, typename kernel::plan, typename kernel::params;
  using kernel::S, kernel::T, kernel::G, kernel::workgroup_size;
  static constexpr u32 D = Contract::head_dim;
  static constexpr u32 core_bytes = gqa8_warpgroup_layout::core_bytes, group_bytes = gqa8_warpgroup_layout::k_major_group_bytes_of<D>;
  static_assert(target::has_warpgroup_mma && Contract::warpgroup_mma && workgroup_size == 128 && plan::rows == 16 && plan::o_items == D / 2,
                "netra::kernels::attention_extend_native_warpgroup_stage_one: one warpgroup of four 16-row warps and a target with has_warpgroup_mma");
  static_assert(Contract::wide_bytes == gqa8_warpgroup_layout::v_operand_bytes_of<D> && Contract::q_bytes == 8 * group_bytes,
                "netra::kernels::attention_extend_native_warpgroup_stage_one: the operand blocks' bytes");

  /// The 48 rows' queries (zero past E_b and in the padding rows) into the Q operand.
  static NETRA_DEVICE void load_queries(const params& a, const extend_request& e, u32 kv, u8* q) {
    for (u32 c = thread_id<target>(); c < 64 * (D / 8); c += workgroup_size) {
      const u32 row = c / (D / 8), j = c % (D / 8), t = row / G;
      const u32x4 x = row < Contract::rows && t < e.count
                          ? load_16B<target>(a.q + (static_cast<u64>(e.first + t) * Contract::q_heads + G * kv + row % G) * D + 8 * j)
                          : u32x4{0, 0, 0, 0};
      NETRA_UNROLL
      for (u32 w = 0; w < 4; ++w) *reinterpret_cast<u32*>(q + gqa8_warpgroup_layout::k_major_element_offset<D>(row, 8 * j + 2 * w)) = x[static_cast<int>(w)];
    }
  }

  /// Piece n (staged) widened into `wide`: K as B of Q K^T, V as B of P V; one item a thread.
  static NETRA_DEVICE void widen_piece(const u8* staged, u8* wide, bool is_v) {
    const u32 i = thread_id<target>();
    if (!is_v) {  // item (position, c): chunks 4c .. 4c + 3 of the position (64 positions x 2)
      const u32 pos = i % 8 + 8 * ((i / 8) % 8), c = i / 64;
      widen_k_item<target, D>(wide, pos, c, [&](u32 t) { return *reinterpret_cast<const u32x4*>(staged + 16 * extend_staged_chunk(pos, 4 * c + t)); });
    } else {  // item (element group dg, position group pg): 16 x 8
      const u32 dg = i % 16;
      widen_v_item<target>(wide, dg, i / 16, [&](u32 pos) { return reinterpret_cast<const u32*>(staged + 16 * extend_staged_chunk(pos, dg / 2) + 8 * (dg % 2)); });
    }
    lds_visible_to_matrix_unit<target>();  // read after the next workgroup barrier
  }

  static NETRA_DEVICE void run(const params& a) {
    NETRA_DYNAMIC_SHARED_BYTES(lds);
    u8* ring = lds;
    u8* q = lds + Contract::ring_bytes;
    u8* wide = q + Contract::q_bytes;  // two widened pieces: n (read by the matrix unit) and n + 1 (being widened), by parity
    i64* table = reinterpret_cast<i64*>(wide + 2 * Contract::wide_bytes);
    auto wide_of = [wide](u32 n) { return wide + (n % 2) * Contract::wide_bytes; };
    const attention_gqa8_args& p = a.view;
    const u32 warp = wave_id<target>(), lane = lane_id<target>();
    const auto [sl, kv, b, e, v] = staging::start(a);
    if (!e.writable) return;  // uniform over the workgroup
    const u32 pieces = 2 * v.blocks;
    const bool busy = warp * plan::rows < Contract::rows && warp * plan::rows / G < e.count;  // the warp's first token is one of the request's
    const float score_scale = mul_rn(*p.k_scale, Contract::softmax_scale);

    load_queries(a, e, kv, q);
    typename staging::look_up lookups = staging::first_rounds(p, v, table);
    lds_visible_to_matrix_unit<target>();
    workgroup_barrier<target>();
    for (u32 n = 0; n < S; ++n) staging::issue(p, v, kv, n, ring, table);
    wait_lds_copies<target, S - 1>();
    workgroup_barrier<target>();
    if (Math && pieces > 0) widen_piece(ring, wide_of(0), false);

    softmax_stats st[plan::row_slots] = {softmax_empty(), softmax_empty()};
    float alpha[plan::row_slots] = {0.0f, 0.0f};
    float o[plan::o_items] = {};
    u32 pb[plan::scores / 2] = {};
    // Iteration n: piece n (widened, in wide_of(n)) on the matrix unit while the workgroup widens
    // piece n + 1; one barrier a piece (piece n + 1 staged and wide_of(n) visible; wide_of(n + 1)
    // and piece n's ring slot free), piece n + S issued after it.
    for (u32 n = 0; n < pieces; ++n) {
      wait_lds_copies<target, S - 2>();
      workgroup_barrier<target>();
      staging::issue(p, v, kv, n + S, ring, table);
      if ((n + S + 1) % 2 == 0 && (n + S + 1) / 2 >= T) {  // the round of piece n + S + 1, started two iterations ago
        lookups.finish(p, v, table);
        lookups.start(p, v, (n + S + 1) / 2 + 1);
      }
      if constexpr (Math) {
        const u8* operand = wide_of(n);
        const u8* next = ring + ((n + 1) % S) * Contract::piece_bytes;
        if (n % 2 == 0) {
          float s[plan::scores] = {};
          warpgroup_mma_fence<target>();
          NETRA_UNROLL
          for (u32 step = 0; step < D / 16; ++step)
            warpgroup_mma_bf16_m64n64_lds<target>(s, lds_operand_descriptor<target>(q + 2 * step * core_bytes, core_bytes, group_bytes),
                                                  lds_operand_descriptor<target>(operand + 2 * step * core_bytes, core_bytes, group_bytes), step > 0);
          warpgroup_mma_commit<target>();
          if (n + 1 < pieces) widen_piece(next, wide_of(n + 1), true);
          warpgroup_mma_wait<target, 0>();
          if (busy) {
            const u64 valid = staging::valid_positions(table + ((n / 2) % T) * Contract::block, lane);
            attention_block_weights<target, plan, weight_of_max>(st, pb, alpha, s, score_scale, lane,
                                                                 [valid](u32, fragment_element e) { return ((valid >> e.col) & 1u) != 0; });
          }
        } else {
          if (busy)
            NETRA_UNROLL
            for (u32 i = 0; i < plan::o_items; ++i) o[i] = mul_rn(o[i], alpha[(i >> 1) & 1]);
          warpgroup_mma_fence<target>();
          NETRA_UNROLL
          for (u32 kk = 0; kk < 4; ++kk) {
            const u32 pa[4] = {pb[4 * kk], pb[4 * kk + 1], pb[4 * kk + 2], pb[4 * kk + 3]};
            warpgroup_mma_bf16_m64n128_regs<target>(o, pa, lds_operand_descriptor<target>(operand + 2 * kk * core_bytes, core_bytes, gqa8_warpgroup_layout::v_group_bytes),
                                                    true);
          }
          warpgroup_mma_commit<target>();
          if (n + 1 < pieces) widen_piece(next, wide_of(n + 1), false);
          warpgroup_mma_wait<target, 0>();
        }
      }
    }
    // o item i of lane (g, t): row 16 warp + g + 8 ((i >> 1) & 1), element 8 (i >> 2) + 2t + (i & 1) (dsl/warpgroup_mma.hpp).
    staging::write_slice(p, e, b, sl, kv, o, st, [&](u32 i) {
      return fragment_element{busy ? 16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1) : Contract::rows, 8 * (i >> 2) + 2 * (lane & 3) + (i & 1)};
    }, reinterpret_cast<float*>(lds));
  }
};

}  // namespace netra::kernels
