// netra/kernels/moe/experts_gate_up.hpp — the kernel of contracts::moe_expert_gate_up.
//
// Contract: out[r] = bf16( W13[ids[r]] * dequant(quant(hidden[r / 9])) ) for every route r of
// M <= 16 tokens, block FP8 (per-128 hidden quantization fused, moe::hidden_block_quant).
// Mapping: grid (64, 9M), KSplit = 4 waves per workgroup (gfx950: 4 x wave64 = 256 lanes;
// sm90a: 4 warps = 128 threads). Workgroup (x, y) owns W13 rows [16x, 16x + 16) of the expert
// of one unit (up to 16 routes of an expert, the unit's "columns"), which it finds by Schedule:
//   route_scan: y = route r, e = ids[r]; the workgroup reads every id and exits at once unless r
//     is the route at occurrence 0, 16, 32, .. of expert e (route order); then it serves that
//     route and the next 15 routes of e. A route with an invalid id writes +0.0 to its 16 rows
//     of the tile and exits.
//   unit_list: grid (64, 9M), y = unit j of the list the units kernel wrote (expert_units.hpp);
//     every lane reads word lane % 32 of the unit's line and the unit count at once; workgroups
//     past the count exit (they launch after every working one).
//   resident (sm90a): grid (64, 8), all resident (4 workgroups per SM); wave 0 of every
//     workgroup lists the call's units into LDS with the units kernel's operations
//     (expert_unit_lister; the other waves wait at a barrier; wave 1 meanwhile stages the first
//     item's rows when routes 0 .. y hold distinct valid ids, so that unit y is route y's
//     expert), then the workgroup serves items (unit, tile) until none is left: first its
//     linear id, then each item it claims from the workspace's counter (one atomic per item, in
//     flight while the previous item is served).
//     The last workgroup to finish (a second counter) sets both counters back to zero for the
//     next call. It releases its successor right after its wait, so that act_quant's and down's
//     workgroups launch while it runs and take the SMs its tail frees (H200, M = 16: down starts
//     ~3 us before gate_up ends).
//   An invalid-id unit writes +0.0 to the 16 rows of each of its routes.
//   sm90a, route_scan and resident (not unit_list): the shared expert's rows are known before
//     the routes are, so the workgroups that serve it first stage its tile before the wait
//     (early_shared): route_scan, the workgroups of route 8 (token 0's shared slot, which a
//     router's output always fills with id 256); resident, row y = 0, whose first item becomes
//     (shared unit, tile x) by trading places with unit 0 in the item order (rows 1 .. 7 stage as
//     above). A workgroup whose routes turn out otherwise lets the copy land unused and proceeds
//     as without it. Standalone gate_up (H200, graph-replayed) M = 1 .. 12 gains 0.5 - 0.8 us; in
//     the decode block the early copies meet the router's reads and the block is unchanged
//     (docs/moe-experts.md).
//   So each distinct expert's 2 MiB stream once per call (more than 16 routes per expert only
//   with duplicate ids inside a token: then once per 16 routes, concurrently).
//   Wave w owns K [512w, 512w + 512) = scale blocks 4w .. 4w + 3. Order of work, so that one
//   dependent round trip follows the route scan: first all weight bytes go in flight
//   (Contract::weights_in_lds: sm90a, the copy engine copies the tile's 16 rows x 2048 K into
//   LDS, one 32 KiB bulk copy (the rows are contiguous in W13) issued by one thread, completing
//   on one barrier; gfx950: every lane loads its pieces of its wave's 4 blocks into VGPRs, 2 per
//   block, 16 B each, streaming_early). Then per instruction tile (sm90a: 2 of 8 columns, gfx950: 1 of 16) the
//   wave quantizes the tile's used columns one at a time: lane l loads the column's hidden values
//   [V l, V l + V) of the wave's K range (V = 16 on sm90a, 8 on gfx950; the next column's loads
//   in flight meanwhile), the 128 / V lanes of a scale block join their magnitudes (xor
//   butterfly) and apply moe::hidden_block_quant (experts_device.hpp), and the lanes whose B
//   column it is gather their pieces' words (experts_fragment.hpp: 16 contiguous K each) and the
//   column's block scales by shuffle. (Quantizing in the B layout directly would quantize all 8
//   or 16 columns of a tile however few are used; an LDS image of the chunk does not fit beside
//   the staged weights.) Then per block the block's matrix instructions (1 MFMA 16x16x128 /
//   4 mma.m16n8k32 per n8 tile; sm90a: A pieces read from LDS once the barrier's bytes have
//   landed) and acc = fma(P_b, sw_b * sx_b, acc) in block order (sx_b of the D item's column, from
//   the lane whose B column it is).
//   The 4 wave partials go through LDS [4][16 columns][16 rows]; thread j < 32 takes column
//   j / 2, rows 8 (j % 2) .. + 8, adds the partials in wave order, rounds to BF16 and stores 16
//   bytes of out.
// Occupancy (sm90a): 36 KiB of LDS (32 KiB of it the staged weights) and at most 96 registers
// per thread (launch bounds: 5 workgroups per SM, largest shared-memory carve-out): all 576
// workgroups of M = 1 resident at once with every weight byte in flight. (With the weights in
// registers, 128 per thread, 4 workgroups per SM fitted: 528, and the rest ran as a second
// wave.) route_scan M = 16: 9216 workgroups of which about 6,450 (one per distinct expert and
// tile) do work; the others exit after the scan. resident: 2.7 KiB more LDS (the list; the
// lister's counts use the wave partials' space before the first item), 117 registers.
// sm90a programmatic dependent launch: griddepcontrol.wait before the first read of the ids or
// the hidden rows (the early shared tile reads only W13, which no netra kernel writes);
// launch_dependents once the workgroup knows it will work (the down kernel's prologue then
// overlaps this kernel's tail).
#pragma once
#include "netra/contracts/moe/expert_gate_up.hpp"
#include "netra/dsl/bulk_copy.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/moe/expert_units.hpp"
#include "netra/kernels/moe/experts_device.hpp"

