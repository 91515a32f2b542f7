// netra/kernels/moe/grouped_down.hpp — the one kernel of contracts::moe_grouped_down (and of
// contracts::moe_split_k_down, its KParts 2 instance for M = 768).
//
// Contract: per route, y (KParts 1, FP32) or the two FP16 K partials (KParts 2) of the down
// projection; semantics in contracts/moe/grouped_down.hpp.
// Mapping: grid (RowTiles x KParts, max_expert_tiles(9M): the invalid key's tiles come last and
// need none); workgroup (x, j) = plan tile j (key e, up to Tile routes), K part p = x % KParts
// (scale blocks 4 p / KParts ..), rows [2048 / RowTiles * (x / KParts), + 2048 / RowTiles). Workgroups with j >= the call's tile count, or whose tile is
// the invalid key's, exit. 8 waves.
//   1. Thread c < routes reads the tile's c-th route; the columns' activations of the part (act
//      rows, 512 / KParts E4M3 bytes each) land in LDS with their scales.
//   2. Passes of 128 rows; wave w owns 16 rows of each. The wave's weight pieces of all the
//      part's blocks are loaded at once (the first pass's before step 1, the next pass's before
//      this pass's products); per used
//      16-column chunk and instruction tile: per block b, q_b = P_b * (sa_b * sw_b), summed in
//      block order; stored per D item to the route's row of the partials (FP32, or FP16 by
//      grouped_f16.hpp).
// On sm90a: programmatic dependent launch (released at once, waits before reading the plan;
// EarlyWeights: asks L2 for its W2 rows before that wait).
#pragma once
#include "netra/contracts/moe/grouped_down.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/prefetch.hpp"
#include "netra/dsl/strong_load.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/moe/grouped_f16.hpp"
#include "netra/kernels/moe/grouped_tile.hpp"

namespace netra::kernels {

template <class Contract> struct moe_grouped_down_kernel {
  using target = typename Contract::target;
  using layout = typename Contract::layout;
  using weights = moe::expert_weights;
  using F = moe_grouped::fragment<target>;
  using S = typename F::shape;
  static constexpr const char* symbol = "netra_moe_grouped_down";
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 waves = Contract::waves;
  static constexpr u32 workgroup_size = waves * wave;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 tile = Contract::tile;
  static constexpr u32 chunks = tile / F::chunk_columns;
  static constexpr u32 k_parts = Contract::k_parts;
  static constexpr u32 part_blocks = weights::w2_scale_cols / k_parts;  // 4 or 2
  static constexpr u32 part_k = Contract::part_k;
  static constexpr u32 stride = Contract::column_stride;
  static constexpr u32 pass_rows = waves * F::rows;  // 128
  static constexpr u32 workgroup_rows = weights::hidden / Contract::row_tiles;
  static constexpr u32 passes = workgroup_rows / pass_rows;
  static constexpr u32 min_workgroups_per_processor = 1;
  static_assert(workgroup_rows % pass_rows == 0 && pass_rows == weights::block, "grouped down: whole 128-row passes, one scale row each");

  struct params {
    const u8* plan;
    const u8* act;            // E4M3 [9M, 512]
    const float* act_scales;  // FP32 [9M, 4]
    const u8* w2;             // E4M3 [257, 2048, 512]
    const float* s2;          // FP32 [257, 16, 4]
    void* partials;           // FP32 [R_max, 2048] or FP16 [R_max, 2048, 2]
    u32 tokens;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{Contract::row_tiles * k_parts, layout::max_expert_tiles(tokens * moe::route_layout::slots), 1}, workgroup_size, 0};
  }

  struct shared_state {
    alignas(16) u8 staged[tile * stride];
    float sa[tile][part_blocks];
    u32 route[tile];
  };

  using pass_weights = moe_grouped::weight_pieces<target>[part_blocks];

  static NETRA_DEVICE void load_pass(const u8* expert, u32 row0, u32 part, u32 lane, pass_weights& wt) {
    NETRA_UNROLL
    for (u32 b = 0; b < part_blocks; ++b)
      moe_grouped::load_weight_pieces<target, weights::intermediate>(expert + static_cast<u64>(row0) * weights::intermediate,
                                                                     (part * part_blocks + b) * weights::block, lane, wt[b]);
  }

