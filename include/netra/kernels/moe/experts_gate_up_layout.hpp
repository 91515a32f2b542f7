// netra/kernels/moe/experts_gate_up_layout.hpp — the layout and weight staging of
// contracts::moe_expert_gate_up's kernel (experts_gate_up.hpp): workgroup, tile and pass
// constants, the LDS state, and how a tile's weights go in flight (Contract::weights_in_lds).
//   registers staging: every lane loads its A pieces of its wave's 4 scale blocks, 16 bytes each,
//     streaming_early (load_weights).
//   LDS staging (copy engine): one thread copies the tile's 16 rows x 2048 K, contiguous in W13,
//     into LDS as one 32 KiB bulk copy on one barrier (stage_weights / copy_tile; the barrier's
//     n-th use has parity n % 2); lanes later read their A pieces from LDS. The rows are
//     unpadded so that one copy suffices: a quarter-warp's 16-byte reads of rows g, g + 1 then
//     share 16 of the 32 banks (2-way).
//   The shared expert's tile (known before the routes are) can be staged before the wait
//     (early_shared, stage_first_rows, shared_tile_rows): W13 is written by no netra kernel.
#pragma once
#include "netra/contracts/moe/expert_gate_up.hpp"
#include "netra/dsl/bulk_copy.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/moe/experts_units.hpp"
#include "netra/kernels/moe/experts_device.hpp"

namespace netra::kernels::moe_experts {

template <class Contract> struct gate_up_layout {
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
  /// LDS bytes per staged weight row (the row's whole K, unpadded: see the file comment).
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
  /// workgroups) whose workgroups loop over items (unit, tile), so that it can release its
  /// successor at its start.
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
};

}  // namespace netra::kernels::moe_experts
