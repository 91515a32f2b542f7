// netra/kernels/moe/experts_persistent.hpp — the kernel of contracts::moe_expert_persistent: the
// decode experts gate_up -> act_quant -> down (+ the weighted route sum) in one launch, from the
// stage kernels' own pieces (gate_up_compute::serve_staged, moe_act_quant_kernel::quantize_row,
// down_compute::load_scales / run_unit), so every output has the chain's bits.
// Mapping: grid (Contract::grid), gate_up's workgroup (4 waves). Wave 0 lists the call's units
// into LDS (gate_up's expert_unit_lister) and keeps the valid ones in order. The workgroup holds
// Contract::stages items claimed from the workspace's counter (the first `stages` one by one before
// the list, then one per served item) and serves them in claim order. sm90a: a held
// item's 32 KiB of weights go into its own stage of dynamic LDS by one bulk copy (thread 0) once
// its number is known; a stage takes the next claimed item once every wave has read it. gfx950
// (1 stage): the pieces load their weights into registers, as the stage kernels do.
//   item i < 64 U (U units): gate_up item (unit i / 64, W13 rows 16 (i % 64) .. + 16), then one
//     arrival on the unit (release); the unit's 64th arrival's workgroup quantizes the unit's
//     routes (act_quant's rows, loads after its acquire) and counts the 65th: ready.
//   later: down item (valid unit k, tile group g: W2 rows 64 g .. + 64; wave w tile 4 g + w, its
//     8 KiB quarter of the stage): it polls (device scope) until the unit is ready, computes the
//     route rows as down does into the workspace's partials [tile][route][16], counts an arrival
//     on group g; the group's max(V, 1)-th (V valid units) sums its 64 rows of every token:
//     acc = fma(w_s, y_s, acc), s = 0..8 (y = +0.0 for an invalid id).
// An item waits only on earlier items and a workgroup's held items follow the one it serves, so
// the earliest unfinished item is always served: it completes whatever the residency. The last
// workgroup to finish zeroes the counters. Programmatic dependent launch (sm90a): the wait comes
// before the ids are read; the successor is released right after it.
#pragma once
#include "netra/contracts/moe/expert_persistent.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/kernels/moe/act_quant.hpp"
#include "netra/kernels/moe/experts_down_compute.hpp"
#include "netra/kernels/moe/experts_gate_up_compute.hpp"

