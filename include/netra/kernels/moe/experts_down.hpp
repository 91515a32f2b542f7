// netra/kernels/moe/experts_down.hpp — the kernel of contracts::moe_expert_down: the down
// projection of every route and the weighted sum over each token's 9 routes, in one launch.
//
// Contract: out[t] = bf16( sum_s weights[t][s] * (W2[ids[t*9+s]] * dequant(act[t*9+s])) ),
// block FP8; act is act_quant's E4M3 + scales (Input 0) or gate_up's BF16 with act_quant
// recomputed here with its exact semantics (Input 1).
// Mapping: grid (128): workgroup x owns output rows [16x, 16x + 16) of every token; 12 waves per
// workgroup (Contract::waves; gfx950: 768 lanes; sm90a: 384 threads). Wave 0 first lists the
// call's units into LDS with gate_up's lister (build_schedule; expert_units.hpp: one round trip
// for the ids, one key match per row of routes): a unit is the routes of one expert at occurrences
// 16 u .. 16 u + 15 in route order (16 columns; more than 16 routes per expert only with duplicate
// ids inside a token); the units of valid experts are kept in route order and dealt round-robin:
// wave w takes units w, w + 12, ... A unit's weights are the tile's 16 rows x all 512 K (4 scale
// blocks, 8 KiB contiguous): Contract::weights_in_lds (sm90a), one bulk copy into the wave's LDS
// stage (two stages per wave in 192 KiB of dynamic LDS: the unit it computes and the next one in
// flight; lane 0 issues, the unit's mbarrier phase completes when the bytes land); gfx950, every
// lane's pieces in VGPRs (2 per block, 16 B each, streaming_early). Per instruction tile a lane
// fetches the E4M3 activation pieces of its column for all 4 blocks at once (Input 0: 16-byte
// global loads of act_quant's output; Input 1: LDS reads of the prologue's output) — on sm90a the
// next unit's tile-0 activations before the current unit computes — then runs the blocks'
// matrix instructions (1 MFMA 16x16x128 / 4 mma.m16n8k32 per n8 tile) and writes
// y = ((q_0 + q_1) + q_2) + q_3, q_b = P_b * (sa_b * sw_b), for every (route, row) to LDS
// partial[9M][16] FP32. Routes with an invalid id get y = +0.0. After a barrier, thread i < 16M
// takes token i / 16, row i % 16: acc = fma(w_s, y_s, acc) for s = 0..8, one BF16 store. No
// atomics, no workspace: the result is independent of scheduling and of the other tokens.
// Weight stream: only the units a wave holds (no L2 prefetch beyond them: asking L2 for each
// wave's next two units measured slower at every M on the H200, M = 16 down 36.4 -> 33.0 us
// without; docs/moe-experts.md).
// Input 1 prologue (after the wait): wave w quantizes routes w, w + 12, ... of the gate_up output
// into LDS (E4M3 [9M][512] + scales [9M][4]) with act_quant's exact operations; lane l owns
// values [V l, V l + V), V = 8 (gfx950) / 16 (sm90a); a group's amax joins its 16 / 8 lanes
// (xor butterfly). Every workgroup recomputes it (deterministic, so exact): worth it only for
// few tokens, hence MaxTokens <= 4 for Input 1.
// M = 1: 128 workgroups x 9 units = 1152 working waves, one unit each (the article's down stage:
// 256 waves). Lane maps: experts_fragment.hpp.
// sm90a programmatic dependent launch: wave 0 reads the ids (strong loads), a wave puts its
// first units' W2 in flight *before* griddepcontrol.wait, so the weight stream overlaps the
// predecessor's tail (streaming_early loads: ptxas keeps them before the wait; it may sink
// read-only-path loads past it). Precondition: ids are complete when the kernel
// preceding this one on the stream starts (in the decode block the router, shared gate included,
// runs before gate_up, which waits before it lets its dependents start). Activations, route
// weights and all global stores come after the wait.
#pragma once
#include "netra/contracts/moe/expert_down.hpp"
#include "netra/dsl/bulk_copy.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/moe/act_quant.hpp"
#include "netra/kernels/moe/expert_units.hpp"
#include "netra/kernels/moe/experts_device.hpp"

