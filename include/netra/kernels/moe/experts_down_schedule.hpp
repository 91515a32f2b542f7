// netra/kernels/moe/experts_down_schedule.hpp — the layout and unit schedule of
// contracts::moe_expert_down's kernel (experts_down.hpp): workgroup and tile constants, the
// activation storage, and the workgroup's schedule in LDS.
//   Schedule: wave 0 lists the call's units with gate_up's lister (experts_units.hpp: one round
//   trip for the ids, one key match per row of routes): a unit is the routes of one expert at
//   occurrences 16 u .. 16 u + 15 in route order (more than 16 routes per expert only with
//   duplicate ids inside a token); the units of valid experts are kept in route order and dealt
//   round-robin, wave w taking units w, w + waves, ... (find_unit).
#pragma once
#include "netra/contracts/moe/expert_down.hpp"
#include "netra/dsl/bulk_copy.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/moe/act_quant.hpp"
#include "netra/kernels/moe/experts_units.hpp"
#include "netra/kernels/moe/experts_device.hpp"

namespace netra::kernels::moe_experts {

template <class Contract> struct down_layout {
  using target = typename Contract::target;
  using F = moe_experts::block_fragment<target>;
  using S = typename F::shape;
  using weights = moe::expert_weights;
  static constexpr const char* symbol = "netra_moe_expert_down";
  /// sm90a: launched with programmatic stream serialisation (see the file comment).
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 waves = Contract::waves;  // 12
  static constexpr u32 workgroup_size = wave * waves;
  static constexpr u32 tile_rows = F::rows;
  static constexpr u32 tiles = weights::hidden / tile_rows;              // 128
  static constexpr u32 blocks = weights::intermediate / weights::block;  // 4
  static constexpr u32 chunk_columns = F::chunk_columns;
  static constexpr bool fused = Contract::fused_act_quant;
  /// Contract::weights_in_lds (sm90a): a wave's units are staged into LDS by the copy engine,
  /// `stages` of them in flight (the one it computes and the next), 8 KiB each, in dynamic LDS.
  static constexpr bool weights_in_lds = Contract::weights_in_lds;
  static constexpr u32 stages = weights_in_lds ? 2 : 1;
  static constexpr u32 unit_bytes = tile_rows * weights::intermediate;  // 16 W2 rows: 8 KiB, contiguous
  static constexpr u32 dynamic_lds_bytes = weights_in_lds ? waves * stages * unit_bytes : 0;
  static constexpr bool prefers_max_lds = weights_in_lds;
  // Fused prologue: wave-per-route rows, V values per lane, a 128-value group on 128 / V lanes.
  static constexpr u32 prologue_values = weights::intermediate / wave;  // 8 on a wave64, 16 on a warp32
  static constexpr u32 prologue_group_lanes = weights::block / prologue_values;
  static_assert(Contract::max_tokens * tile_rows <= workgroup_size, "down: one summing thread per (token, row)");
  static_assert(prologue_values % 8 == 0 && prologue_group_lanes <= wave, "down: prologue pieces are whole 16-byte loads");

  struct params {
    const void* act;             // E4M3 [9M, 512] (Input 0) or BF16 [9M, 1024] (Input 1)
    const float* act_scales;     // FP32 [9M, 4] (Input 0)
    const i32* ids;              // [M, 9]
    const float* route_weights;  // [M, 9]
    const u8* w2;                // E4M3 [257, 2048, 512]
    const float* s2;             // FP32 [257, 16, 4]
    u16* out;                    // BF16 [M, 2048]
    u32 tokens;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32) { return {{tiles, 1, 1}, workgroup_size, dynamic_lds_bytes}; }

  NETRA_HOST_DEVICE static constexpr u32 lane_column(u32 lane, u32 tile) { return F::act_piece(lane, tile, 0).index; }

  /// Activation storage: act_quant's E4M3 rows and scales, in global memory (Input 0) or in the
  /// workgroup's LDS after the fused prologue (Input 1).
  struct lds_activations {
    alignas(16) u8 q[fused ? Contract::max_routes : 1][weights::intermediate];
    float scale[fused ? Contract::max_routes : 1][blocks];
  };

  /// The workgroup's unit schedule, in LDS, built once from the route ids (build_schedule)
  /// before any weight load: the call's unit list as gate_up's lister makes it
  /// (kernels/moe/experts_units.hpp; contracts/moe/expert_unit_list.hpp: the routes of one key at
  /// occurrences [16 u, 16 u + 16), numbered in the route order of their first routes), less the
  /// units of invalid ids, in the same order. Routes and units fit a byte.
  using list = moe::expert_unit_list;
  using lister = expert_unit_lister<target, Contract::max_routes>;
  static_assert(Contract::max_routes <= 255, "down: the schedule stores routes and units as bytes");
  struct schedule {
    u16 key[Contract::max_routes];                   // list::key_of(ids[r]) (the final sum zeroes invalid routes)
    u16 expert[Contract::max_routes];                // the key of listed unit j (the lister's numbering)
    u8 column[Contract::max_routes][chunk_columns];  // column[j][c]: the route of column c of listed unit j
    u8 columns[Contract::max_routes];                // the column count (1 .. 16) of listed unit j
    u8 unit[Contract::max_routes];                   // unit k of the schedule: listed unit unit[k] (valid key)
    u32 units;
  };
  /// Where the lister's scratch lives: it is dead once the schedule is built, before any partial
  /// is written, so it shares the partials' LDS.
  union partials_or_scratch {
    float partial[Contract::max_routes][tile_rows];
    typename lister::scratch scratch;
  };

  /// The lister's route r, column `column` of listed unit j (columns: only on column 0).
  NETRA_HOST_DEVICE static void record_route(schedule& s, u32 r, u32 j, u32 column, i32 id, u32 columns) {
    const u32 key = list::key_of(id);
    s.key[r] = static_cast<u16>(key);
    s.column[j][column] = static_cast<u8>(r);
    if (column == 0) {
      s.expert[j] = static_cast<u16>(key);
      s.columns[j] = static_cast<u8>(columns);
    }
  }

  /// Wave 0 lists the units (one round trip for the ids, then ceil(routes / wave) rows of key
  /// matches), then keeps those of valid keys in order (one ballot per wave of listed units).
  /// Every thread calls it; one barrier; the schedule is read-only afterwards.
  static NETRA_DEVICE void build_schedule(const params& p, schedule& s, typename lister::scratch& scratch, u32 routes, u32 lane, u32 w) {
    if (w == 0) {
      lister::clear(scratch, lane);
      const u32 listed = lister::build(p.ids, routes, lane, scratch,
                                       [&](u32 r, u32 j, u32 column, i32 id, u32 columns) { record_route(s, r, j, column, id, columns); });
      wave_barrier<target>();  // every lane's records are in LDS
      u32 base = 0;
      for (u32 j0 = 0; j0 < listed; j0 += wave) {  // uniform
        const u32 j = j0 + lane;
        const bool valid = j < listed && s.expert[j] != list::invalid_key;
        const u64 mask = wave_ballot<target>(valid);
        if (valid) s.unit[base + mask_popcount<target>(mask & lanes_below(lane))] = static_cast<u8>(j);
        base += mask_popcount<target>(mask);
      }
      if (lane == 0) s.units = base;
    }
    workgroup_barrier<target>();
  }

  /// One unit (an expert's occurrence 0, 16, .. in route order): W2 rows [row0, row0 + 16) times
  /// the activations of its (up to) 16 routes -> partial[route][block][row].
  struct unit {
    i32 expert;
    u32 columns;          // uniform
    u32 route[F::tiles];  // the route of the lane's column in instruction tile n, or no_route
    u32x4 wt[weights_in_lds ? 1 : blocks][F::weight_pieces];  // the lane's weight pieces (registers mode)
    float sw[blocks];
  };

  /// Unit k of the schedule (k < units).
  static NETRA_DEVICE void find_unit(const schedule& s, unit& un, u32 k, u32 lane) {
    const u32 j = s.unit[k];
    un.expert = static_cast<i32>(s.expert[j]);
    un.columns = s.columns[j];
    NETRA_UNROLL
    for (u32 n = 0; n < F::tiles; ++n) {
      const u32 c = lane_column(lane, n);
      un.route[n] = c < un.columns ? static_cast<u32>(s.column[j][c]) : moe_experts::no_route;
    }
  }

};

}  // namespace netra::kernels::moe_experts
