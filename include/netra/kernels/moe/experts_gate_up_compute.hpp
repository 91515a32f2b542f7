// netra/kernels/moe/experts_gate_up_compute.hpp — the compute of contracts::moe_expert_gate_up's
// kernel (experts_gate_up.hpp): per instruction tile the hidden quantization of the tile's used
// columns into B pieces (quantize_tile), the block-scaled products over the wave's 4 blocks
// (dsl/fragment/block_scaled.hpp, acc = fma(P_b, sw_b * sx_b, acc) in block order), the wave
// partials through LDS and the BF16 stores (serve); invalid-id units' zero rows.
//   Quantization, one column at a time: lane l takes hidden values [V l, V l + V) of the wave's
//   K range (V = 512 / wave size), the 128 / V lanes of a scale block join their magnitudes
//   (xor butterfly) and apply moe::hidden_block_quant, and the lanes whose B column it is gather
//   their pieces' words and the column's block scales by shuffle (so few used columns cost
//   little; an LDS image of the chunk would not fit beside the staged weights).
//   Epilogue: the k_split wave partials go through LDS [4][16 columns][16 rows]; thread j < 32
//   takes column j / 2, rows 8 (j % 2) .. + 8, adds them in wave order, rounds to BF16, stores
//   16 bytes of out.
#pragma once
#include "netra/kernels/moe/experts_gate_up_layout.hpp"

