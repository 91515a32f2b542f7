// netra/kernels/moe/grouped_gate_up.hpp — the one kernel of contracts::moe_grouped_gate_up.
//
// Contract: gate_up of every route of the plan's tiles, then act_quant fused (SiLU(gate) * up,
// BF16, E4M3 per 128 values); semantics and policy in contracts/moe/grouped_gate_up.hpp.
// Mapping: grid (4, max_tiles(9M)); workgroup (g, j) = intermediate group g of plan tile j (key e,
// up to Tile routes); workgroups with j >= the call's tile count exit. 8 waves.
//   1. Thread c < routes reads the tile's c-th route; then the columns' qx rows (2048 E4M3 bytes
//      each) land in LDS (dynamic, Tile x 2112 B) with their 16 scales, every thread in turn.
//   2. Wave w: gate rows 128 g + 16 w .. + 15 and up rows 512 + that, whole K. Per scale block b
//      (ascending): the block's weight pieces (2 x 16 rows, the fragment layer's maps): in
//      registers, block 0's issued before step 1 and the next block's before this block's
//      products; or (WeightStages S) through a per-thread LDS ring of S blocks filled by
//      asynchronous copies, blocks 0 .. S - 2 issued before step 1, block b + S - 1 before block
//      b. Per used 16-column chunk (Trim: per instruction tile holding a route) the block products
//      of both row tiles (grouped_tile.hpp), acc = fma(P_b, sw_b * sx_b, acc) from +0.
//      gate and up of intermediate index i sit in the same lane's same D item.
//   3. Each item: gate, up -> BF16 (optionally stored to gate_up), y = bf16(silu(gate) * up) into
//      the workgroup's group image (LDS, [Tile][128]); barrier.
//   4. act_quant of the group image: 16 threads per column, 8 values each (one 16-byte LDS read),
//      the group's amax over the 16 (xor 1, 2, 4, 8), dsl/block_quant.hpp's scale and division,
//      8 E4M3 bytes stored per thread, the first of the 16 stores the scale.
// A tile of the invalid key writes act_quant's zero row (0x00, scale +0.0) and gate_up's +0.0.
// On sm90a: programmatic dependent launch (released at once, waits before reading the plan).
#pragma once
#include "netra/contracts/moe/grouped_gate_up.hpp"
#include "netra/dsl/block_quant.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/moe/grouped_tile.hpp"

namespace netra::kernels {

template <class Contract> struct moe_grouped_gate_up_kernel {
  using target = typename Contract::target;
  using layout = typename Contract::layout;
  using weights = moe::expert_weights;
  using F = moe_grouped::fragment<target>;
  using S = typename F::shape;
  static constexpr const char* symbol = "netra_moe_grouped_gate_up";
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 waves = Contract::waves;
  static constexpr u32 workgroup_size = waves * wave;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 tile = Contract::tile;
  static constexpr u32 chunks = tile / F::chunk_columns;
  static constexpr u32 blocks = weights::hidden / weights::block;  // 16
  static constexpr u32 group = weights::block;                     // 128 intermediate values
  static constexpr u32 stride = Contract::column_stride;
  static constexpr u32 stages = Contract::weight_stages;
  static constexpr bool trim = Contract::trim;
  static constexpr u32 dynamic_lds_bytes = Contract::staged_bytes + Contract::ring_bytes;
  static constexpr bool prefers_max_lds = true;
  static constexpr u32 y_stride = group + 8;  // BF16 values per column of the group image
  static_assert(waves * F::rows == group, "grouped gate_up: the waves' rows make one 128-row group");
  static_assert(tile % F::chunk_columns == 0, "grouped gate_up: whole 16-column chunks");
  static_assert((tile * 16) % workgroup_size == 0 || workgroup_size % (tile * 16) == 0, "grouped gate_up: whole waves in the quantization");

  struct params {
    const u8* plan;
    const u8* w13;      // E4M3 [257, 1024, 2048]
    const float* s13;   // FP32 [257, 8, 16]
    u8* act;            // E4M3 [9M, 512]
    float* act_scales;  // FP32 [9M, 4]
    u16* gate_up;       // BF16 [9M, 1024] or null
    u32 tokens;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{weights::intermediate / group, layout::max_tiles(tokens * moe::route_layout::slots), 1}, workgroup_size, dynamic_lds_bytes};
  }