namespace netra::kernels {

template <class Contract> struct moe_expert_gate_up_kernel {
  using target = typename Contract::target;
  using F = moe_experts::block_fragment<target>;
  using S = typename F::shape;
  using weights = moe::expert_weights;
  static constexpr const char* symbol = "netra_moe_expert_gate_up";
  /// sm90a: launched with programmatic stream serialisation (it waits before its first read).
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 k_split = Contract::k_split;
  static constexpr u32 workgroup_size = wave * k_split;
  /// Workgroups that must fit on one processor at once (the entry point's launch bounds).
  static constexpr u32 min_workgroups_per_processor = Contract::min_workgroups_per_processor;
  static constexpr bool weights_in_lds = Contract::weights_in_lds;
  /// sm90a: 5 x 37 KiB per SM needs the largest shared-memory carve-out (runtime/kernel_traits.hpp).
  static constexpr bool prefers_max_lds = weights_in_lds;
  static constexpr u32 tile_rows = F::rows;
  static constexpr u32 tiles = weights::gate_up_rows / tile_rows;    // 64
  static constexpr u32 blocks = weights::hidden / weights::block;    // 16
  static constexpr u32 blocks_per_wave = blocks / k_split;           // 4
  static constexpr u32 k_per_wave = blocks_per_wave * weights::block;
  static constexpr u32 chunk_columns = F::chunk_columns;             // 16
  /// LDS bytes per staged weight row (sm90a; the row's whole K): unpadded, so that the tile's 16
  /// rows, contiguous in W13, land by one 32 KiB bulk copy. The two rows g, g + 1 of a
  /// quarter-warp's 16-byte A reads (4 lanes x 16 contiguous bytes each) then share 16 of the 32
  /// banks (2-way). Rows padded by 64 bytes (conflict-free reads, one 2 KiB copy per row)
  /// measured slower on the H200: 16 copies per tile cost the copy engine more than the
  /// conflicts cost the reads (docs/moe-experts.md).
  static constexpr u32 weight_row_stride = weights::hidden;
  // The quantization pass, one column at a time: lane l takes values [V l, V l + V) of the wave's
  // K range (V = 512 / wave: 16 on sm90a, 8 on gfx950), 128 / V lanes per scale block.
  static constexpr u32 pass_values = k_per_wave / wave;
  static constexpr u32 pass_lanes = weights::block / pass_values;
  static constexpr u32 pass_words = pass_values / 4;
  static constexpr u32 pass_loads = pass_values / 8;
  static constexpr u32 pass_masks = pass_lanes == 8 ? 3 : pass_lanes == 16 ? 4 : 0;
  static_assert(pass_masks > 0 && pass_values % 8 == 0, "gate_up: 8 or 16 lanes per scale block, whole 16-byte loads");
  static constexpr bool pieces_start_on_pass_lanes() {
    for (u32 l = 0; l < wave; ++l)
      for (u32 n = 0; n < F::tiles; ++n)
        for (u32 v = 0; v < F::act_pieces; ++v)
          if (F::act_piece(l, n, v).k % pass_values != 0) return false;
    return true;
  }
  static_assert(pieces_start_on_pass_lanes(), "gate_up: every act piece starts on a quantization lane's first value");
  static_assert(blocks % k_split == 0, "gate_up: K splits into whole scale blocks per wave");
  static_assert(chunk_columns * (tile_rows / 8) <= workgroup_size, "gate_up: one storing thread per 8 output rows of a chunk");
  static_assert(tile_rows * 8 <= weights::block && weights::block % tile_rows == 0, "gate_up: a tile lies in one scale row block");
  static_assert(!weights_in_lds || target::has_bulk_copy, "gate_up: weights_in_lds needs the target's bulk copy (dsl/bulk_copy.hpp)");

  struct params {
    const u16* hidden;  // BF16 [M, 2048]
    const i32* ids;     // [M, 9]
    const u8* w13;      // E4M3 [257, 1024, 2048]
    const float* s13;   // FP32 [257, 8, 16]
    u16* out;           // BF16 [9M, 1024]
    u32 tokens;
    u32* units;         // the workspace: unit_list, the list the units kernel wrote; resident, the counters (expert_unit_list.hpp)
  };

  /// The workgroup's LDS (sm90a about 36 KiB; gfx950, weights in VGPRs, about 4 KiB).
  struct shared_state {
    // the tile's 16 rows x 2048 K (weights_in_lds; a 16-byte stand-in otherwise)
    alignas(16) u8 weight[weights_in_lds ? tile_rows : 1][weights_in_lds ? weight_row_stride : 16];
    float partial[k_split][chunk_columns][tile_rows];  // wave partials
    lds_copy_barrier weight_ready;                     // the tile's copies landed (weights_in_lds)
    u32 column_route[chunk_columns];
  };
  /// resident: the call's unit list in LDS (expert: 0xFFFF for an invalid id; columns; column
  /// routes), its unit count and the next item the workgroup claimed (about 2.7 KiB more).
  struct resident_state {
    u16 expert[Contract::max_routes];
    u8 columns[Contract::max_routes];
    u8 route[Contract::max_routes][chunk_columns];
    u32 units;
    u32 next_item;
    u32 first_staged;  // the first item's rows were staged before the list (stage_first_rows)
    u32 shared_unit;   // early_shared: the unit of the shared expert's first routes, or no_unit
  };
  using lister = expert_unit_lister<target, Contract::max_routes>;
  static_assert(sizeof(typename lister::scratch) <= sizeof(shared_state::partial), "gate_up: the lister's counts fit the wave partials' space");
  static constexpr u32 lds_bytes = sizeof(shared_state);

  /// resident (targets with programmatic dependent launch): a grid resident at once (64 x 8 = 512
  /// workgroups; the H200 holds 132 SMs x 4) whose workgroups loop over items (unit, tile), so
  /// that it can release its successor at its start.
  static constexpr bool resident = Contract::resident;
  static constexpr u32 unit_rows = 8;
  /// sm90a (weights_in_lds): the shared expert's rows are known before the routes are, so the
  /// workgroups that serve it first stage its tile before the wait (route_scan: the workgroups of
  /// route 8, token 0's shared slot; resident: row y = 0, whose first item becomes the shared
  /// unit's, see run). A workgroup whose routes turn out otherwise lets the copy land, unused.
  static constexpr bool early_shared = weights_in_lds;
  static constexpr u32 no_unit = 0xFFFFFFFFu;
  /// resident, early_shared: whether the call's shared unit s (its expert's first unit, no_unit if
  /// none) trades places with unit 0 in the item order, so that row 0's first items are the tiles
  /// it staged: only for s >= unit_rows (a router's output always has s = 8), so that rows 1 .. 7
  /// keep theirs. Every workgroup lists the same units, so all agree.
  NETRA_HOST_DEVICE static constexpr bool shared_first(u32 s) { return s != no_unit && s >= unit_rows; }
  /// The unit of items [j * 64, j * 64 + 64) under that trade.
  NETRA_HOST_DEVICE static constexpr u32 item_unit(u32 j, u32 s) { return !shared_first(s) ? j : j == 0 ? s : j == s ? 0 : j; }
  static_assert(!resident || Contract::max_routes <= 255, "gate_up: the resident schedule keeps routes as bytes");

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{tiles, resident ? unit_rows : tokens * moe::route_layout::slots, 1}, workgroup_size, 0};
  }

  /// Column (in the chunk) of the lane's act pieces in instruction tile `tile`.
  NETRA_HOST_DEVICE static constexpr u32 lane_column(u32 lane, u32 tile) { return F::act_piece(lane, tile, 0).index; }

  /// The wave's weight pieces of its 4 blocks into VGPRs (gfx950): 2 per block, 16 B each.
  /// `rows` points at the tile's row 0, the wave's K 0.
  static NETRA_DEVICE void load_weights(const u8* rows, u32 lane, u32x4 (&wt)[blocks_per_wave][F::weight_pieces]) {
    NETRA_UNROLL
    for (u32 b = 0; b < blocks_per_wave; ++b) {
      NETRA_UNROLL
      for (u32 v = 0; v < F::weight_pieces; ++v) {
        const fragment::piece pc = F::weight_piece(lane, v);
        wt[b][v] = load_16B<target, cache_policy::streaming_early>(rows + pc.index * weights::hidden + b * weights::block + pc.k);
      }
    }
  }

  /// The tile's rows into LDS by the copy engine (sm90a): thread 0 copies all 16 (copy_tile).
  /// `rows` points at the tile's row 0, K 0. `use` counts the workgroup's earlier stagings (the
  /// copy barrier's phase parity is use % 2; a later use follows a barrier after every read of
  /// the previous tile). Every thread calls it.
  static NETRA_DEVICE void stage_weights(shared_state& sh, const u8* rows, u32 thread, u32 use) {
    using copy = bulk_copy_ops<target>;
    if (use == 0) {  // uniform
      if (thread == 0) copy::init(sh.weight_ready);
      workgroup_barrier<target>();
    } else {
      copy::release_for_copy();
    }
    if (thread == 0) copy_tile(sh, rows);
  }

  /// Row 0 of tile `tile` of the shared expert in W13.
  static NETRA_DEVICE const u8* shared_tile_rows(const params& p, u32 tile) {
    return p.w13 + static_cast<u64>(moe::route_layout::shared_expert_id) * weights::w13_expert_bytes + static_cast<u64>(tile * tile_rows) * weights::hidden;
  }

  /// One thread: the tile's 16 rows (32 KiB, contiguous) onto the copy barrier, which expects them.
  static NETRA_DEVICE void copy_tile(shared_state& sh, const u8* rows) {
    bulk_copy_ops<target>::expect_bytes(sh.weight_ready, tile_rows * weights::hidden);
    bulk_copy_ops<target>::copy(&sh.weight[0][0], rows, tile_rows * weights::hidden, sh.weight_ready);
  }

  /// resident (sm90a): one wave stages the tile's 16 rows of `expert` as the barrier's first use
  /// (its lane 0: init, then copy_tile), while the workgroup's other waves do other work.
  static NETRA_DEVICE void stage_first_rows(shared_state& sh, const u8* rows, u32 lane) {
    using copy = bulk_copy_ops<target>;
    if (lane == 0) copy::init(sh.weight_ready);  // with the fence that shows the init to the copy engine
    copy::release_for_copy();
    if (lane == 0) copy_tile(sh, rows);
  }

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
      const moe::hidden_block_quant::block hb = moe::hidden_block_quant::of(magnitude);
      u32 held[pass_words];
      NETRA_UNROLL
      for (u32 i = 0; i < pass_words; ++i) {
        const u32x4& half = raw[i >> 1];
        const u32 w0 = half[static_cast<int>(2 * (i & 1))], w1 = half[static_cast<int>(2 * (i & 1) + 1)];
        held[i] = hb.poison ? 0x7F7F7F7Fu : (hb.zero ? 0u : moe_experts::e4m3x4_of_bf16_scaled<target>(w0, w1, hb.reciprocal));
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

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED shared_state sh;
    const u32 tile = workgroup_id<target, 0>();
    const u32 y = workgroup_id<target, 1>();  // route_scan: the route; unit_list: the unit; resident: with x, the first item
    const u32 thread = thread_id<target>();
    const u32 lane = lane_id<target>();
    const u32 w = wave_id<target>();
    const u32 row0 = tile * tile_rows;
    // the lane's B columns in the chunk, per instruction tile (computed where used: the resident
    // schedule's lister runs before)
    auto lane_columns = [&](u32 (&want)[F::tiles]) {
      NETRA_UNROLL
      for (u32 n = 0; n < F::tiles; ++n) want[n] = lane_column(lane, n);
    };

    if constexpr (resident) {
      using list = moe::expert_unit_list;
      NETRA_SHARED resident_state ul;
      // the lister's counts live in the wave partials' space (generic accesses only, first written
      // by the first item's products, after the barriers below)
      auto& counts = *reinterpret_cast<typename lister::scratch*>(&sh.partial[0][0][0]);
      if (w == 0) lister::clear(counts, lane);
      if constexpr (early_shared) {
        if (y == 0 && w == 1) stage_first_rows(sh, shared_tile_rows(p, tile), lane);
      }
      wait_for_prerequisites<target>();
      // The whole grid is resident: release the successor at once (down reads the router's ids,
      // complete now, before its own wait), so that its workgroups (and theirs) take SMs as this
      // grid's tail frees them.
      launch_dependents<target>();
      // The call's units into LDS (wave 0, the other waves wait at the barrier; one round trip for
      // the ids), then items i = unit * 64 + tile: the first is the workgroup's linear id, each
      // later one 512 + the count it claims from the workspace's claims counter (one atomic per
      // item, issued when the current item starts and read when it ends), so the workgroups that
      // finish first take more.
      // Meanwhile wave 1 stages the first item's rows when its expert is known without the list:
      // the first item is (unit y, tile x), and unit y is route y's expert when routes 0 .. y hold
      // distinct valid ids (always, for a router's top-8 of token 0); otherwise the loop stages it.
      if (weights_in_lds && w == 1 && !(early_shared && y == 0)) {
        const bool mine = lane <= y;
        const i32 id = mine ? static_cast<i32>(load_u32_strong<target>(p.ids + lane)) : -1;
        bool fits = !mine || weights::valid_expert(id);
        NETRA_UNROLL
        for (u32 j = 0; j < unit_rows; ++j) {
          const i32 other = static_cast<i32>(target_ops<target>::broadcast(static_cast<u32>(id), j));
          fits = fits && !(mine && j < lane && other == id);
        }
        const bool staged = wave_ballot<target>(!fits) == 0;
        if (staged) {
          const i32 expert = static_cast<i32>(target_ops<target>::broadcast(static_cast<u32>(id), y));
          stage_first_rows(sh, p.w13 + static_cast<u64>(expert) * weights::w13_expert_bytes + static_cast<u64>(tile * tile_rows) * weights::hidden, lane);
        }
        if (lane == 0) ul.first_staged = staged ? 1u : 0u;
      }
      if (w == 0) {
        const u32 listed = lister::build(p.ids, p.tokens * moe::route_layout::slots, lane, counts,
                                         [&](u32 route, u32 unit, u32 column, i32 id, u32 columns) {
                                           ul.route[unit][column] = static_cast<u8>(route);
                                           if (column == 0) {
                                             ul.expert[unit] = static_cast<u16>(weights::valid_expert(id) ? static_cast<u32>(id) : 0xFFFFu);
                                             ul.columns[unit] = static_cast<u8>(columns);
                                           }
                                         });
        if (lane == 0) ul.units = listed;
        if constexpr (early_shared) {  // the first unit of the shared expert (units are in route order)
          wave_barrier<target>();  // the wave's emitted experts are visible to it
          u32 found = no_unit;
          for (u32 k0 = 0; k0 < listed; k0 += wave) {  // uniform
            const u64 hits = wave_ballot<target>(k0 + lane < listed && ul.expert[k0 + lane] == moe::route_layout::shared_expert_id);
            if (hits != 0) {
              found = k0 + mask_nth_set<target>(hits, 0);  // the lowest hit
              break;
            }
          }
          if (lane == 0) ul.shared_unit = found;
        }
      }
      workgroup_barrier<target>();
      u32 want[F::tiles];
      lane_columns(want);
      const u32 items = ul.units * tiles, grid = tiles * unit_rows;
      const u32 s = early_shared ? ul.shared_unit : no_unit;  // uniform
      u32 use = 0;
      bool staged = weights_in_lds && ul.first_staged != 0;  // uniform
      if constexpr (early_shared) {
        if (y == 0) {
          staged = shared_first(s);
          if (!staged) {  // the staged tile is not this workgroup's item: let its copy land, then restage
            bulk_copy_ops<target>::wait(sh.weight_ready, 0);
            use = 1;
          }
        }
      }
      NETRA_NO_UNROLL
      for (u32 item = tile + tiles * y; item < items;) {  // uniform
        u32 claimed = 0;
        if (thread == 0) claimed = atomic_add_relaxed<target>(p.units + list::claims_word, 1u);
        const u32 j = item_unit(item / tiles, s), row0_item = (item % tiles) * tile_rows;
        const u32 e = ul.expert[j];
        auto route_of = [&](u32 c) { return static_cast<u32>(ul.route[j][c]); };
        const moe_experts::route_scan<F::tiles> unit = listed_unit(e == 0xFFFFu ? -1 : static_cast<i32>(e), ul.columns[j], want, route_of);
        if (e == 0xFFFFu) store_zero_rows(p, unit.count, route_of(min_of(thread / (tile_rows / 8), chunk_columns - 1)), row0_item, thread);
        else serve(p, sh, unit, row0_item, w, lane, thread, use++, staged);
        staged = false;
        if (thread == 0) ul.next_item = grid + claimed;
        workgroup_barrier<target>();  // the epilogue's LDS reads before the next item's writes; the claim published
        item = ul.next_item;
        workgroup_barrier<target>();  // every thread has read it before it is written again
      }
      // The last workgroup to finish (every claim of the call is made by then) zeroes both
      // counters for the next call.
      if (thread == 0) {
        fence_release<target>();
        if (atomic_add_relaxed<target>(p.units + list::finished_word, 1u) == grid - 1) {
          fence_acquire<target>();
          p.units[list::claims_word] = 0;
          p.units[list::finished_word] = 0;
        }
      }
    } else if constexpr (Contract::unit_list) {  // workgroup (x, j) serves unit j
      using list = moe::expert_unit_list;
      wait_for_prerequisites<target>();
      const u32 units = load_u32_strong<target>(p.units + list::count_word);
      if (y >= units) return;  // uniform: past the list (these workgroups launch last)
      launch_dependents<target>();
      u32 want[F::tiles];
      lane_columns(want);
      // lane i holds word i % 32 of the unit's line; a column's route is a shuffle away
      const u32 word = load_u32_strong<target>(p.units + list::unit_word(y, lane % list::unit_words));
      auto route_of = [&](u32 c) { return target_ops<target>::broadcast(word, list::first_route_word + min_of(c, list::max_columns - 1)); };
      const moe_experts::route_scan<F::tiles> unit = listed_unit(static_cast<i32>(wave_broadcast<target>(word, list::expert_word)),
                                                                 wave_broadcast<target>(word, list::columns_word), want, route_of);
      const u32 zero_route = route_of(thread / (tile_rows / 8));
      if (weights::valid_expert(unit.expert)) serve(p, sh, unit, row0, w, lane, thread, 0);
      else store_zero_rows(p, unit.count, zero_route, row0, thread);
    } else {
      const bool prestaged = early_shared && y == moe::route_layout::shared_slot;  // uniform
      if constexpr (early_shared) {
        if (prestaged) stage_weights(sh, shared_tile_rows(p, tile), thread, 0);
      }
      auto settle = [&] {  // the early copy lands before the workgroup moves on (or exits)
        if constexpr (early_shared) {
          if (prestaged) bulk_copy_ops<target>::wait(sh.weight_ready, 0);
        }
      };
      wait_for_prerequisites<target>();
      u32 want[F::tiles];
      lane_columns(want);
      const moe_experts::route_scan<F::tiles> scan = moe_experts::scan_routes<target, Contract::max_routes>(p.ids, p.tokens * moe::route_layout::slots, y, want);
      if (!weights::valid_expert(scan.expert)) {
        settle();
        store_zero_rows(p, 1, y, row0, thread);  // an invalid id: its own route's rows
        return;
      }
      // The route at occurrence 0, 16, 32, .. of its expert serves that occurrence and the next 15
      // (more than 16 routes per expert only with duplicate ids inside a token).
      if (scan.earlier_count % chunk_columns != 0) {
        settle();
        return;
      }
      launch_dependents<target>();
      const bool hit = prestaged && scan.expert == moe::route_layout::shared_expert_id;  // uniform
      if (prestaged && !hit) settle();
      serve(p, sh, scan, row0, w, lane, thread, prestaged && !hit ? 1 : 0, hit);
    }
  }
};

template <class Target, u32 MaxTokens, u32 Schedule, u32 Staging, u32 WaveSize>
struct kernels_of<contracts::moe_expert_gate_up<Target, MaxTokens, Schedule, Staging, WaveSize>> {
  using contract = contracts::moe_expert_gate_up<Target, MaxTokens, Schedule, Staging, WaveSize>;
  using type = conditional_t<contract::unit_list, type_list<moe_expert_units_kernel<contract>, moe_expert_gate_up_kernel<contract>>,
                             type_list<moe_expert_gate_up_kernel<contract>>>;
};

}  // namespace netra::kernels
