// netra/kernels/moe/experts_gate_up.hpp — the kernel of contracts::moe_expert_gate_up.
//
// Contract: out[r] = bf16( W13[ids[r]] * dequant(quant(hidden[r / 9])) ) for every route r of
// M <= 16 tokens, block FP8 (per-128 hidden quantization fused, moe::hidden_block_quant).
// Mapping: grid (64, 9M), KSplit = 4 waves per workgroup (gfx950: 4 x wave64 = 256 lanes;
// sm90a: 4 warps = 128 threads).
//   Workgroup (x, r) owns W13 rows [16x, 16x + 16) of e = ids[r]. It exits at once unless r is
//   the first route with expert e; then it serves every route of e in route order, 16 columns
//   (routes) per chunk. So each distinct expert's 2 MiB stream once per call. Routes with an
//   invalid id write +0.0 to their 16 rows of the tile and exit.
//   Wave w owns K [512w, 512w + 512) = scale blocks 4w .. 4w + 3. Every lane first issues all
//   its weight loads (4 blocks x 2 pieces on gfx950, 4 x 4 on sm90a; 16 B each, streaming),
//   then, per chunk and instruction tile, the hidden pieces of its column (16 BF16 values = two
//   16-byte loads each), quantizes them per block in registers (experts_device.hpp), runs the
//   block's matrix instructions (1 MFMA 16x16x128 / 4 mma.m16n8k32 per n8 tile) and accumulates
//   acc = fma(P_b, sw_b * sx_b, acc) in block order. Lane maps: experts_fragment.hpp.
//   The 4 wave partials go through LDS [4][16 columns][16 rows] (4 KiB); thread j < 32 takes
//   column j / 2, rows 8 (j % 2) .. + 8, adds the partials in wave order, rounds to BF16 and
//   stores 16 bytes of out.
// M = 1: 576 workgroups, 2304 waves (the article's gate/up stage exposes 576 waves); M = 16:
// 9216 workgroups of which about 6,600 (one per distinct expert and tile) do work.
// sm90a programmatic dependent launch: griddepcontrol.wait before the first read;
// launch_dependents once the workgroup knows it will work (the down kernel's prologue then
// overlaps this kernel's tail).
#pragma once
#include "netra/contracts/moe/expert_gate_up.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/moe/experts_device.hpp"

namespace netra::kernels {

template <class Contract> struct moe_expert_gate_up_kernel {
  using target = typename Contract::target;
  using F = moe_experts::block_fragment<target>;
  using S = typename F::shape;
  using weights = moe::expert_weights;
  static constexpr const char* symbol = "netra_moe_expert_gate_up";
  /// sm90a: launched with programmatic stream serialisation (it waits before its first read).
  static constexpr bool programmatic_dependent_launch = same_v<target, sm90a>;
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 k_split = Contract::k_split;
  static constexpr u32 workgroup_size = wave * k_split;
  static constexpr u32 tile_rows = F::rows;
  static constexpr u32 tiles = weights::gate_up_rows / tile_rows;    // 64
  static constexpr u32 blocks = weights::hidden / weights::block;    // 16
  static constexpr u32 blocks_per_wave = blocks / k_split;           // 4
  static constexpr u32 k_per_wave = blocks_per_wave * weights::block;
  static constexpr u32 chunk_columns = F::chunk_columns;             // 16
  static_assert(blocks % k_split == 0, "gate_up: K splits into whole scale blocks per wave");
  static_assert(chunk_columns * (tile_rows / 8) <= workgroup_size, "gate_up: one storing thread per 8 output rows of a chunk");
  static_assert(tile_rows * 8 <= weights::block && weights::block % tile_rows == 0, "gate_up: a tile lies in one scale row block");

  struct params {
    const u16* hidden;  // BF16 [M, 2048]
    const i32* ids;     // [M, 9]
    const u8* w13;      // E4M3 [257, 1024, 2048]
    const float* s13;   // FP32 [257, 8, 16]
    u16* out;           // BF16 [9M, 1024]
    u32 tokens;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{tiles, tokens * moe::route_layout::slots, 1}, workgroup_size, 0};
  }

  /// Column (in the chunk) of the lane's act pieces in instruction tile `tile`.
  NETRA_HOST_DEVICE static constexpr u32 lane_column(u32 lane, u32 tile) { return F::act_piece(lane, tile, 0).index; }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED float partial[k_split][chunk_columns][tile_rows];
    NETRA_SHARED u32 column_route[chunk_columns];

    wait_for_prerequisites<target>();
    const u32 tile = workgroup_id<target, 0>();
    const u32 route = workgroup_id<target, 1>();
    const u32 thread = thread_id<target>();
    const u32 lane = lane_id<target>();
    const u32 w = wave_id<target>();
    const u32 routes = p.tokens * moe::route_layout::slots;
    const u32 row0 = tile * tile_rows;