  struct shared_state {
    float sx[tile][blocks];
    u32 route[tile];
    alignas(16) u16 y[tile][y_stride];
  };

  /// A ring whose LDS fits twice in a processor (workgroups_by_lds) asks for two workgroups per
  /// processor (at most 128 registers a thread); the others take one.
  static constexpr u32 min_workgroups_per_processor =
      stages > 0 && workgroups_by_lds<target>(dynamic_lds_bytes + static_cast<u32>(sizeof(shared_state))) >= 2 ? 2 : 1;

  using accumulators = float[2][chunks][F::tiles][S::d_items];

  using row_pieces = moe_grouped::weight_pieces<target>[2];  // the gate and the up row tile's pieces of one block

  /// The wave's gate (t = 0) and up (t = 1) rows: the first row of each, and its W13 row pointer.
  static NETRA_DEVICE u32 first_row(u32 g, u32 t) { return t * weights::intermediate + group * g + F::rows * wave_id<target>(); }
  static NETRA_DEVICE const u8* rows_of(const params& p, u32 key, u32 g, u32 t) {
    return p.w13 + static_cast<u64>(key) * weights::w13_expert_bytes + static_cast<u64>(first_row(g, t)) * weights::hidden;
  }
  /// Block b's weight pieces of both row tiles.
  static NETRA_DEVICE void load_block(const params& p, u32 key, u32 g, u32 b, u32 lane, row_pieces& out) {
    NETRA_UNROLL
    for (u32 t = 0; t < 2; ++t) moe_grouped::load_weight_pieces<target, weights::hidden>(rows_of(p, key, g, t), b * weights::block, lane, out[t]);
  }
  /// Block b's pieces of both row tiles into ring slot b % stages (grouped_tile.hpp), one commit group.
  static NETRA_DEVICE void issue_block(const params& p, u32 key, u32 g, u32 b, u32 lane, u32 thread, u8* ring) {
    NETRA_UNROLL
    for (u32 t = 0; t < 2; ++t)
      moe_grouped::copy_weight_pieces<target, weights::hidden, workgroup_size, 2>(ring, b % max_of(stages, 1u), t, rows_of(p, key, g, t), b * weights::block, lane, thread);
    commit_lds_copies<target>();
  }

  /// Step 2 for wave w: the gate (t = 0) and up (t = 1) accumulators of the tile's used chunks;
  /// registers (stages 0): `next` holds block 0's pieces; ring: blocks 0 .. stages - 2 are in
  /// flight (both issued before the activations were staged).
  static NETRA_DEVICE void project(const params& p, const shared_state& sh, const u8* staged, u8* ring, u32 key, u32 g, u32 routes,
                                   row_pieces& next, accumulators& acc) {
    const u32 lane = lane_id<target>(), used = ceil_div(routes, F::chunk_columns);
    const u32 row[2] = {first_row(g, 0), first_row(g, 1)};
    // lane l < 16: the gate rows' scale of block l; 16 <= l < 32: the up rows' of block l - 16
    const float* srow = p.s13 + static_cast<u64>(key) * (weights::w13_scale_rows * weights::w13_scale_cols);
    const float scale = lane < 32 ? srow[((lane < 16 ? row[0] : row[1]) / weights::block) * weights::w13_scale_cols + lane % 16] : 0.0f;
    NETRA_UNROLL
    for (u32 t = 0; t < 2; ++t)
      NETRA_UNROLL
      for (u32 c = 0; c < chunks; ++c)
        NETRA_UNROLL
        for (u32 n = 0; n < F::tiles; ++n)
          NETRA_UNROLL
          for (u32 i = 0; i < S::d_items; ++i) acc[t][c][n][i] = 0.0f;
    row_pieces cur;
    NETRA_NO_UNROLL
    for (u32 b = 0; b < blocks; ++b) {
      if constexpr (stages == 0) {
        NETRA_UNROLL
        for (u32 t = 0; t < 2; ++t)
          NETRA_UNROLL
          for (u32 v = 0; v < F::weight_pieces; ++v) cur[t][v] = next[t][v];
        if (b + 1 < blocks) load_block(p, key, g, b + 1, lane, next);
      } else {
        // block b + stages - 1 into the slot block b - 1 left (read into registers last iteration)
        const u32 thread = thread_id<target>();
        moe_grouped::ring_block<target, stages, workgroup_size, 2>(
            ring, b, blocks, thread, [&](u32 f) { issue_block(p, key, g, f, lane, thread, ring); }, cur);
      }
      const float sw[2] = {bit_cast<float>(wave_broadcast<target>(bit_cast<u32>(scale), b)),
                           bit_cast<float>(wave_broadcast<target>(bit_cast<u32>(scale), 16 + b))};
      NETRA_UNROLL
      for (u32 c = 0; c < chunks; ++c) {
        if (c >= used) break;  // uniform
        NETRA_UNROLL
        for (u32 n = 0; n < F::tiles; ++n) {
          if (!moe_grouped::tile_runs<target, trim>(c, n, routes)) break;  // uniform; a skipped tile's accumulators stay +0
          NETRA_UNROLL
          for (u32 t = 0; t < 2; ++t) {
            float d[S::d_items];
            moe_grouped::chunk_product<target, stride>(d, cur[t], staged, c, n, b * weights::block, lane);
            NETRA_UNROLL
            for (u32 i = 0; i < S::d_items; ++i) {
              const float sx = sh.sx[moe_grouped::item_column<target>(lane, c, n, i)][b];
              acc[t][c][n][i] = fma_rn(d[i], mul_rn(sw[t], sx), acc[t][c][n][i]);
            }
          }
        }
      }
    }
  }