  /// Step 2 for one pass: the wave's 16 rows from row0, every used chunk.
  static NETRA_DEVICE void pass(const params& p, const shared_state& sh, const pass_weights& wt, u32 key, u32 row0, u32 part, u32 routes) {
    const u32 lane = lane_id<target>();
    const float* srow = p.s2 + static_cast<u64>(key) * (weights::w2_scale_rows * weights::w2_scale_cols) + (row0 / weights::block) * weights::w2_scale_cols;
    const float scale = lane < part_blocks ? srow[part * part_blocks + lane] : 0.0f;
    const u32 used = ceil_div(routes, F::chunk_columns);
    NETRA_UNROLL
    for (u32 c = 0; c < chunks; ++c) {
      if (c >= used) break;  // uniform
      NETRA_UNROLL
      for (u32 n = 0; n < F::tiles; ++n) {
        float y[S::d_items];
        NETRA_UNROLL
        for (u32 b = 0; b < part_blocks; ++b) {
          float d[S::d_items];
          moe_grouped::chunk_product<target, stride>(d, wt[b], sh.staged, c, n, b * weights::block, lane);
          const float sw = bit_cast<float>(wave_broadcast<target>(bit_cast<u32>(scale), b));
          NETRA_UNROLL
          for (u32 i = 0; i < S::d_items; ++i) {
            const float q = mul_rn(d[i], mul_rn(sh.sa[moe_grouped::item_column<target>(lane, c, n, i)][b], sw));
            y[i] = b == 0 ? q : add_rn(y[i], q);
          }
        }
        NETRA_UNROLL
        for (u32 i = 0; i < S::d_items; ++i) {
          const u32 col = moe_grouped::item_column<target>(lane, c, n, i);
          if (col >= routes) continue;
          const u64 at = static_cast<u64>(sh.route[col]) * weights::hidden + row0 + moe_grouped::item_row<target>(lane, n, i);
          if constexpr (k_parts == 1) static_cast<float*>(p.partials)[at] = y[i];
          else static_cast<u16*>(p.partials)[2 * at + part] = moe_grouped::f16_from_f32_rn(y[i]);
        }
      }
    }
  }

  /// EarlyWeights: L2 prefetches of the workgroup's W2 rows (16 rows a thread) for the expert of
  /// a speculative read of tile j (not ordered after the plan: a stale key wastes the prefetch).
  static NETRA_DEVICE void prefetch_rows(const params& p, u32 x, u32 j) {
    constexpr u32 rows_per_request = 16;
    const u32 thread = thread_id<target>();
    if (thread >= workgroup_rows / rows_per_request) return;
    const u32 key = min_of(load_u32_strong<target>(p.plan + layout::tiles_offset + 16ull * j), weights::experts - 1);
    const u32 row = workgroup_rows * (x / k_parts) + rows_per_request * thread;
    prefetch_l2<target>(p.w2 + static_cast<u64>(key) * weights::w2_expert_bytes + static_cast<u64>(row) * weights::intermediate,
                        rows_per_request * weights::intermediate);
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED shared_state sh;
    launch_dependents<target>();
    if constexpr (Contract::early_weights) prefetch_rows(p, workgroup_id<target, 0>(), workgroup_id<target, 1>());
    wait_for_prerequisites<target>();  // gate_up's activations (and before them the plan) exist
    const u32 x = workgroup_id<target, 0>(), j = workgroup_id<target, 1>();
    if (j >= moe_grouped::plan_tile_count<layout>(p.plan)) return;  // uniform
    const moe_grouped::plan_tile t = moe_grouped::load_plan_tile<target, layout>(p.plan, j);
    if (t.key == layout::invalid_key) return;  // the reducer gives these routes y = +0
    const u32 thread = thread_id<target>(), lane = lane_id<target>(), w = wave_id<target>();
    const u32 part = x % k_parts, first_row = workgroup_rows * (x / k_parts) + F::rows * w;
    const u8* expert = p.w2 + static_cast<u64>(t.key) * weights::w2_expert_bytes;
    pass_weights cur, next;
    load_pass(expert, first_row, part, lane, next);  // the first pass's weights in flight while the activations are staged
    if (thread < t.routes) sh.route[thread] = moe_grouped::plan_routes<layout>(p.plan)[t.first + thread];
    workgroup_barrier<target>();
    moe_grouped::stage_columns<target, part_k, stride, workgroup_size>(
        sh.staged, t.routes, thread, [&](u32 c) { return p.act + static_cast<u64>(sh.route[c]) * weights::intermediate + part * part_k; });
    for (u32 s = thread; s < t.routes * part_blocks; s += workgroup_size)
      sh.sa[s / part_blocks][s % part_blocks] = p.act_scales[static_cast<u64>(sh.route[s / part_blocks]) * weights::w2_scale_cols + part * part_blocks + s % part_blocks];
    workgroup_barrier<target>();

    NETRA_NO_UNROLL
    for (u32 q = 0; q < passes; ++q) {
      NETRA_UNROLL
      for (u32 b = 0; b < part_blocks; ++b)
        NETRA_UNROLL
        for (u32 v = 0; v < F::weight_pieces; ++v) cur[b][v] = next[b][v];
      if (q + 1 < passes) load_pass(expert, first_row + (q + 1) * pass_rows, part, lane, next);
      pass(p, sh, cur, t.key, first_row + q * pass_rows, part, t.routes);
    }
  }
};

template <class Target, u32 MinTokens, u32 MaxTokens, u32 Tile, u32 KParts, u32 RowTiles, u32 EarlyWeights, u32 WaveSize>
struct kernels_of<contracts::moe_grouped_down<Target, MinTokens, MaxTokens, Tile, KParts, RowTiles, EarlyWeights, WaveSize>> {
  using type = type_list<moe_grouped_down_kernel<contracts::moe_grouped_down<Target, MinTokens, MaxTokens, Tile, KParts, RowTiles, EarlyWeights, WaveSize>>>;
};

}  // namespace netra::kernels
