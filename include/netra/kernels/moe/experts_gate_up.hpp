// netra/kernels/moe/experts_gate_up.hpp — the kernel of contracts::moe_expert_gate_up.
//
// Contract: out[r] = bf16( W13[ids[r]] * dequant(quant(hidden[r / 9])) ) for every route r of
// M <= 16 tokens, block FP8 (per-128 hidden quantization fused, moe::hidden_block_quant).
// Mapping: grid (64, 9M), KSplit = 4 waves per workgroup (gfx950: 4 x wave64 = 256 lanes;
// sm90a: 4 warps = 128 threads).
//   Workgroup (x, r) owns W13 rows [16x, 16x + 16) of e = ids[r]. It exits at once unless r is
//   the route at occurrence 0, 16, 32, .. of expert e (route order); then it serves that route
//   and the next 15 routes of e (its "chunk": 16 columns). So each distinct expert's 2 MiB
//   stream once per call (more than 16 routes per expert only with duplicate ids inside a token:
//   then once per 16 routes, concurrently). Routes with an invalid id write +0.0 to their 16 rows
//   of the tile and exit.
//   Wave w owns K [512w, 512w + 512) = scale blocks 4w .. 4w + 3. Order of work, so that one
//   dependent round trip follows the route scan: every lane first issues all its weight loads
//   (4 blocks x 2 pieces on gfx950, 4 x 4 on sm90a; 16 B each, streaming_early: ptxas keeps them
//   there), then, while they are in flight, the wave quantizes its K range of the chunk's columns
//   (hidden rows, L2-resident) into LDS: lane l takes values [V l, V l + V) of a column (V =
//   512 / wave: 8 on gfx950, 16 on sm90a), the 128 / V lanes of a scale block join their
//   magnitudes (xor butterfly 1, 2, ..) and apply moe::hidden_block_quant (experts_device.hpp),
//   P columns per pass (4 / 2: four 16-byte loads in flight per lane). After a barrier, per
//   instruction tile and block, each lane reads its B words from LDS (the act pieces of
//   experts_fragment.hpp: 16 contiguous K of its column), runs the block's matrix instructions
//   (1 MFMA 16x16x128 / 4 mma.m16n8k32 per n8 tile) and accumulates acc = fma(P_b, sw_b * sx_b,
//   acc) in block order (sx_b of the D item's column, sw_b of the wave, both from LDS). The
//   quantized values and scales are those of a lane-local quantization: the same bits.
//   The 4 wave partials go through LDS [4][16 columns][16 rows]; thread j < 32 takes column
//   j / 2, rows 8 (j % 2) .. + 8, adds the partials in wave order, rounds to BF16 and stores 16
//   bytes of out.
// Occupancy (sm90a): 41 KiB of LDS and 128 registers per thread (launch bounds: 4 workgroups per
// SM, no spills): 528 of M = 1's 576 workgroups resident at once, each lane's 256 weight bytes
// in flight together. (5 per SM would need 96 registers: the mma.m16n8k32 emulation through FP16
// then spills.) M = 16: 9216 workgroups of which about 6,600 (one per distinct expert and tile)
// do work; the others exit after the scan.
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
  /// Workgroups that must fit on one SM / CU at once (entry point's launch bounds): 4 on sm90a
  /// (128 registers); gfx950 is LDS-bound at 4 per CU (160 KiB), no hint.
  static constexpr u32 min_workgroups_per_processor = same_v<target, sm90a> ? 4 : 1;
  static constexpr u32 tile_rows = F::rows;
  static constexpr u32 tiles = weights::gate_up_rows / tile_rows;    // 64
  static constexpr u32 blocks = weights::hidden / weights::block;    // 16
  static constexpr u32 blocks_per_wave = blocks / k_split;           // 4
  static constexpr u32 k_per_wave = blocks_per_wave * weights::block;
  static constexpr u32 chunk_columns = F::chunk_columns;             // 16
  // The wave's quantization of its K range of a column: V values per lane, 128 / V lanes per
  // scale block, P columns per pass.
  static constexpr u32 quant_values = k_per_wave / wave;              // 8 (gfx950) / 16 (sm90a)
  static constexpr u32 quant_lanes = weights::block / quant_values;   // 16 / 8
  static constexpr u32 quant_loads = quant_values / 8;                // 16-byte loads per lane and column
  static constexpr u32 quant_words = quant_values / 4;                // E4M3 words per lane and column
  static constexpr u32 quant_columns = 4 / quant_loads;               // 4 / 2
  /// LDS bytes per column. sm90a: + 64, so that the 8 lanes of a quarter-warp's 16-byte B reads
  /// (columns g, g + 1; K 16t) fall on 8 distinct 16-byte bank groups. gfx950: + 16 (4 workgroups
  /// per CU in its 160 KiB).
  static constexpr u32 act_stride = k_per_wave + (same_v<target, sm90a> ? 64 : 16);
  static_assert(blocks % k_split == 0, "gate_up: K splits into whole scale blocks per wave");
  static_assert(chunk_columns * (tile_rows / 8) <= workgroup_size, "gate_up: one storing thread per 8 output rows of a chunk");
  static_assert(tile_rows * 8 <= weights::block && weights::block % tile_rows == 0, "gate_up: a tile lies in one scale row block");
  static_assert(quant_values % 8 == 0 && quant_lanes <= wave && quant_loads <= 4, "gate_up: quantization pieces are whole 16-byte loads");
  static_assert(chunk_columns % quant_columns == 0, "gate_up: quantization passes tile the chunk");

  struct params {
    const u16* hidden;  // BF16 [M, 2048]
    const i32* ids;     // [M, 9]
    const u8* w13;      // E4M3 [257, 1024, 2048]
    const float* s13;   // FP32 [257, 8, 16]
    u16* out;           // BF16 [9M, 1024]
    u32 tokens;
  };

  /// The workgroup's LDS (about 41 KiB).
  struct shared_state {
    alignas(16) u8 act[k_split][chunk_columns][act_stride];    // E4M3 of the chunk's columns, wave w's K range
    float act_scale[k_split][chunk_columns][blocks_per_wave];  // their block scales sx
    float partial[k_split][chunk_columns][tile_rows];          // wave partials
    float weight_scale[k_split][blocks_per_wave];              // S13 of the tile's rows, wave w's blocks
    u32 column_route[chunk_columns];
  };
  static constexpr u32 lds_bytes = sizeof(shared_state);

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{tiles, tokens * moe::route_layout::slots, 1}, workgroup_size, 0};
  }

  /// Column (in the chunk) of the lane's act pieces in instruction tile `tile`.
  NETRA_HOST_DEVICE static constexpr u32 lane_column(u32 lane, u32 tile) { return F::act_piece(lane, tile, 0).index; }
  /// First K (inside the wave's range) of the lane's V values in the quantization pass.
  NETRA_HOST_DEVICE static constexpr u32 quant_k(u32 lane) { return lane * quant_values; }
  /// xor masks of the quantization pass's amax butterfly: 1, 2, .., quant_lanes / 2.
  NETRA_HOST_DEVICE static constexpr u32 quant_mask(u32 i) { return 1u << i; }
  static constexpr u32 quant_masks = quant_lanes == 8 ? 3 : quant_lanes == 16 ? 4 : 0;
  static_assert(quant_masks > 0, "gate_up: 8 or 16 lanes per scale block");

  /// The route of chunk column `c` (every lane gets it): scan.route[c / tile_columns] of the lane
  /// whose B column it is.
  template <u32 Wants> static NETRA_DEVICE u32 column_route_of(const moe_experts::route_scan<Wants>& scan, u32 c) {
    return target_ops<target>::broadcast(moe_experts::select(scan.route, c / F::tile_columns), F::b_lane_of(c % F::tile_columns));
  }

  /// Wave w quantizes K [512w, 512w + 512) of the chunk's `columns` columns into LDS.
  template <u32 Wants>
  static NETRA_DEVICE void quantize_columns(const params& p, shared_state& sh, const moe_experts::route_scan<Wants>& scan, u32 columns,
                                            u32 w, u32 lane) {
    const u32 k0 = w * k_per_wave + quant_k(lane);
    NETRA_NO_UNROLL
    for (u32 c0 = 0; c0 < columns; c0 += quant_columns) {
      u32x4 raw[quant_columns][quant_loads];
      NETRA_UNROLL
      for (u32 j = 0; j < quant_columns; ++j) {
        const u32 r = column_route_of(scan, c0 + j);
        const bool live = c0 + j < columns;  // uniform
        const u16* x = p.hidden + static_cast<u64>(live ? moe::route_layout::token_of(r) : 0) * weights::hidden + k0;
        NETRA_UNROLL
        for (u32 h = 0; h < quant_loads; ++h) raw[j][h] = live ? load_16B<target, cache_policy::streaming_early>(x + 8 * h) : u32x4{0, 0, 0, 0};
      }
      NETRA_UNROLL
      for (u32 j = 0; j < quant_columns; ++j) {
        const u32 c = c0 + j;
        u32 magnitude = 0;
        NETRA_UNROLL
        for (u32 h = 0; h < quant_loads; ++h) magnitude = max_of(magnitude, moe_experts::bf16x8_magnitude(raw[j][h]));
        NETRA_UNROLL
        for (u32 i = 0; i < quant_masks; ++i) magnitude = max_of(magnitude, xor_shuffle_u32<target>(magnitude, quant_mask(i)));
        if (c >= columns) continue;  // uniform
        const moe::hidden_block_quant::block hb = moe::hidden_block_quant::of(magnitude);
        u32 q[quant_words];
        NETRA_UNROLL
        for (u32 i = 0; i < quant_words; ++i) {
          const u32x4& half = raw[j][i >> 1];
          const u32 w0 = half[static_cast<int>(2 * (i & 1))], w1 = half[static_cast<int>(2 * (i & 1) + 1)];
          q[i] = hb.poison ? 0x7F7F7F7Fu : (hb.zero ? 0u : moe_experts::e4m3x4_of_bf16_scaled<target>(w0, w1, hb.reciprocal));
        }
        u8* dst = &sh.act[w][c][quant_k(lane)];
        if constexpr (quant_words == 4) {
          *reinterpret_cast<u32x4*>(dst) = u32x4{q[0], q[1], q[2], q[3]};
        } else {
          NETRA_UNROLL
          for (u32 i = 0; i < quant_words; ++i) reinterpret_cast<u32*>(dst)[i] = q[i];
        }
        if (lane % quant_lanes == 0) sh.act_scale[w][c][lane / quant_lanes] = hb.scale;
      }
    }
  }

  /// Issues the wave's 16 (sm90a) / 8 (gfx950) weight loads: rows [row0, row0 + 16) of
  /// `expert`, K [512w, 512w + 512).
  static NETRA_DEVICE void load_weights(const params& p, i32 expert, u32 row0, u32 w, u32 lane,
                                        u32x4 (&wt)[blocks_per_wave][F::weight_pieces]) {
    const u8* wrow = p.w13 + static_cast<u64>(expert) * weights::w13_expert_bytes + static_cast<u64>(row0) * weights::hidden + w * k_per_wave;
    NETRA_UNROLL
    for (u32 b = 0; b < blocks_per_wave; ++b) {
      NETRA_UNROLL
      for (u32 v = 0; v < F::weight_pieces; ++v) {
        const moe_experts::piece pc = F::weight_piece(lane, v);
        wt[b][v] = load_16B<target, cache_policy::streaming_early>(wrow + pc.index * weights::hidden + b * weights::block + pc.k);
      }
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED shared_state sh;

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
    const moe_experts::route_scan<F::tiles> scan = moe_experts::scan_routes<target, Contract::max_routes>(p.ids, routes, route, want);
    const i32 expert = scan.expert;
    if (!weights::valid_expert(expert)) {
      if (thread < tile_rows / 8) store_16B<target>(p.out + static_cast<u64>(route) * weights::gate_up_rows + row0 + 8 * thread, u32x4{0, 0, 0, 0});
      return;
    }
    // The route at occurrence 0, 16, 32, .. of its expert serves that occurrence and the next 15
    // (more than 16 routes per expert only with duplicate ids inside a token).
    if (scan.earlier_count % chunk_columns != 0) return;
    launch_dependents<target>();

    // All weight loads of this wave's K range, before anything else.
    u32x4 wt[blocks_per_wave][F::weight_pieces];
    load_weights(p, expert, row0, w, lane, wt);
    // The wave's 4 block scales (16 bytes, they arrive with the weights): every lane loads block
    // lane % 4 now, lanes 0..3 store it to LDS after the quantization. (A store under the lane
    // test right after the load made the wave wait for the scale's DRAM round trip before it
    // started quantizing: the H200 profile showed that store as the kernel's top stall.)
    const float* srow = p.s13 + static_cast<u64>(expert) * (weights::w13_scale_rows * weights::w13_scale_cols) +
                        (row0 / weights::block) * weights::w13_scale_cols + w * blocks_per_wave;
    const float weight_scale = srow[lane % blocks_per_wave];

    {
      const u32 columns = min_of(scan.count, chunk_columns);  // uniform
      // The chunk's hidden rows, quantized into LDS while the weights are in flight.
      quantize_columns(p, sh, scan, columns, w, lane);
      if (lane < blocks_per_wave) sh.weight_scale[w][lane] = weight_scale;
      workgroup_barrier<target>();
      NETRA_NO_UNROLL
      for (u32 n = 0; n < F::tiles; ++n) {
        if (n * F::tile_columns >= columns) break;  // uniform: no column of this tile is used
        float acc[S::d_items];
        NETRA_UNROLL
        for (u32 i = 0; i < S::d_items; ++i) acc[i] = 0.0f;
        NETRA_UNROLL
        for (u32 b = 0; b < blocks_per_wave; ++b) {
          u32 q[F::act_pieces][4];
          NETRA_UNROLL
          for (u32 v = 0; v < F::act_pieces; ++v) {
            const moe_experts::piece pc = F::act_piece(lane, n, v);
            const u32x4 a = *reinterpret_cast<const u32x4*>(&sh.act[w][pc.index][b * weights::block + pc.k]);
            q[v][0] = a.x, q[v][1] = a.y, q[v][2] = a.z, q[v][3] = a.w;
          }
          float d[S::d_items];
          NETRA_UNROLL
          for (u32 i = 0; i < S::d_items; ++i) d[i] = 0.0f;
          moe_experts::block_product<target>(d, wt[b], q);
          NETRA_UNROLL
          for (u32 i = 0; i < S::d_items; ++i) {
            const float s = mul_rn(sh.weight_scale[w][b], sh.act_scale[w][F::d_element(lane, n, i).col][b]);
            acc[i] = fma_rn(d[i], s, acc[i]);
          }
        }
        NETRA_UNROLL
        for (u32 i = 0; i < S::d_items; ++i) {
          const fragment_element e = F::d_element(lane, n, i);
          sh.partial[w][e.col][e.row] = acc[i];
        }
        const u32 my_route = moe_experts::select(scan.route, n);
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
  }
};

template <class Target, u32 MaxTokens, u32 WaveSize> struct kernels_of<contracts::moe_expert_gate_up<Target, MaxTokens, WaveSize>> {
  using contract = contracts::moe_expert_gate_up<Target, MaxTokens, WaveSize>;
  using type = type_list<moe_expert_gate_up_kernel<contract>>;
};

}  // namespace netra::kernels
