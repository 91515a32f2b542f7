// netra/kernels/moe/experts_units.hpp — the call's unit list (contracts/moe/expert_unit_list.hpp):
// expert_unit_lister, one wave's operations, and the first kernel of contracts::moe_expert_gate_up
// with Schedule unit_list, which writes the list into the workspace (gate_up's resident schedule
// runs the lister in every workgroup into its LDS instead).
//
// Lister: the wave reads every id at once (one round trip; lane l holds ids[it W + l] in register
// row it), then takes the rows in route order. Per row: the lanes with equal keys find each other
// (wave_match: match.any on sm90a, one ballot per distinct key on gfx950); a route's occurrence is
// its key's count over the earlier rows (LDS) plus its rank among its row peers; the routes at
// occurrences 16 u begin units, numbered by a running count of the rows' ballots; a route's unit
// is that of its chunk's first route, found among its row peers (that lane's number) or, begun in
// an earlier row, its key's latest unit (LDS). The highest lane of each key's peers then updates
// the key's count and latest unit. Last, every route is emitted with its unit and column, a unit's
// first route with the unit's column count (from its key's final count). LDS: two words per key
// (258 keys). No atomics: the list is the same on every run.
// Units kernel: grid (1), one wave (gfx950 wave64, sm90a warp32); writes each route's column word,
// each unit's expert and column count, and the unit count. sm90a programmatic dependent launch:
// waits before it reads the ids; releases gate_up at once (its workgroups launch while this one
// runs, and wait for its end before they read the list).
#pragma once
#include "netra/contracts/moe/expert_gate_up.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/strong_load.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/wave_vote.hpp"
#include "netra/dsl/workgroup_barrier.hpp"

namespace netra::kernels {

/// The units of a call, listed by one wave (see the file comment); every lane of the wave calls
/// build (wave barriers order the wave's LDS accesses). `emit(route, unit, column, id, columns)`
/// is called once per route by the lane holding it: the route is column `column` of unit `unit`;
/// `columns` (the unit's column count) only where column == 0. Returns the unit count. LDS:
/// `scratch`, cleared by clear() before.
template <class Target, u32 MaxRoutes> struct expert_unit_lister {
  using list = moe::expert_unit_list;
  static constexpr u32 wave = Target::wave_size;
  static constexpr u32 rows = ceil_div(MaxRoutes, wave);

  struct scratch {
    u32 count[list::keys];   // routes of the key in the rows taken so far
    u32 latest[list::keys];  // the key's latest unit (read only once the key has begun one)
  };

  /// The wave's lanes zero the counts (build waits for them at its first barrier).
  static NETRA_DEVICE void clear(scratch& sh, u32 lane) {
    for (u32 k = lane; k < list::keys; k += wave) sh.count[k] = 0;
  }

  template <class Emit> static NETRA_DEVICE u32 build(const i32* ids, u32 routes, u32 lane, scratch& sh, Emit emit) {
    wave_barrier<Target>();  // the counts are zero
    i32 id[rows];
    NETRA_UNROLL
    for (u32 it = 0; it < rows; ++it) {
      const u32 i = it * wave + lane;
      id[it] = i < routes ? static_cast<i32>(load_u32_strong<Target>(ids + i)) : -1;
    }

    u32 occurrence[rows], unit[rows];
    u32 units = 0;
    NETRA_UNROLL
    for (u32 it = 0; it < rows; ++it) {
      if (it * wave >= routes) break;  // uniform
      const bool live = it * wave + lane < routes;
      const u32 key = live ? list::key_of(id[it]) : list::keys;  // lanes past the routes: a key of their own
      const u32 slot = live ? key : 0;
      const u64 peers = wave_match<Target>(key);
      const u32 before = sh.count[slot], latest = sh.latest[slot];
      const u32 occ = before + mask_popcount<Target>(peers & lanes_below(lane));
      const u64 starters = wave_ballot<Target>(live && occ % list::max_columns == 0);
      const u32 own = units + mask_popcount<Target>(starters & lanes_below(lane));  // the unit, if this route begins one
      const u32 first = occ - occ % list::max_columns;                             // occurrence of the chunk's first route
      const bool in_row = first >= before;
      const u32 from_peer = target_ops<Target>::broadcast(own, in_row ? mask_nth_set<Target>(peers, first - before) : lane);
      unit[it] = in_row ? from_peer : latest;
      occurrence[it] = occ;
      units += mask_popcount<Target>(starters);
      wave_barrier<Target>();  // every lane has read its key's words
      if (live && (peers >> lane) == 1) {  // the key's highest lane in the row
        sh.count[key] = occ + 1;
        sh.latest[key] = unit[it];
      }
      wave_barrier<Target>();
    }

    NETRA_UNROLL
    for (u32 it = 0; it < rows; ++it) {
      const u32 i = it * wave + lane;
      if (i < routes) {
        const u32 column = occurrence[it] % list::max_columns;
        emit(i, unit[it], column, id[it], column == 0 ? min_of(list::max_columns, sh.count[list::key_of(id[it])] - occurrence[it]) : 0u);
      }
    }
    return units;
  }
};

template <class Contract> struct moe_expert_units_kernel {
  using target = typename Contract::target;
  using list = moe::expert_unit_list;
  using lister = expert_unit_lister<target, Contract::max_routes>;
  static constexpr const char* symbol = "netra_moe_expert_units";
  /// sm90a: launched with programmatic stream serialisation (it waits before its first read).
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 workgroup_size = target::wave_size;

  struct params {
    const i32* ids;  // [M, 9]
    u32* units;      // expert_unit_list (the contract's workspace)
    u32 tokens;
  };

  static constexpr u32 lds_bytes = sizeof(typename lister::scratch);

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32) { return {{1, 1, 1}, workgroup_size, 0}; }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED typename lister::scratch sh;
    const u32 lane = lane_id<target>();
    lister::clear(sh, lane);
    launch_dependents<target>();
    wait_for_prerequisites<target>();
    const u32 units = lister::build(p.ids, p.tokens * moe::route_layout::slots, lane, sh, [&](u32 route, u32 unit, u32 column, i32 id, u32 columns) {
      p.units[list::unit_word(unit, list::first_route_word + column)] = route;
      if (column == 0) {
        p.units[list::unit_word(unit, list::expert_word)] = static_cast<u32>(id);
        p.units[list::unit_word(unit, list::columns_word)] = columns;
      }
    });
    if (lane == 0) p.units[list::count_word] = units;
  }
};

}  // namespace netra::kernels