namespace netra::kernels {

template <class Contract> struct moe_expert_down_kernel {
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

  /// Fused act_quant (Input 1): wave w quantizes routes w, w + waves, ...; lane l owns values
  /// [V l, V l + V) of the row, V = 512 / wave size; act_quant's exact operations
  /// (kernels/moe/act_quant.hpp); the amax of a 128-value group joins its 128 / V lanes.
  static NETRA_DEVICE void fused_prologue(const params& p, lds_activations& a, u32 routes, u32 w, u32 lane) {
    constexpr u32 V = prologue_values;
    NETRA_NO_UNROLL
    for (u32 r = w; r < routes; r += waves) {
      const u16* g = static_cast<const u16*>(p.act) + static_cast<u64>(r) * weights::gate_up_rows + V * lane;
      const u16* u = g + weights::intermediate;
      u32x4 gv[V / 8], uv[V / 8];
      NETRA_UNROLL
      for (u32 h = 0; h < V / 8; ++h) {
        // the predecessor's output: coherent loads, which stay after the wait
        gv[h] = load_16B<target, cache_policy::streaming_early>(g + 8 * h);
        uv[h] = load_16B<target, cache_policy::streaming_early>(u + 8 * h);
      }
      u32 y[V / 2];
      u32 magnitude = 0;
      NETRA_UNROLL
      for (u32 j = 0; j < V / 2; ++j) {
        const u32 gw = gv[j / 4][static_cast<int>(j % 4)], uw = uv[j / 4][static_cast<int>(j % 4)];
        const float lo = mul_rn(silu_f32(bit_cast<float>(gw << 16)), bit_cast<float>(uw << 16));
        const float hi = mul_rn(silu_f32(bit_cast<float>(gw & 0xFFFF0000u)), bit_cast<float>(uw & 0xFFFF0000u));
        y[j] = pack_bf16x2<target>(lo, hi);
        magnitude = max_of(magnitude, bf16x2_magnitude_max(y[j]));
      }
      NETRA_UNROLL
      for (u32 mask = 1; mask < prologue_group_lanes; mask <<= 1) magnitude = max_of(magnitude, xor_shuffle_u32<target>(magnitude, mask));
      const float scale = act_quant_scale(magnitude);
      const float divisor = act_quant_divisor(magnitude, scale);
      NETRA_UNROLL
      for (u32 j = 0; j < V / 4; ++j) {
        const u32 p0 = pack_e4m3x2<target>(div_rn(bit_cast<float>(y[2 * j] << 16), divisor), div_rn(bit_cast<float>(y[2 * j] & 0xFFFF0000u), divisor));
        const u32 p1 =
            pack_e4m3x2<target>(div_rn(bit_cast<float>(y[2 * j + 1] << 16), divisor), div_rn(bit_cast<float>(y[2 * j + 1] & 0xFFFF0000u), divisor));
        *reinterpret_cast<u32*>(&a.q[r][V * lane + 4 * j]) = p0 | (p1 << 16);
      }
      if (lane % prologue_group_lanes == 0) a.scale[r][lane / prologue_group_lanes] = scale;
    }
  }

  /// The workgroup's unit schedule, in LDS, built once from the route ids (build_schedule)
  /// before any weight load: the call's unit list as gate_up's lister makes it
  /// (kernels/moe/expert_units.hpp; contracts/moe/expert_unit_list.hpp: the routes of one key at
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

  /// The tile's 16 W2 rows of `expert`: 8 KiB, contiguous.
  static NETRA_DEVICE const u8* unit_rows(const params& p, i32 expert, u32 row0) {
    return p.w2 + static_cast<u64>(expert) * weights::w2_expert_bytes + static_cast<u64>(row0) * weights::intermediate;
  }

  /// Puts the unit's weights in flight: into the lane's registers, or (weights_in_lds) into the
  /// wave's LDS stage `staged` by one bulk copy completing on `ready` (lane 0 issues it). Then
  /// every lane loads the unit's 4 block scales.
  static NETRA_DEVICE void load_unit(const params& p, unit& un, u32 row0, u32 lane, u8* staged, lds_copy_barrier* ready) {
    const u8* wrow = unit_rows(p, un.expert, row0);
    if constexpr (weights_in_lds) {
      if (lane == 0) {
        bulk_copy_ops<target>::expect_bytes(*ready, unit_bytes);
        bulk_copy_ops<target>::copy(staged, wrow, unit_bytes, *ready);
      }
    } else {
      NETRA_UNROLL
      for (u32 b = 0; b < blocks; ++b) {
        NETRA_UNROLL
        for (u32 v = 0; v < F::weight_pieces; ++v) {
          const fragment::piece pc = F::weight_piece(lane, v);
          un.wt[b][v] = load_16B<target, cache_policy::streaming_early>(wrow + pc.index * weights::intermediate + b * weights::block + pc.k);
        }
      }
    }
    const float* srow =
        p.s2 + static_cast<u64>(un.expert) * (weights::w2_scale_rows * weights::w2_scale_cols) + (row0 / weights::block) * weights::w2_scale_cols;
    NETRA_UNROLL
    for (u32 b = 0; b < blocks; ++b) un.sw[b] = srow[b];
  }

  /// The activation words of one instruction tile of a unit, all 4 blocks, and their scales.
  struct tile_acts {
    u32 q[blocks][F::act_pieces][4];
    float sa[blocks];
  };

  /// Fetches tile n's activations of unit `un` for the lane's column (zeros for no route):
  /// Input 0, act_quant's output (global, after the wait: coherent loads, which stay there);
  /// Input 1, the prologue's LDS image.
  static NETRA_DEVICE void load_tile_acts(const params& p, const lds_activations& a, const unit& un, u32 n, u32 lane, tile_acts& t) {
    const u32 my_route = moe_experts::select(un.route, n);
    const bool live = my_route != moe_experts::no_route;
    const u32 r = live ? my_route : 0;
    NETRA_UNROLL
    for (u32 b = 0; b < blocks; ++b) {
      NETRA_UNROLL
      for (u32 v = 0; v < F::act_pieces; ++v) {
        const u32 k = b * weights::block + F::act_piece(lane, n, v).k;
        u32x4 wv = u32x4{0, 0, 0, 0};
        if constexpr (fused) {
          if (live) wv = *reinterpret_cast<const u32x4*>(&a.q[r][k]);
        } else {
          if (live) wv = load_16B<target, cache_policy::streaming_early>(static_cast<const u8*>(p.act) + static_cast<u64>(r) * weights::intermediate + k);
        }
        t.q[b][v][0] = wv.x, t.q[b][v][1] = wv.y, t.q[b][v][2] = wv.z, t.q[b][v][3] = wv.w;
      }
      if constexpr (fused) t.sa[b] = live ? a.scale[r][b] : 0.0f;
      else t.sa[b] = live ? p.act_scales[static_cast<u64>(r) * blocks + b] : 0.0f;
    }
  }

  /// Tile n of unit `un`: the blocks' matrix instructions (weights_in_lds: A pieces from the
  /// unit's LDS stage `staged`); q_b = P_b * (sa_b * sw_b), y = ((q_0 + q_1) + q_2) + q_3 ->
  /// partial[route][row].
  static NETRA_DEVICE void run_tile(const unit& un, const u8* staged, u32 lane, u32 n, const tile_acts& t, float (*partial)[tile_rows]) {
    const u32 my_route = moe_experts::select(un.route, n);
    float y[S::d_items];
    auto gather = [&](u32 b, u32x4 (&wb)[F::weight_pieces]) {
      NETRA_UNROLL
      for (u32 v = 0; v < F::weight_pieces; ++v) {
        if constexpr (weights_in_lds) {
          const fragment::piece pc = F::weight_piece(lane, v);
          wb[v] = *reinterpret_cast<const u32x4*>(staged + pc.index * weights::intermediate + b * weights::block + pc.k);
        } else {
          wb[v] = un.wt[b][v];
        }
      }
    };
    fragment::block_scaled_accumulate<F, target, fragment::scale_policy::sum_of_products>(y, lane, n, gather, t.q, [&](u32 b) { return un.sw[b]; }, t.sa);
    NETRA_UNROLL
    for (u32 i = 0; i < S::d_items; ++i) {
      const u32 rr = fragment::from_column_lane<F, target>(my_route, lane, n, i);
      if (rr != moe_experts::no_route) partial[rr][F::d_element(lane, n, i).row] = y[i];
    }
  }

  /// Runs unit `un` whose tile-0 activations `first` the caller fetched; later tiles fetch theirs.
  static NETRA_DEVICE void run_unit(const params& p, const lds_activations& a, const unit& un, const u8* staged, u32 lane, const tile_acts& first,
                                    float (*partial)[tile_rows]) {
    run_tile(un, staged, lane, 0, first, partial);
    NETRA_NO_UNROLL
    for (u32 n = 1; n < F::tiles; ++n) {
      if (n * F::tile_columns >= un.columns) break;  // uniform
      tile_acts t;
      load_tile_acts(p, a, un, n, lane, t);
      run_tile(un, staged, lane, n, t, partial);
    }
  }

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
