// netra/kernels/moe/experts_gate_up.hpp — the kernel of contracts::moe_expert_gate_up, and its
// scheduling (layout and staging: experts_gate_up_layout.hpp; compute: experts_gate_up_compute.hpp).
//
// Contract: out[r] = bf16( W13[ids[r]] * dequant(quant(hidden[r / 9])) ) for every route r of
// M <= 16 tokens, block FP8 (per-128 hidden quantization fused, moe::hidden_block_quant).
// Mapping: KSplit = 4 waves per workgroup (4 x wave64 = 256 lanes, or 4 warps = 128 threads).
// Workgroup (x, y) owns W13 rows [16x, 16x + 16) of the expert of one unit (up to 16 routes of an
// expert, the unit's "columns"), which it finds by Schedule:
//   route_scan: grid (64, 9M), y = route r, e = ids[r]; the workgroup reads every id and exits at
//     once unless r is the route at occurrence 0, 16, 32, .. of expert e (route order); then it
//     serves that route and the next 15 routes of e. An invalid id writes +0.0 to its 16 rows.
//   unit_list: grid (64, 9M), y = unit j of the list the units kernel wrote (experts_units.hpp);
//     every lane reads word lane % 32 of the unit's line and the unit count at once; workgroups
//     past the count exit (they launch after every working one).
//   resident (targets with programmatic dependent launch): grid (64, 8), all resident; wave 0 of
//     every workgroup lists the call's units into LDS with the units kernel's operations
//     (expert_unit_lister; the other waves wait at a barrier; with LDS staging wave 1 meanwhile
//     stages the first item's rows when routes 0 .. y hold distinct valid ids, so that unit y is
//     route y's expert), then the workgroup serves items i = unit * 64 + tile until none is
//     left: first its linear id, then each item it claims from the workspace's counter (one
//     atomic per item, in flight while the previous item is served). The last workgroup to
//     finish (a second counter) sets both counters back to zero for the next call. It releases
//     its successor right after its wait.
//   An invalid-id unit writes +0.0 to the 16 rows of each of its routes.
//   LDS staging, route_scan and resident: the shared expert's rows are known before the routes
//     are, so the workgroups that serve it first stage its tile before the wait (early_shared):
//     route_scan, the workgroups of route 8 (token 0's shared slot, which a router's output always
//     fills with id 256); resident, row y = 0, whose first item becomes (shared unit, tile x) by
//     trading places with unit 0 in the item order. A workgroup whose routes turn out otherwise
//     lets the copy land unused and proceeds as without it.
//   So each distinct expert's 2 MiB stream once per call (more than 16 routes per expert only
//   with duplicate ids inside a token: then once per 16 routes, concurrently).
// Wave w owns K [512w, 512w + 512) = scale blocks 4w .. 4w + 3; per unit the work is: all weight
// bytes in flight (staging), then per instruction tile (2 n8 tiles / 1 n16 tile) the columns'
// quantization and the block products, then the partials' epilogue (compute).
// Occupancy: with LDS staging 36 KiB of LDS and 5 workgroups per SM (all 576 workgroups of M = 1
// resident at once with every weight byte in flight); with register staging the weights cost
// registers instead (Contract::min_workgroups_per_processor). route_scan M = 16: 9216
// workgroups, one per distinct expert and tile working; the others exit after the scan.
// Programmatic dependent launch: the wait comes before the first read of the ids or the hidden
// rows (the early shared tile reads only W13); launch_dependents once the workgroup knows it
// will work.
#pragma once
#include "netra/dsl/sync.hpp"
#include "netra/kernels/moe/experts_gate_up_compute.hpp"

namespace netra::kernels {

template <class Contract> struct moe_expert_gate_up_kernel : moe_experts::gate_up_compute<Contract> {
  using base = moe_experts::gate_up_compute<Contract>;
  using typename base::target, typename base::F, typename base::weights, typename base::params, typename base::shared_state;
  using typename base::resident_state, typename base::lister;
  using base::wave, base::tiles, base::tile_rows, base::unit_rows, base::resident, base::early_shared, base::no_unit, base::chunk_columns;
  using base::weights_in_lds;
  using base::lane_column, base::stage_first_rows, base::shared_tile_rows, base::stage_weights, base::serve, base::store_zero_rows;
  using base::listed_unit, base::item_unit, base::shared_first;

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