    u32 want[F::tiles];
    NETRA_UNROLL
    for (u32 n = 0; n < F::tiles; ++n) want[n] = lane_column(lane, n);
    moe_experts::route_scan<F::tiles> scan = moe_experts::scan_routes<target, Contract::max_routes>(p.ids, routes, route, want);
    const i32 expert = scan.expert;
    if (!weights::valid_expert(expert)) {
      if (thread < tile_rows / 8) store_16B<target>(p.out + static_cast<u64>(route) * weights::gate_up_rows + row0 + 8 * thread, u32x4{0, 0, 0, 0});
      return;
    }
    if (scan.earlier) return;  // the first route with this expert does the work
    launch_dependents<target>();

    // All weight loads of this wave's K range, before anything else.
    const u8* wrow = p.w13 + static_cast<u64>(expert) * weights::w13_expert_bytes + static_cast<u64>(row0) * weights::hidden + w * k_per_wave;
    u32x4 wt[blocks_per_wave][F::weight_pieces];
    NETRA_UNROLL
    for (u32 b = 0; b < blocks_per_wave; ++b) {
      NETRA_UNROLL
      for (u32 v = 0; v < F::weight_pieces; ++v) {
        const moe_experts::piece pc = F::weight_piece(lane, v);
        wt[b][v] = load_16B<target, cache_policy::streaming>(wrow + pc.index * weights::hidden + b * weights::block + pc.k);
      }
    }
    const float* srow = p.s13 + static_cast<u64>(expert) * (weights::w13_scale_rows * weights::w13_scale_cols) +
                        (row0 / weights::block) * weights::w13_scale_cols + w * blocks_per_wave;
    float sw[blocks_per_wave];
    NETRA_UNROLL
    for (u32 b = 0; b < blocks_per_wave; ++b) sw[b] = srow[b];

    for (u32 chunk = 0; chunk * chunk_columns < scan.count; ++chunk) {
      if (chunk > 0) {
        NETRA_UNROLL
        for (u32 n = 0; n < F::tiles; ++n) want[n] = chunk * chunk_columns + lane_column(lane, n);
        scan = moe_experts::scan_routes<target, Contract::max_routes>(p.ids, routes, route, want);
      }
      const u32 columns = min_of(scan.count - chunk * chunk_columns, chunk_columns);
      NETRA_NO_UNROLL
      for (u32 n = 0; n < F::tiles; ++n) {
        if (n * F::tile_columns >= columns) break;  // uniform: no column of this tile is used
        const u32 my_route = moe_experts::select(scan.route, n);
        const bool live = my_route != moe_experts::no_route;
        const u16* x = p.hidden + static_cast<u64>(live ? moe::route_layout::token_of(my_route) : 0) * weights::hidden + w * k_per_wave;
        u32x4 raw[blocks_per_wave][F::act_pieces][2];
        NETRA_UNROLL
        for (u32 b = 0; b < blocks_per_wave; ++b) {
          NETRA_UNROLL
          for (u32 v = 0; v < F::act_pieces; ++v) {
            const u32 k = b * weights::block + F::act_piece(lane, n, v).k;
            raw[b][v][0] = live ? load_16B<target>(x + k) : u32x4{0, 0, 0, 0};
            raw[b][v][1] = live ? load_16B<target>(x + k + 8) : u32x4{0, 0, 0, 0};
          }
        }
        float acc[S::d_items];
        NETRA_UNROLL
        for (u32 i = 0; i < S::d_items; ++i) acc[i] = 0.0f;
        NETRA_UNROLL
        for (u32 b = 0; b < blocks_per_wave; ++b) {
          u32 q[F::act_pieces][4];
          const float sx = moe_experts::quantize_hidden_block<target>(raw[b], q);
          float d[S::d_items];
          NETRA_UNROLL
          for (u32 i = 0; i < S::d_items; ++i) d[i] = 0.0f;
          moe_experts::block_product<target>(d, wt[b], q);
          NETRA_UNROLL
          for (u32 i = 0; i < S::d_items; ++i) {
            const float s = mul_rn(sw[b], moe_experts::column_scale<target>(sx, lane, n, i));
            acc[i] = fma_rn(d[i], s, acc[i]);
          }
        }
        NETRA_UNROLL
        for (u32 i = 0; i < S::d_items; ++i) {
          const fragment_element e = F::d_element(lane, n, i);
          partial[w][e.col][e.row] = acc[i];
        }
        if (live) column_route[lane_column(lane, n)] = my_route;  // every lane of a column writes the same value
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
            float s = partial[0][column][r0 + 2 * j + h];
            NETRA_UNROLL
            for (u32 ww = 1; ww < k_split; ++ww) s = add_rn(s, partial[ww][column][r0 + 2 * j + h]);
            v[h] = s;
          }
          packed[j] = pack_bf16x2<target>(v[0], v[1]);
        }
        store_16B<target>(p.out + static_cast<u64>(column_route[column]) * weights::gate_up_rows + row0 + r0,
                          u32x4{packed[0], packed[1], packed[2], packed[3]});
      }
      workgroup_barrier<target>();  // partial[] and column_route[] are reused by the next chunk
    }
  }
};

template <class Target, u32 MaxTokens, u32 WaveSize> struct kernels_of<contracts::moe_expert_gate_up<Target, MaxTokens, WaveSize>> {
  using contract = contracts::moe_expert_gate_up<Target, MaxTokens, WaveSize>;
  using type = type_list<moe_expert_gate_up_kernel<contract>>;
};

}  // namespace netra::kernels
