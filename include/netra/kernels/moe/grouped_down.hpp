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
//   2. Passes of 128 rows; wave w owns 16 rows of each. Registers (WeightStages 0): the wave's
//      weight pieces of all the part's blocks are loaded at once (the first pass's before step 1,
//      the next pass's before this pass's products). Ring (WeightStages S): the pass's blocks in
//      order through a per-thread LDS ring of S blocks (grouped_tile.hpp), blocks 0 .. S - 2
//      issued before step 1 and block f + S - 1 before block f. Per used 16-column chunk and
//      instruction tile (Trim: per instruction tile holding a route): per block b, q_b = P_b *
//      (sa_b * sw_b), summed in block order; stored per D item to the route's row of the partials
//      (FP32, or FP16 by grouped_f16.hpp).
// On sm90a: programmatic dependent launch (released at once, waits before reading the plan).
#pragma once
#include "netra/contracts/moe/grouped_down.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/math.hpp"
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
  static constexpr u32 stages = Contract::weight_stages;
  static constexpr bool trim = Contract::trim;
  static constexpr u32 dynamic_lds_bytes = Contract::ring_bytes;
  static constexpr bool prefers_max_lds = stages > 0;
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
    return {{Contract::row_tiles * k_parts, layout::max_expert_tiles(tokens * moe::route_layout::slots), 1}, workgroup_size, dynamic_lds_bytes};
  }

  struct shared_state {
    alignas(16) u8 staged[tile * stride];
    float sa[tile][part_blocks];
    u32 route[tile];
  };

  /// The ring asks for as many workgroups per processor as its LDS allows (workgroups_by_lds), at
  /// most 3; the register form takes one.
  static constexpr u32 min_workgroups_per_processor =
      stages == 0 ? 1 : min_of(3u, workgroups_by_lds<target>(dynamic_lds_bytes + static_cast<u32>(sizeof(shared_state))));

  using pass_weights = moe_grouped::weight_pieces<target>[part_blocks];

  static NETRA_DEVICE void load_pass(const u8* expert, u32 row0, u32 part, u32 lane, pass_weights& wt) {
    NETRA_UNROLL
    for (u32 b = 0; b < part_blocks; ++b)
      moe_grouped::load_weight_pieces<target, weights::intermediate>(expert + static_cast<u64>(row0) * weights::intermediate,
                                                                     (part * part_blocks + b) * weights::block, lane, wt[b]);
  }

  using items = float[S::d_items];

  /// y (b = 0) or y + q_b: block b's terms of chunk c, instruction tile n (sw: the block's W2 scale).
  static NETRA_DEVICE void add_block(items& y, const shared_state& sh, const moe_grouped::weight_pieces<target>& wt, u32 c, u32 n, u32 b, float sw,
                                     u32 lane) {
    float d[S::d_items];
    moe_grouped::chunk_product<target, stride>(d, wt, sh.staged, c, n, b * weights::block, lane);
    NETRA_UNROLL
    for (u32 i = 0; i < S::d_items; ++i) {
      const float q = mul_rn(d[i], mul_rn(sh.sa[moe_grouped::item_column<target>(lane, c, n, i)][b], sw));
      y[i] = b == 0 ? q : add_rn(y[i], q);
    }
  }
  /// The routes' values of chunk c, instruction tile n, rows from row0 into the partials.
  static NETRA_DEVICE void store_items(const params& p, const shared_state& sh, const items& y, u32 c, u32 n, u32 row0, u32 part, u32 routes, u32 lane) {
    NETRA_UNROLL
    for (u32 i = 0; i < S::d_items; ++i) {
      const u32 col = moe_grouped::item_column<target>(lane, c, n, i);
      if (col >= routes) continue;
      const u64 at = static_cast<u64>(sh.route[col]) * weights::hidden + row0 + moe_grouped::item_row<target>(lane, n, i);
      if constexpr (k_parts == 1) static_cast<float*>(p.partials)[at] = y[i];
      else static_cast<u16*>(p.partials)[2 * at + part] = moe_grouped::f16_from_f32_rn(y[i]);
    }
  }
  /// Lane b < part_blocks: the W2 scale of block b of the part for the pass's rows from row0.
  static NETRA_DEVICE float pass_scale(const params& p, u32 key, u32 row0, u32 part, u32 lane) {
    const float* srow = p.s2 + static_cast<u64>(key) * (weights::w2_scale_rows * weights::w2_scale_cols) + (row0 / weights::block) * weights::w2_scale_cols;
    return lane < part_blocks ? srow[part * part_blocks + lane] : 0.0f;
  }

  /// Step 2 for one pass (registers): the wave's 16 rows from row0, every used chunk.
  static NETRA_DEVICE void pass(const params& p, const shared_state& sh, const pass_weights& wt, u32 key, u32 row0, u32 part, u32 routes) {
    const u32 lane = lane_id<target>();
    const float scale = pass_scale(p, key, row0, part, lane);
    const u32 used = ceil_div(routes, F::chunk_columns);
    NETRA_UNROLL
    for (u32 c = 0; c < chunks; ++c) {
      if (c >= used) break;  // uniform
      NETRA_UNROLL
      for (u32 n = 0; n < F::tiles; ++n) {
        if (!moe_grouped::tile_runs<target, trim>(c, n, routes)) break;  // uniform
        items y;
        NETRA_UNROLL
        for (u32 b = 0; b < part_blocks; ++b) add_block(y, sh, wt[b], c, n, b, bit_cast<float>(wave_broadcast<target>(bit_cast<u32>(scale), b)), lane);
        store_items(p, sh, y, c, n, row0, part, routes, lane);
      }
    }
  }

  /// Ring block f (pass f / part_blocks, block f % part_blocks) of the wave's rows into slot f % stages, one commit group.
  static NETRA_DEVICE void issue_block(const u8* expert, u32 first_row, u32 part, u32 f, u32 lane, u32 thread, u8* ring) {
    const u32 row0 = first_row + (f / part_blocks) * pass_rows;
    moe_grouped::copy_weight_pieces<target, weights::intermediate, workgroup_size, 1>(ring, f % max_of(stages, 1u), 0, expert + static_cast<u64>(row0) * weights::intermediate,
                                                                                     (part * part_blocks + f % part_blocks) * weights::block, lane, thread);
    commit_lds_copies<target>();
  }

  /// Step 2 through the ring: blocks 0 .. stages - 2 are in flight; per block the used chunks'
  /// terms, each pass's values stored after its last block.
  static NETRA_DEVICE void ring_passes(const params& p, const shared_state& sh, u8* ring, const u8* expert, u32 key, u32 first_row, u32 part, u32 routes) {
    constexpr u32 total = passes * part_blocks;
    const u32 lane = lane_id<target>(), thread = thread_id<target>();
    const u32 used = ceil_div(routes, F::chunk_columns);
    items y[chunks][F::tiles];
    float scale = 0.0f;
    NETRA_NO_UNROLL
    for (u32 f = 0; f < total; ++f) {
      moe_grouped::weight_pieces<target> cur[1];
      moe_grouped::ring_block<target, stages, workgroup_size, 1>(
          ring, f, total, thread, [&](u32 n) { issue_block(expert, first_row, part, n, lane, thread, ring); }, cur);
      const u32 b = f % part_blocks, row0 = first_row + (f / part_blocks) * pass_rows;
      if (b == 0) scale = pass_scale(p, key, row0, part, lane);
      const float sw = bit_cast<float>(wave_broadcast<target>(bit_cast<u32>(scale), b));
      NETRA_UNROLL
      for (u32 c = 0; c < chunks; ++c) {
        if (c >= used) break;  // uniform
        NETRA_UNROLL
        for (u32 n = 0; n < F::tiles; ++n) {
          if (!moe_grouped::tile_runs<target, trim>(c, n, routes)) break;  // uniform
          add_block(y[c][n], sh, cur[0], c, n, b, sw, lane);
        }
      }
      if (b + 1 < part_blocks) continue;
      NETRA_UNROLL
      for (u32 c = 0; c < chunks; ++c) {
        if (c >= used) break;  // uniform
        NETRA_UNROLL
        for (u32 n = 0; n < F::tiles; ++n) {
          if (!moe_grouped::tile_runs<target, trim>(c, n, routes)) break;  // uniform
          store_items(p, sh, y[c][n], c, n, row0, part, routes, lane);
        }
      }
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED shared_state sh;
    NETRA_DYNAMIC_SHARED_BYTES(ring);
    launch_dependents<target>();
    wait_for_prerequisites<target>();  // gate_up's activations (and before them the plan) exist
    const u32 x = workgroup_id<target, 0>(), j = workgroup_id<target, 1>();
    if (j >= moe_grouped::plan_tile_count<layout>(p.plan)) return;  // uniform
    const moe_grouped::plan_tile t = moe_grouped::load_plan_tile<target, layout>(p.plan, j);
    if (t.key == layout::invalid_key) return;  // the reducer gives these routes y = +0
    const u32 thread = thread_id<target>(), lane = lane_id<target>(), w = wave_id<target>();
    const u32 part = x % k_parts, first_row = workgroup_rows * (x / k_parts) + F::rows * w;
    const u8* expert = p.w2 + static_cast<u64>(t.key) * weights::w2_expert_bytes;
    pass_weights cur, next;  // registers: the first pass's weights in flight while the activations are staged
    if constexpr (stages == 0) {
      load_pass(expert, first_row, part, lane, next);
    } else {
      NETRA_UNROLL
      for (u32 f = 0; f + 1 < stages; ++f) issue_block(expert, first_row, part, f, lane, thread, ring);
    }
    if (thread < t.routes) sh.route[thread] = moe_grouped::plan_routes<layout>(p.plan)[t.first + thread];
    workgroup_barrier<target>();
    moe_grouped::stage_columns<target, part_k, stride, workgroup_size>(
        sh.staged, t.routes, thread, [&](u32 c) { return p.act + static_cast<u64>(sh.route[c]) * weights::intermediate + part * part_k; });
    for (u32 s = thread; s < t.routes * part_blocks; s += workgroup_size)
      sh.sa[s / part_blocks][s % part_blocks] = p.act_scales[static_cast<u64>(sh.route[s / part_blocks]) * weights::w2_scale_cols + part * part_blocks + s % part_blocks];
    workgroup_barrier<target>();

    if constexpr (stages > 0) {
      ring_passes(p, sh, ring, expert, t.key, first_row, part, t.routes);
    } else {
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
  }
};

template <class Target, u32 MinTokens, u32 MaxTokens, u32 Tile, u32 KParts, u32 RowTiles, u32 WeightStages, u32 Trim, u32 WaveSize>
struct kernels_of<contracts::moe_grouped_down<Target, MinTokens, MaxTokens, Tile, KParts, RowTiles, WeightStages, Trim, WaveSize>> {
  using type = type_list<moe_grouped_down_kernel<contracts::moe_grouped_down<Target, MinTokens, MaxTokens, Tile, KParts, RowTiles, WeightStages, Trim, WaveSize>>>;
};

}  // namespace netra::kernels