namespace netra::kernels {

template <class Contract> struct moe_expert_persistent_kernel {
  using target = typename Contract::target;
  using G = moe_experts::gate_up_compute<typename Contract::gate_up>;
  using D = moe_experts::down_compute<typename Contract::down>;
  using Q = moe_act_quant_kernel<typename Contract::act_quant>;
  using F = typename G::F;
  using W = typename Contract::workspace;
  using weights = moe::expert_weights;
  static constexpr const char* symbol = "netra_moe_expert_persistent";
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr u32 waves = workgroup_size / wave;
  static constexpr u32 min_workgroups_per_processor = Contract::min_workgroups_per_processor;
  static constexpr bool staged = G::weights_in_lds;  // items staged into LDS by bulk copies
  static constexpr u32 stages = Contract::stages, item_bytes = Contract::item_bytes;
  static constexpr u32 dynamic_lds_bytes = staged ? stages * item_bytes : 0;  // [stages][32 KiB]
  static constexpr bool prefers_max_lds = staged;
  static constexpr u32 tiles = G::tiles, tile_rows = G::tile_rows, chunk_columns = G::chunk_columns;
  static constexpr u32 max_routes = Contract::max_routes, rows_per_pass = workgroup_size / Q::lanes_per_row, no_unit = 0xFFFFFFFFu;
  static constexpr u32 ready_arrivals = tiles + 1;  // a unit's arrivals once its routes are quantized
  static_assert(G::workgroup_size == workgroup_size && waves * W::tile_groups * tile_rows == weights::hidden,
                "persistent: gate_up's workgroup; a tile group is one down row tile per wave");
  static_assert(rows_per_pass * Q::lanes_per_row == workgroup_size, "persistent: act_quant passes of whole rows");
  static_assert(Contract::gate_up::max_routes == max_routes, "persistent: gate_up's lister reads every route of the call");
  static_assert(tile_rows * weights::hidden == item_bytes && waves * D::unit_bytes == item_bytes && D::weights_in_lds == staged &&
                    (staged || stages == 1),
                "persistent: an item's weights are 32 KiB, staged like both stage kernels'");

  struct params {
    const u16* hidden;           // BF16 [M, 2048]
    const i32* ids;              // [M, 9]
    const float* route_weights;  // [M, 9]
    const u8* w13;
    const float* s13;
    const u8* w2;
    const float* s2;
    u16* gate_up;       // BF16 [9M, 1024]
    u8* act;            // E4M3 [9M, 512]
    float* act_scales;  // FP32 [9M, 4]
    u16* out;           // BF16 [M, 2048]
    u32 tokens;
    u32* workspace;     // moe::persistent_workspace
  };

  /// The call's unit list (gate_up's resident form) and the item loop's shared words.
  struct list_state {
    u16 expert[max_routes];  // 0xFFFF: an invalid id
    u8 columns[max_routes];
    u16 route[max_routes][chunk_columns];
    u16 valid_unit[max_routes];  // k-th unit of a valid expert
    u32 units, valid, finishes, last;  // finishes: the unit this workgroup quantizes, or the group it sums
    u32 held[stages];                  // the items the workgroup holds: the n-th served is in slot n % stages
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32) { return {{Contract::grid, 1, 1}, workgroup_size, dynamic_lds_bytes}; }

  /// Item `item`'s 32 KiB of weights (nullptr: an invalid-id unit's gate_up item, a V = 0 group's).
  static NETRA_DEVICE const u8* item_weights(const params& p, const list_state& ul, u32 item) {
    const u32 gate_items = ul.units * tiles;
    if (item < gate_items) {
      const u32 e = ul.expert[item / tiles];
      return e == 0xFFFFu ? nullptr : p.w13 + static_cast<u64>(e) * weights::w13_expert_bytes + static_cast<u64>(item % tiles) * item_bytes;
    }
    const u32 d = item - gate_items, k = d / W::tile_groups;
    return k < ul.valid ? p.w2 + static_cast<u64>(ul.expert[ul.valid_unit[k]]) * weights::w2_expert_bytes + static_cast<u64>(d % W::tile_groups) * item_bytes
                        : nullptr;
  }

  /// Staged, one thread: item `item`'s weights into `stage` on the barrier's next phase (one phase
  /// per held item: an item past the call's `items` or without weights only arrives).
  static NETRA_DEVICE void stage_item(const params& p, const list_state& ul, u32 item, u32 items, u8* stage, lds_copy_barrier& ready) {
    if constexpr (staged) {
      const u8* source = item < items ? item_weights(p, ul, item) : nullptr;
      bulk_copy_ops<target>::expect_bytes(ready, source != nullptr ? item_bytes : 0u);
      if (source != nullptr) bulk_copy_ops<target>::copy(stage, source, item_bytes, ready);
    }
  }

  static NETRA_DEVICE float (*partials(const params& p, u32 tile))[tile_rows] {
    return reinterpret_cast<float (*)[tile_rows]>(reinterpret_cast<u8*>(p.workspace) + W::partials_offset) + static_cast<u64>(tile) * max_routes;
  }

  /// Wave 0 lists the units and keeps the valid ones in order; one barrier after.
  static NETRA_DEVICE void list_units(const params& p, list_state& ul, typename G::lister::scratch& counts, u32 w, u32 lane) {
    if (w == 0) {
      const u32 listed = G::lister::build(p.ids, p.tokens * moe::route_layout::slots, lane, counts,
                                          [&](u32 route, u32 unit, u32 column, i32 id, u32 columns) {
                                            ul.route[unit][column] = static_cast<u16>(route);
                                            if (column == 0) {
                                              ul.expert[unit] = static_cast<u16>(weights::valid_expert(id) ? static_cast<u32>(id) : 0xFFFFu);
                                              ul.columns[unit] = static_cast<u8>(columns);
                                            }
                                          });
      wave_barrier<target>();  // every lane's records are in LDS
      u32 base = 0;
      for (u32 j0 = 0; j0 < listed; j0 += wave) {  // uniform
        const u32 j = j0 + lane;
        const bool valid = j < listed && ul.expert[j] != 0xFFFFu;
        const u64 mask = wave_ballot<target>(valid);
        if (valid) ul.valid_unit[base + mask_popcount<target>(mask & lanes_below(lane))] = static_cast<u16>(j);
        base += mask_popcount<target>(mask);
      }
      if (lane == 0) ul.units = listed, ul.valid = base;
    }
    workgroup_barrier<target>();
  }

  /// act_quant of unit j's routes (their gate_up rows complete: after the 64th arrival's acquire).
  static NETRA_DEVICE void quantize_unit(const params& p, const list_state& ul, u32 j, u32 thread) {
    const u32 columns = ul.columns[j];
    NETRA_NO_UNROLL
    for (u32 c0 = 0; c0 < columns; c0 += rows_per_pass) {  // uniform
      const u32 c = c0 + thread / Q::lanes_per_row;
      const bool live = c < columns;
      const u64 r = ul.route[j][live ? c : columns - 1];
      Q::quantize_row(p.gate_up + r * weights::gate_up_rows + Q::first_value(thread, 0), p.act + r * weights::intermediate,
                      p.act_scales + r * (weights::intermediate / weights::block), thread, live,
                      [](const u16* a) { return load_16B_after_acquire<target>(a); });
    }
  }

  /// Tile group g's rows of every token, the down kernel's route sum over the partials: thread i
  /// takes token t, 4 rows of one tile (one 16-byte load per slot), acc = fma(w_s, y_s, acc).
  static NETRA_DEVICE void sum_group(const params& p, u32 g, u32 thread) {
    constexpr u32 quads = tile_rows / 4;
    NETRA_NO_UNROLL
    for (u32 i = thread; i < p.tokens * waves * quads; i += workgroup_size) {
      const u32 t = i / (waves * quads), tile = g * waves + (i / quads) % waves, r0 = 4 * (i % quads);
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      NETRA_UNROLL
      for (u32 s = 0; s < moe::route_layout::slots; ++s) {
        const u32 r = t * moe::route_layout::slots + s;
        const u32x4 y = weights::valid_expert(p.ids[r]) ? load_16B_after_acquire<target>(&partials(p, tile)[r][r0]) : u32x4{0, 0, 0, 0};
        const float wr = p.route_weights[r];
        NETRA_UNROLL
        for (u32 q = 0; q < 4; ++q) acc[q] = fma_rn(wr, bit_cast<float>(y[static_cast<int>(q)]), acc[q]);  // an invalid id: y = +0.0
      }
      store_8B<target>(p.out + static_cast<u64>(t) * weights::hidden + tile * tile_rows + r0, pack_bf16x2<target>(acc[0], acc[1]),
                       pack_bf16x2<target>(acc[2], acc[3]));
    }
  }

  /// Down item d's unit rows for wave w's tile (every lane calls it; no unit with V = 0); staged:
  /// the item's weights land in `stage` at the barrier's phase of `parity`.
  static NETRA_DEVICE void down_item(const params& p, const list_state& ul, const typename D::lds_activations& none, const u8* stage,
                                     lds_copy_barrier& ready, u32 parity, u32 d, u32 w, u32 lane) {
    const typename D::params dp{p.act, p.act_scales, p.ids, p.route_weights, p.w2, p.s2, p.out, p.tokens};
    const u32 k = d / W::tile_groups, tile = (d % W::tile_groups) * waves + w;
    if (k < ul.valid) {  // uniform
      const u32 j = ul.valid_unit[k];
      typename D::unit un;
      un.expert = static_cast<i32>(ul.expert[j]);
      un.columns = ul.columns[j];
      NETRA_UNROLL
      for (u32 n = 0; n < F::tiles; ++n) {
        const u32 c = D::lane_column(lane, n);
        un.route[n] = c < un.columns ? static_cast<u32>(ul.route[j][c]) : moe_experts::no_route;
      }
      if constexpr (staged) D::load_scales(dp, un, tile * tile_rows);
      else D::load_unit(dp, un, tile * tile_rows, lane, nullptr, nullptr);  // the weights in flight before the wait
      while (load_u32_strong<target>(p.workspace + W::unit_word0 + j) < ready_arrivals) {
      }
      fence_acquire<target>();
      typename D::tile_acts acts;
      D::load_tile_acts(dp, none, un, 0, lane, acts);
      if constexpr (staged) bulk_copy_ops<target>::wait(ready, parity);
      D::run_unit(dp, none, un, staged ? stage + w * D::unit_bytes : nullptr, lane, acts, partials(p, tile));
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED typename G::epilogue_state eh;
    NETRA_SHARED list_state ul;
    NETRA_SHARED typename D::lds_activations none;  // down's LDS activations: unused (E4M3 input)
    NETRA_SHARED lds_copy_barrier ready[stages];    // staged: slot s's copies landed
    NETRA_DYNAMIC_SHARED_BYTES(staged_items);       // staged: [stages][item_bytes]
    const u32 thread = thread_id<target>(), lane = lane_id<target>(), w = wave_id<target>();
    // the lister's counts in the wave partials' space (first written by a gate_up item's products)
    auto& counts = *reinterpret_cast<typename G::lister::scratch*>(&eh.partial[0][0][0]);
    if (w == 0) G::lister::clear(counts, lane);
    if constexpr (staged) {
      if (thread < stages) bulk_copy_ops<target>::init(ready[thread]);  // list_units' barrier publishes them
    }
    wait_for_prerequisites<target>();
    launch_dependents<target>();
    u32 first[stages];  // thread 0: its first items, claimed one by one (in flight during the list)
    if (thread == 0)
      for (u32 i = 0; i < stages; ++i) first[i] = atomic_add_relaxed<target>(p.workspace + W::claims_word, 1u);
    list_units(p, ul, counts, w, lane);
    const typename G::params gp{p.hidden, p.ids, p.w13, p.s13, p.gate_up, p.tokens, nullptr};
    u32 want[F::tiles];
    NETRA_UNROLL
    for (u32 n = 0; n < F::tiles; ++n) want[n] = G::lane_column(lane, n);
    const u32 gate_items = ul.units * tiles, items = gate_items + max_of(ul.valid, 1u) * W::tile_groups;
    auto stage_of = [&](u32 slot) { return staged_items + slot * item_bytes; };
    if (thread == 0)
      for (u32 i = 0; i < stages; ++i) ul.held[i] = first[i], stage_item(p, ul, first[i], items, stage_of(i), ready[i]);
    workgroup_barrier<target>();  // the held items published
    u32 served = 0;  // items served so far: the next is in slot served % stages, its phase's parity (served / stages) % 2
    NETRA_NO_UNROLL
    for (u32 item = ul.held[0]; item < items;) {  // uniform
      const u32 slot = served % stages, parity = (served / stages) & 1u;
      u8* stage = stage_of(slot);
      u32 claimed = 0;
      if (thread == 0) claimed = atomic_add_relaxed<target>(p.workspace + W::claims_word, 1u);
      if (item < gate_items) {  // uniform
        const u32 j = item / tiles, row0 = (item % tiles) * tile_rows, e = ul.expert[j];
        auto route_of = [&](u32 c) { return static_cast<u32>(ul.route[j][c]); };
        const moe_experts::route_scan<F::tiles> unit = G::listed_unit(e == 0xFFFFu ? -1 : static_cast<i32>(e), ul.columns[j], want, route_of);
        if (e == 0xFFFFu) G::store_zero_rows(gp, unit.count, route_of(min_of(thread / (tile_rows / 8), chunk_columns - 1)), row0, thread);
        else G::serve_staged(gp, eh, typename G::staged_rows{stage, &ready[slot], parity}, unit, row0, w, lane, thread);
        workgroup_barrier<target>();  // every store of the tile issued
        if (thread == 0) {
          fence_release<target>();
          const bool last = atomic_add_relaxed<target>(p.workspace + W::unit_word0 + j, 1u) == tiles - 1;
          if (last) fence_acquire<target>();
          ul.finishes = last ? j : no_unit;
        }
        workgroup_barrier<target>();
        if (ul.finishes != no_unit) {  // uniform: the unit's 64th tile: its routes' act_quant
          quantize_unit(p, ul, j, thread);
          workgroup_barrier<target>();
          if (thread == 0) {
            fence_release<target>();
            atomic_add_relaxed<target>(p.workspace + W::unit_word0 + j, 1u);
          }
        }
      } else {
        const u32 d = item - gate_items, g = d % W::tile_groups;
        down_item(p, ul, none, stage, ready[slot], parity, d, w, lane);
        workgroup_barrier<target>();  // every wave's partial stores issued
        if (thread == 0) {
          fence_release<target>();
          const bool last = atomic_add_relaxed<target>(p.workspace + W::group_word0 + g, 1u) == max_of(ul.valid, 1u) - 1;
          if (last) fence_acquire<target>();
          ul.finishes = last ? g : no_unit;
        }
        workgroup_barrier<target>();
        if (ul.finishes != no_unit) sum_group(p, g, thread);  // uniform: the group's last item
      }
      // the slot takes the claimed item once every wave has read its stage (the barrier)
      if constexpr (staged) bulk_copy_ops<target>::release_for_copy();
      if (thread == 0) ul.held[slot] = claimed;
      workgroup_barrier<target>();
      if (thread == 0) stage_item(p, ul, claimed, items, stage, ready[slot]);
      ++served;
      item = ul.held[served % stages];
    }
    if (thread == 0) {  // the last workgroup to finish (every item done) zeroes the counters for the next call
      fence_release<target>();
      const bool last = atomic_add_relaxed<target>(p.workspace + W::finished_word, 1u) == Contract::grid - 1;
      if (last) fence_acquire<target>();
      ul.last = last ? 1u : 0u;
    }
    workgroup_barrier<target>();
    if (ul.last != 0)
      for (u32 i = thread; i < W::counter_words; i += workgroup_size) p.workspace[i] = 0;
  }
};

template <class Target, u32 MaxTokens, u32 Stages, u32 WaveSize> struct kernels_of<contracts::moe_expert_persistent<Target, MaxTokens, Stages, WaveSize>> {
  using contract = contracts::moe_expert_persistent<Target, MaxTokens, Stages, WaveSize>;
  using type = type_list<moe_expert_persistent_kernel<contract>>;
};

}  // namespace netra::kernels