  /// Step 4: act_quant of the group image, columns < routes.
  static NETRA_DEVICE void quantize_group(const params& p, const shared_state& sh, u32 g, u32 routes, u32 thread) {
    for (u32 s0 = 0; s0 < tile * 16; s0 += workgroup_size) {
      const u32 s = s0 + thread;
      if (s >= tile * 16) break;  // whole waves (static_assert above)
      const u32 col = s / 16, part = s % 16;
      const bool live = col < routes;
      const u32x4 v = *reinterpret_cast<const u32x4*>(&sh.y[live ? col : 0][8 * part]);
      u32 m = max_of(max_of(bf16x2_magnitude_max(v.x), bf16x2_magnitude_max(v.y)), max_of(bf16x2_magnitude_max(v.z), bf16x2_magnitude_max(v.w)));
      NETRA_UNROLL
      for (u32 mask = 1; mask < 16; mask <<= 1) m = max_of(m, xor_shuffle_u32<target>(m, mask));
      const float scale = act_quant_scale_fast(m);
      const act_quant_divider divider = act_quant_divider::make(m, act_quant_divisor(m, scale));
      u32 q[4];
      const u32 words[4] = {v.x, v.y, v.z, v.w};
      NETRA_UNROLL
      for (u32 k = 0; k < 4; ++k)
        q[k] = pack_e4m3x2<target>(divider.quotient(bit_cast<float>(words[k] << 16)), divider.quotient(bit_cast<float>(words[k] & 0xFFFF0000u)));
      if (!live) continue;
      const u64 route = sh.route[col];
      store_8B<target>(p.act + route * weights::intermediate + group * g + 8 * part, q[0] | (q[1] << 16), q[2] | (q[3] << 16));
      if (part == 0) store_4B<target>(p.act_scales + route * 4 + g, bit_cast<u32>(scale));
    }
  }

