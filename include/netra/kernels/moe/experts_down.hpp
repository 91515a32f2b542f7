// netra/kernels/moe/experts_down.hpp — the kernel of contracts::moe_expert_down: the down
// projection of every route and the weighted sum over each token's 9 routes, in one launch
// (layout and schedule: experts_down_schedule.hpp; staging and compute: experts_down_compute.hpp).
//
// Contract: out[t] = bf16( sum_s weights[t][s] * (W2[ids[t*9+s]] * dequant(act[t*9+s])) ),
// block FP8; act is act_quant's E4M3 + scales (Input 0) or gate_up's BF16 with act_quant
// recomputed here with its exact semantics (Input 1).
// Mapping: grid (128): workgroup x owns output rows [16x, 16x + 16) of every token, with
// Contract::waves waves. Wave 0 first lists the call's units into LDS (the schedule); wave w then
// computes units w, w + waves, ...: each unit's weights in flight (staging; with LDS staging the
// next unit's weights and tile-0 activations in flight while the current one computes), then
// per instruction tile its routes' partial rows (compute). After a barrier, thread i < 16M takes
// token i / 16, row i % 16: acc = fma(w_s, y_s, acc) for s = 0..8 (y = +0.0 for an invalid id),
// one BF16 store. No atomics, no workspace: the result is independent of scheduling and of the
// other tokens. The weight stream is only the units a wave holds. Input 1 recomputes act_quant in
// every workgroup (deterministic, so exact): worth it only for few tokens, hence MaxTokens <= 4.
// Programmatic dependent launch: wave 0 reads the ids (strong loads) and a wave puts its first
// units' W2 in flight before the wait, so the weight stream overlaps the predecessor's tail
// (streaming_early loads stay before the wait). Precondition: ids are complete when the kernel
// preceding this one on the stream starts (in the decode block the router runs before gate_up,
// which waits before it lets its dependents start). Activations, route weights and all global
// stores come after the wait.
#pragma once
#include "netra/dsl/sync.hpp"
#include "netra/kernels/moe/experts_down_compute.hpp"

namespace netra::kernels {

template <class Contract> struct moe_expert_down_kernel : moe_experts::down_compute<Contract> {
  using base = moe_experts::down_compute<Contract>;
  using typename base::target, typename base::params, typename base::weights, typename base::lds_activations, typename base::unit;
  using typename base::partials_or_scratch, typename base::schedule, typename base::tile_acts, typename base::list;
  using base::waves, base::tile_rows, base::fused, base::weights_in_lds, base::stages, base::unit_bytes;
  using base::build_schedule, base::find_unit, base::load_unit, base::load_tile_acts, base::run_unit, base::fused_prologue;

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED partials_or_scratch shared_partials;
    float (*partial)[tile_rows] = shared_partials.partial;
    NETRA_SHARED lds_activations activations;
    NETRA_SHARED schedule sched;
    NETRA_SHARED lds_copy_barrier unit_ready[weights_in_lds ? waves : 1][stages];
    NETRA_DYNAMIC_SHARED_BYTES(staged_units);  // weights_in_lds: [waves][stages][unit_bytes]

    const u32 tile = workgroup_id<target, 0>();
    const u32 thread = thread_id<target>();
    const u32 lane = lane_id<target>();
    const u32 w = wave_id<target>();
    const u32 routes = p.tokens * moe::route_layout::slots;
    const u32 row0 = tile * tile_rows;
    auto stage = [&](u32 j) { return staged_units + (w * stages + j % stages) * unit_bytes; };
    auto ready = [&](u32 j) { return &unit_ready[weights_in_lds ? w : 0][j % stages]; };

    // Before the wait: the schedule (ids are complete when the predecessor starts) and this
    // wave's first units' weights in flight (weights_in_lds: the first two, into LDS).
    if constexpr (weights_in_lds) {
      if (lane == 0)
        for (u32 s = 0; s < stages; ++s) bulk_copy_ops<target>::init(unit_ready[w][s]);  // build_schedule's barrier publishes them
    }
    build_schedule(p, sched, shared_partials.scratch, routes, lane, w);
    const u32 units = sched.units;
    u32 k = w;  // wave w takes units w, w + waves, ...; j counts them
    unit cur, next;
    NETRA_UNROLL
    for (u32 j = 0; j < stages; ++j) {
      unit& un = j == 0 ? cur : next;
      if (k + j * waves < units) {
        find_unit(sched, un, k + j * waves, lane);
        load_unit(p, un, row0, lane, stage(j), ready(j));
      }
    }
    wait_for_prerequisites<target>();  // activations are the predecessor's output
    launch_dependents<target>();
    if constexpr (fused) {
      fused_prologue(p, activations, routes, w, lane);
      workgroup_barrier<target>();
    }
    // Unit by unit: compute the current one, then put the one `stages` ahead in flight. weights_in_lds:
    // the next unit's tile-0 activations are fetched before the current one computes, so that
    // their round trip overlaps it.
    tile_acts acts, acts_next;
    if (k < units) load_tile_acts(p, activations, cur, 0, lane, acts);
    for (u32 j = 0; k < units; ++j) {
      if constexpr (weights_in_lds) {
        if (k + waves < units) load_tile_acts(p, activations, next, 0, lane, acts_next);
        bulk_copy_ops<target>::wait(*ready(j), (j / stages) & 1u);
      }
      run_unit(p, activations, cur, stage(j), lane, acts, partial);
      k += waves;
      if (k >= units) break;  // uniform
      if constexpr (weights_in_lds) {
        bulk_copy_ops<target>::release_for_copy();  // stage(j) is refilled below
        cur = next;
        acts = acts_next;
        if (k + waves < units) {
          find_unit(sched, next, k + waves, lane);
          load_unit(p, next, row0, lane, stage(j), ready(j));
        }
      } else {
        find_unit(sched, cur, k, lane);
        load_unit(p, cur, row0, lane, nullptr, nullptr);
        load_tile_acts(p, activations, cur, 0, lane, acts);
      }
    }
    workgroup_barrier<target>();

    if (thread < p.tokens * tile_rows) {
      const u32 t = thread / tile_rows, row = thread % tile_rows;
      float acc = 0.0f;
      NETRA_UNROLL
      for (u32 s = 0; s < moe::route_layout::slots; ++s) {
        const u32 r = t * moe::route_layout::slots + s;
        const float y = sched.key[r] == list::invalid_key ? 0.0f : partial[r][row];  // an invalid id: y = +0.0 (no unit wrote it)
        acc = fma_rn(p.route_weights[r], y, acc);
      }
      p.out[static_cast<u64>(t) * weights::hidden + row0 + row] = static_cast<u16>(pack_bf16x2<target>(acc, 0.0f) & 0xFFFFu);
    }
  }
};

template <class Target, u32 MaxTokens, u32 Input, u32 Staging, u32 WaveSize>
struct kernels_of<contracts::moe_expert_down<Target, MaxTokens, Input, Staging, WaveSize>> {
  using contract = contracts::moe_expert_down<Target, MaxTokens, Input, Staging, WaveSize>;
  using type = type_list<moe_expert_down_kernel<contract>>;
};

}  // namespace netra::kernels
