// netra/kernels/moe/experts_persistent.hpp — the kernel of contracts::moe_expert_persistent: the
// decode experts gate_up -> act_quant -> down (+ the weighted route sum) in one launch, built from
// the stage kernels' own pieces (gate_up_compute::serve, moe_act_quant_kernel::quantize_row,
// down_compute::load_unit / run_unit), so every output has the chain's bits.
//
// Mapping: grid (Contract::grid), gate_up's workgroup (4 waves). Wave 0 of every workgroup lists
// the call's units into LDS (gate_up's expert_unit_lister, as its resident schedule does) and
// keeps the valid ones in order. Then items, each claimed from the workspace's counter (one
// atomic per item, in flight while the previous item is served; the first claimed after the list):
//   item i < 64 U (U units): gate_up item (unit i / 64, W13 rows 16 (i % 64) .. + 16), served as
//     gate_up's resident schedule serves it (LDS staging on sm90a, registers on gfx950); then one
//     arrival on the unit (release). The workgroup whose arrival is the unit's 64th quantizes the
//     unit's routes (act_quant's rows: workgroup_size / 64 rows per pass, loads after its acquire)
//     and counts the 65th: the unit is ready.
//   later items: down item (valid unit k, tile group g): wave w takes W2 rows 16 (4 g + w) .. + 16
//     of the unit's expert: its 8 KiB in registers first, then it waits (device-scope polls) until
//     the unit is ready, computes the unit's route rows as down does and stores them to the
//     workspace's partials [tile][route][16]; the workgroup counts an arrival on group g
//     (release). The workgroup whose arrival is the group's max(V, 1)-th (V valid units; with
//     V = 0 the group's one item carries no unit) sums the group's 64 rows of every token:
//     acc = fma(w_s, y_s, acc), s = 0..8 (y = +0.0 for an invalid id), thread i 4 rows at a time.
// No item waits on a later one and every claimed item belongs to a running workgroup, so the
// kernel completes whatever the residency. The last workgroup to finish zeroes the counters.
// Programmatic dependent launch (sm90a): the wait comes before the ids are read; the successor
// is released right after it.
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
  static constexpr bool prefers_max_lds = G::weights_in_lds;
  static constexpr u32 tiles = G::tiles, tile_rows = G::tile_rows, chunk_columns = G::chunk_columns;
  static constexpr u32 max_routes = Contract::max_routes;
  static constexpr u32 rows_per_pass = workgroup_size / Q::lanes_per_row;
  static constexpr u32 no_unit = 0xFFFFFFFFu;
  static constexpr u32 ready = tiles + 1;  // a unit's arrivals once its routes are quantized
  static_assert(G::workgroup_size == workgroup_size && waves * W::tile_groups * tile_rows == weights::hidden,
                "persistent: gate_up's workgroup; a tile group is one down row tile per wave");
  static_assert(rows_per_pass * Q::lanes_per_row == workgroup_size, "persistent: act_quant passes of whole rows");
  static_assert(Contract::gate_up::max_routes == max_routes, "persistent: gate_up's lister reads every route of the call");

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
    u32 units, valid, next_item, finishes, last;  // finishes: the unit this workgroup quantizes, or the group it sums
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32) { return {{Contract::grid, 1, 1}, workgroup_size, 0}; }

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

  /// Down item d's unit rows for wave w's tile (every lane of the wave calls it; no unit with V = 0).
  static NETRA_DEVICE void down_item(const params& p, const list_state& ul, typename G::shared_state& sh, const typename D::lds_activations& none,
                                     lds_copy_barrier& staged, u32& uses, u32 d, u32 w, u32 lane) {
    const typename D::params dp{p.act, p.act_scales, p.ids, p.route_weights, p.w2, p.s2, p.out, p.tokens};
    const u32 k = d / W::tile_groups, g = d % W::tile_groups, tile = g * waves + w;
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
      u8* stage = nullptr;  // weights_in_lds: the wave's 8 KiB quarter of gate_up's tile buffer (idle in down items)
      if constexpr (D::weights_in_lds) {
        stage = &sh.weight[0][0] + w * D::unit_bytes;
        bulk_copy_ops<target>::release_for_copy();  // the buffer's earlier generic reads before the copy engine's writes
      }
      D::load_unit(dp, un, tile * tile_rows, lane, stage, &staged);  // the weights in flight before the wait
      while (load_u32_strong<target>(p.workspace + W::unit_word0 + j) < ready) {
      }
      fence_acquire<target>();
      typename D::tile_acts acts;
      D::load_tile_acts(dp, none, un, 0, lane, acts);
      if constexpr (D::weights_in_lds) bulk_copy_ops<target>::wait(staged, uses++ & 1u);
      D::run_unit(dp, none, un, stage, lane, acts, partials(p, tile));
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED typename G::shared_state sh;
    NETRA_SHARED list_state ul;
    NETRA_SHARED typename D::lds_activations none;  // down's LDS activations: unused (E4M3 input)
    NETRA_SHARED lds_copy_barrier staged[waves];    // weights_in_lds: each wave's down stage
    const u32 thread = thread_id<target>(), lane = lane_id<target>(), w = wave_id<target>();
    // the lister's counts live in the wave partials' space (first written by a gate_up item's products)
    auto& counts = *reinterpret_cast<typename G::lister::scratch*>(&sh.partial[0][0][0]);
    if (w == 0) G::lister::clear(counts, lane);
    if constexpr (D::weights_in_lds) {
      if (lane == 0) bulk_copy_ops<target>::init(staged[w]);  // list_units' barrier publishes it
    }
    wait_for_prerequisites<target>();
    launch_dependents<target>();
    if (thread == 0) ul.next_item = atomic_add_relaxed<target>(p.workspace + W::claims_word, 1u);
    list_units(p, ul, counts, w, lane);
    const typename G::params gp{p.hidden, p.ids, p.w13, p.s13, p.gate_up, p.tokens, nullptr};
    u32 want[F::tiles];
    NETRA_UNROLL
    for (u32 n = 0; n < F::tiles; ++n) want[n] = G::lane_column(lane, n);
    const u32 gate_items = ul.units * tiles, items = gate_items + max_of(ul.valid, 1u) * W::tile_groups;
    u32 use = 0, down_uses = 0;  // gate_up's and the wave's down stagings so far (copy barrier parities)
    NETRA_NO_UNROLL
    for (u32 item = ul.next_item; item < items;) {  // uniform
      u32 claimed = 0;
      if (thread == 0) claimed = atomic_add_relaxed<target>(p.workspace + W::claims_word, 1u);
      if (item < gate_items) {  // uniform
        const u32 j = item / tiles, row0 = (item % tiles) * tile_rows, e = ul.expert[j];
        auto route_of = [&](u32 c) { return static_cast<u32>(ul.route[j][c]); };
        const moe_experts::route_scan<F::tiles> unit = G::listed_unit(e == 0xFFFFu ? -1 : static_cast<i32>(e), ul.columns[j], want, route_of);
        if (e == 0xFFFFu) G::store_zero_rows(gp, unit.count, route_of(min_of(thread / (tile_rows / 8), chunk_columns - 1)), row0, thread);
        else G::serve(gp, sh, unit, row0, w, lane, thread, use++);
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
        down_item(p, ul, sh, none, staged[w], down_uses, d, w, lane);
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
      if (thread == 0) ul.next_item = claimed;
      workgroup_barrier<target>();  // the LDS reads of this item before the next one's writes; the claim published
      item = ul.next_item;
      workgroup_barrier<target>();
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

template <class Target, u32 MaxTokens, u32 WaveSize> struct kernels_of<contracts::moe_expert_persistent<Target, MaxTokens, WaveSize>> {
  using contract = contracts::moe_expert_persistent<Target, MaxTokens, WaveSize>;
  using type = type_list<moe_expert_persistent_kernel<contract>>;
};

}  // namespace netra::kernels