  /// A tile of the invalid key: act_quant's zero row for group g, gate_up's +0.0.
  static NETRA_DEVICE void zero_rows(const params& p, const shared_state& sh, u32 g, u32 routes, u32 thread) {
    constexpr u32 act_pieces = group / 16, bf16_pieces = group / 8;  // 16-byte pieces of the group: E4M3, BF16
    const u32x4 zero{0u, 0u, 0u, 0u};
    for (u32 s = thread; s < routes * act_pieces; s += workgroup_size) {
      const u64 route = sh.route[s / act_pieces];
      store_16B<target>(p.act + route * weights::intermediate + group * g + 16 * (s % act_pieces), zero);
      if (s % act_pieces == 0) store_4B<target>(p.act_scales + route * 4 + g, 0u);
    }
    if (p.gate_up == nullptr) return;
    for (u32 s = thread; s < routes * bf16_pieces * 2; s += workgroup_size) {  // the gate half, then the up half of each route
      const u32 c = s / (2 * bf16_pieces), half = (s / bf16_pieces) % 2, piece = s % bf16_pieces;
      store_16B<target>(p.gate_up + static_cast<u64>(sh.route[c]) * weights::gate_up_rows + half * weights::intermediate + group * g + 8 * piece, zero);
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED shared_state sh;
    NETRA_DYNAMIC_SHARED_BYTES(staged);
    launch_dependents<target>();
    wait_for_prerequisites<target>();  // the plan (and before it the routes) exist
    const u32 g = workgroup_id<target, 0>(), j = workgroup_id<target, 1>();
    if (j >= moe_grouped::plan_tile_count<layout>(p.plan)) return;  // uniform
    const moe_grouped::plan_tile t = moe_grouped::load_plan_tile<target, layout>(p.plan, j);
    const u32 thread = thread_id<target>(), lane = lane_id<target>(), w = wave_id<target>();
    row_pieces first;  // block 0's weights (registers) or blocks 0 .. stages - 2 (ring) in flight while the activations are staged
    u8* ring = staged + Contract::staged_bytes;
    if (t.key != layout::invalid_key) {
      if constexpr (stages == 0) {
        load_block(p, t.key, g, 0, lane, first);
      } else {
        NETRA_UNROLL
        for (u32 b = 0; b + 1 < stages; ++b) issue_block(p, t.key, g, b, lane, thread, ring);
      }
    }
    const u32* routes = moe_grouped::plan_routes<layout>(p.plan);
    if (thread < t.routes) sh.route[thread] = routes[t.first + thread];
    workgroup_barrier<target>();
    if (t.key == layout::invalid_key) {
      zero_rows(p, sh, g, t.routes, thread);
      return;
    }
    const u8* qx = p.plan + layout::qx_offset;
    const float* sx = reinterpret_cast<const float*>(p.plan + layout::sx_offset);
    moe_grouped::stage_columns<target, weights::hidden, stride, workgroup_size>(
        staged, t.routes, thread, [&](u32 c) { return qx + moe::route_layout::token_of(sh.route[c]) * weights::hidden; });
    for (u32 s = thread; s < t.routes * blocks; s += workgroup_size)
      sh.sx[s / blocks][s % blocks] = sx[moe::route_layout::token_of(sh.route[s / blocks]) * blocks + s % blocks];
    workgroup_barrier<target>();

    const u32 used = ceil_div(t.routes, F::chunk_columns);
    accumulators acc;
    project(p, sh, staged, ring, t.key, g, t.routes, first, acc);
    NETRA_UNROLL
    for (u32 c = 0; c < chunks; ++c) {
      if (c >= used) break;  // uniform
      NETRA_UNROLL
      for (u32 n = 0; n < F::tiles; ++n)
        NETRA_UNROLL
        for (u32 i = 0; i < S::d_items; ++i) {
          const u32 col = moe_grouped::item_column<target>(lane, c, n, i), row = F::rows * w + moe_grouped::item_row<target>(lane, n, i);
          const u32 gu = pack_bf16x2<target>(acc[0][c][n][i], acc[1][c][n][i]);  // gate | up << 16
          const float y = mul_rn(silu_f32(bit_cast<float>(gu << 16)), bit_cast<float>(gu & 0xFFFF0000u));
          sh.y[col][row] = static_cast<u16>(pack_bf16x2<target>(y, 0.0f));
          if (p.gate_up != nullptr && col < t.routes) {
            u16* out = p.gate_up + static_cast<u64>(sh.route[col]) * weights::gate_up_rows + group * g + row;
            out[0] = static_cast<u16>(gu);
            out[weights::intermediate] = static_cast<u16>(gu >> 16);
          }
        }
    }
    workgroup_barrier<target>();
    quantize_group(p, sh, g, t.routes, thread);
  }
};

template <class Target, u32 MinTokens, u32 MaxTokens, u32 Tile, u32 WeightStages, u32 Trim, u32 WaveSize>
struct kernels_of<contracts::moe_grouped_gate_up<Target, MinTokens, MaxTokens, Tile, WeightStages, Trim, WaveSize>> {
  using type = type_list<moe_grouped_gate_up_kernel<contracts::moe_grouped_gate_up<Target, MinTokens, MaxTokens, Tile, WeightStages, Trim, WaveSize>>>;
};

}  // namespace netra::kernels