namespace netra::kernels::moe_experts {

template <class Contract> struct gate_up_compute : gate_up_layout<Contract> {
  using base = gate_up_layout<Contract>;
  using typename base::target, typename base::F, typename base::S, typename base::weights, typename base::params, typename base::shared_state;
  using base::wave, base::k_split, base::tile_rows, base::blocks_per_wave, base::k_per_wave, base::chunk_columns, base::weights_in_lds;
  using base::pass_values, base::pass_lanes, base::pass_words, base::pass_loads, base::pass_masks;
  using base::lane_column, base::load_weights, base::stage_weights;

  /// The lane's B words of instruction tile n for the wave's 4 blocks (zeros for unused columns)
  /// and sx, the blocks' scales of its column. One column at a time (so few columns cost little):
  /// lane l loads the column's hidden values [V l, V l + V) of the wave's K range (the next
  /// column's already in flight), the 128 / V lanes of a block join their magnitudes (xor
  /// butterfly), quantize with moe::hidden_block_quant, and the lanes whose B column it is take
  /// their pieces' words from the lanes that hold them. Every lane of the wave calls it.
  template <u32 Wants>
  static NETRA_DEVICE void quantize_tile(const params& p, const moe_experts::route_scan<Wants>& scan, u32 columns, u32 w, u32 lane, u32 n,
                                         u32 (&q)[blocks_per_wave][F::act_pieces][4], float (&sx)[blocks_per_wave]) {
    NETRA_UNROLL
    for (u32 b = 0; b < blocks_per_wave; ++b) {
      sx[b] = 0.0f;
      NETRA_UNROLL
      for (u32 v = 0; v < F::act_pieces; ++v) {
        NETRA_UNROLL
        for (u32 j = 0; j < 4; ++j) q[b][v][j] = 0;
      }
    }
    const u32 first = n * F::tile_columns, end = min_of(columns, first + F::tile_columns);  // uniform
    const u32 tile_route = moe_experts::select(scan.route, n);
    const u32 my_column = lane_column(lane, n);
    auto load_column = [&](u32 c, u32x4 (&raw)[pass_loads]) {
      const u32 r = target_ops<target>::broadcast(tile_route, F::b_lane_of(c - first));
      const u16* x = p.hidden + static_cast<u64>(moe::route_layout::token_of(r)) * weights::hidden + w * k_per_wave + lane * pass_values;
      NETRA_UNROLL
      for (u32 h = 0; h < pass_loads; ++h) raw[h] = load_16B<target, cache_policy::streaming_early>(x + 8 * h);
    };
    u32x4 next[pass_loads];
    load_column(first, next);
    NETRA_NO_UNROLL
    for (u32 c = first; c < end; ++c) {
      u32x4 raw[pass_loads];
      NETRA_UNROLL
      for (u32 h = 0; h < pass_loads; ++h) raw[h] = next[h];
      if (c + 1 < end) load_column(c + 1, next);  // uniform
      u32 magnitude = 0;
      NETRA_UNROLL
      for (u32 h = 0; h < pass_loads; ++h) magnitude = max_of(magnitude, moe_experts::bf16x8_magnitude(raw[h]));
      NETRA_UNROLL
      for (u32 i = 0; i < pass_masks; ++i) magnitude = max_of(magnitude, xor_shuffle_u32<target>(magnitude, 1u << i));
      using quant = typename Contract::hidden_quant;  // the contract's FP8 format
      const typename quant::block hb = quant::of(magnitude);
      u32 held[pass_words];
      NETRA_UNROLL
      for (u32 i = 0; i < pass_words; ++i) {
        const u32x4& half = raw[i >> 1];
        const u32 w0 = half[static_cast<int>(2 * (i & 1))], w1 = half[static_cast<int>(2 * (i & 1) + 1)];
        held[i] = hb.poison ? quant::poison_word
                            : (hb.zero ? 0u : moe_experts::e4m3x4_of_bf16_scaled<target, typename Contract::fp8_format>(w0, w1, hb.reciprocal));
      }
      // Word j of piece v, block b holds K = 128 b + k + 4 j (k = the piece's first K, a multiple
      // of V): lane (128 b + k + 4 j) / V, its word (4 j % V) / 4.
      const bool mine = my_column == c;
      NETRA_UNROLL
      for (u32 b = 0; b < blocks_per_wave; ++b) {
        NETRA_UNROLL
        for (u32 v = 0; v < F::act_pieces; ++v) {
          const fragment::piece pc = F::act_piece(lane, n, v);
          NETRA_UNROLL
          for (u32 j = 0; j < 4; ++j) {
            const u32 got = target_ops<target>::broadcast(held[(4 * j % pass_values) / 4], (b * weights::block + pc.k + 4 * j) / pass_values);
            q[b][v][j] = mine ? got : q[b][v][j];
          }
        }
        const float scale = bit_cast<float>(target_ops<target>::broadcast(bit_cast<u32>(hb.scale), b * pass_lanes));
        sx[b] = mine ? scale : sx[b];
      }
    }
  }

  /// +0.0 into the tile's 16 rows of each of an invalid-id unit's `columns` routes; `zero_route`
  /// is the route of the storing thread's column (threads < 2 x columns store).
  static NETRA_DEVICE void store_zero_rows(const params& p, u32 columns, u32 zero_route, u32 row0, u32 thread) {
    if (thread < min_of(columns, chunk_columns) * (tile_rows / 8))
      store_16B<target>(p.out + static_cast<u64>(zero_route) * weights::gate_up_rows + row0 + 8 * (thread % (tile_rows / 8)), u32x4{0, 0, 0, 0});
  }

  /// unit_list, resident: a unit of the list in route-scan form: its expert (invalid: an invalid id), its
  /// column count, and route[n] = the route of column want[n] (no_route past the count), with
  /// `route_of(c)` the route of column c < 16 (lanes may ask for different c; every lane calls it).
  template <class RouteOf>
  static NETRA_DEVICE moe_experts::route_scan<F::tiles> listed_unit(i32 expert, u32 columns, const u32 (&want)[F::tiles], RouteOf route_of) {
    moe_experts::route_scan<F::tiles> u;
    u.expert = expert;
    u.count = columns;
    u.earlier = false;
    u.earlier_count = 0;
    NETRA_UNROLL
    for (u32 n = 0; n < F::tiles; ++n) {
      const u32 route = route_of(want[n]);
      u.route[n] = want[n] < columns ? route : moe_experts::no_route;
    }
    return u;
  }

  /// Serves one unit of a valid expert for the tile's rows [row0, row0 + 16): its weight bytes in
  /// flight first (`use`: stage_weights), then per instruction tile the columns' quantization and
  /// the block products, the wave partials through LDS, the BF16 stores.
  /// `staged` (weights_in_lds): the tile's rows were put in flight already, as the `use`-th staging
  /// (stage_first_rows).
  static NETRA_DEVICE void serve(const params& p, shared_state& sh, const moe_experts::route_scan<F::tiles>& scan, u32 row0, u32 w, u32 lane,
                                 u32 thread, u32 use, bool staged = false) {
    const i32 expert = scan.expert;
    // All weight bytes of this wave's K range in flight, before anything else.
    const u8* tile_rows_k0 = p.w13 + static_cast<u64>(expert) * weights::w13_expert_bytes + static_cast<u64>(row0) * weights::hidden;
    u32x4 wt[weights_in_lds ? 1 : blocks_per_wave][F::weight_pieces];
    if constexpr (weights_in_lds) {
      if (!staged) stage_weights(sh, tile_rows_k0, thread, use);  // uniform
    } else {
      load_weights(tile_rows_k0 + w * k_per_wave, lane, wt);
    }
    // The wave's 4 block scales (they arrive with the weights): lane l holds block l % 4's, the
    // block loop takes it from lane b (one register instead of four).
    const float* srow = p.s13 + static_cast<u64>(expert) * (weights::w13_scale_rows * weights::w13_scale_cols) +
                        (row0 / weights::block) * weights::w13_scale_cols + w * blocks_per_wave;
    const float weight_scale = srow[lane % blocks_per_wave];

    const u32 columns = min_of(scan.count, chunk_columns);  // uniform
    NETRA_NO_UNROLL
    for (u32 n = 0; n < F::tiles; ++n) {
      if (n * F::tile_columns >= columns) break;  // uniform: no column of this tile is used
      const u32 my_route = moe_experts::select(scan.route, n);  // the route of the lane's B column
      u32 q[blocks_per_wave][F::act_pieces][4];
      float sx[blocks_per_wave];
      quantize_tile(p, scan, columns, w, lane, n, q, sx);
      if constexpr (weights_in_lds) bulk_copy_ops<target>::wait(sh.weight_ready, use & 1u);
      float acc[S::d_items];
      NETRA_UNROLL
      for (u32 i = 0; i < S::d_items; ++i) acc[i] = 0.0f;
      auto gather = [&](u32 b, u32x4 (&wb)[F::weight_pieces]) {
        NETRA_UNROLL
        for (u32 v = 0; v < F::weight_pieces; ++v) {
          if constexpr (weights_in_lds) {
            const fragment::piece pc = F::weight_piece(lane, v);
            wb[v] = *reinterpret_cast<const u32x4*>(&sh.weight[pc.index][w * k_per_wave + b * weights::block + pc.k]);
          } else {
            wb[v] = wt[b][v];
          }
        }
      };
      auto block_weight_scale = [&](u32 b) { return bit_cast<float>(wave_broadcast<target>(bit_cast<u32>(weight_scale), b)); };
      fragment::block_scaled_accumulate<F, target, fragment::scale_policy::fma_chain>(acc, lane, n, gather, q, block_weight_scale, sx);
      NETRA_UNROLL
      for (u32 i = 0; i < S::d_items; ++i) {
        const fragment_element e = F::d_element(lane, n, i);
        sh.partial[w][e.col][e.row] = acc[i];
      }
      if (my_route != moe_experts::no_route) sh.column_route[lane_column(lane, n)] = my_route;  // every lane of a column writes the same value
    }
    workgroup_barrier<target>();
    if (thread < columns * (tile_rows / 8)) {
      const u32 column = thread / (tile_rows / 8), r0 = 8 * (thread % (tile_rows / 8));
      u32 packed[4];
      NETRA_UNROLL
      for (u32 j = 0; j < 4; ++j) {
        float v[2];
        NETRA_UNROLL
        for (u32 h = 0; h < 2; ++h) {
          float s = sh.partial[0][column][r0 + 2 * j + h];
          NETRA_UNROLL
          for (u32 ww = 1; ww < k_split; ++ww) s = add_rn(s, sh.partial[ww][column][r0 + 2 * j + h]);
          v[h] = s;
        }
        packed[j] = pack_bf16x2<target>(v[0], v[1]);
      }
      store_16B<target>(p.out + static_cast<u64>(sh.column_route[column]) * weights::gate_up_rows + row0 + r0,
                        u32x4{packed[0], packed[1], packed[2], packed[3]});
    }
  }
};

}  // namespace netra::kernels::moe_experts
