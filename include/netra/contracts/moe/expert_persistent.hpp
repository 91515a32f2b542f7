// netra/contracts/moe/expert_persistent.hpp — the decode MoE experts (gate_up -> act_quant ->
// down with the weighted route sum) of 1..MaxTokens tokens (MaxTokens <= 16) in ONE persistent
// launch.
//
// Semantics: exactly the chain's (the three decode contracts' outputs, the same bits):
//   gate_up    BF16 [9M, 1024]  = contracts::moe_expert_gate_up's out   (written)
//   act        E4M3 [9M, 512]   = contracts::moe_act_quant of gate_up   (written)
//   act_scales FP32 [9M, 4]                                             (written)
//   out        BF16 [M, 2048]   = contracts::moe_expert_down's out of act (written)
// Inputs as the chain's: hidden BF16 [M, 2048], ids int32 [M, 9] and route_weights FP32 [M, 9]
// (the router's output, complete when the predecessor of this launch started or ended), the
// expert weights (expert_weights.hpp). Every output element is computed by the operations of the
// contract that defines it, in its fixed order (gate_up: blocks ascending, wave partials in wave
// order; act_quant: the group quantizer; down: ((q0 + q1) + q2) + q3 per route, the route sum
// fma in slot order, y = +0.0 for an invalid id), so the result equals the chain's bit for bit
// and does not depend on scheduling.
// Comparison policy: the chain's (bitwise against it; the GEMMs' bound of expert_weights.hpp
// against the FP64 reference).
//
// Work items, claimed in increasing order from one counter (one atomic per item): first the
// gate_up items (unit j, tile x) for every unit of the call (expert_unit_list.hpp numbering),
// then the down items (valid unit k, tile group g: 4 row tiles of 16 W2 rows, one per wave). A
// gate_up item, when done, counts an arrival on its unit; the 64th arrival's workgroup runs
// act_quant over the unit's routes and counts one more (the unit is ready at 65). A down item
// puts its weights in flight, then waits until its unit is ready. Every item a waiting item
// depends on was claimed earlier by a running workgroup that never waits on a later one, so no
// workgroup waits forever whatever the grid's residency. A down item's per-route partials go to
// the workspace; the 4 * (valid units)-th arrival on a tile group sums its rows.
// Workspace (the handle's, zero-filled before the first call, left zero by every call: the last
// workgroup to finish zeroes every counter): words claims, finished, one arrival counter per
// unit, one per tile group; then the partials FP32 [128 tiles][9 MaxTokens routes][16 rows].
#pragma once
#include "netra/contracts/moe/act_quant.hpp"
#include "netra/contracts/moe/expert_down.hpp"
#include "netra/contracts/moe/expert_gate_up.hpp"

namespace netra {

/// What a persistent experts call has (its tensors, all compact; workspace: the handle's).
struct moe_persistent_signature {
  target_id target;
  device_ref device;
  tensor_arg hidden, ids, route_weights, w13, s13, w2, s2;
  tensor_arg gate_up, act, act_scales, out;  // written
  const void* workspace = nullptr;
  u64 workspace_bytes = 0;
  NETRA_HOST_DEVICE constexpr i64 tokens() const { return hidden.rank == 2 ? hidden.shape[0] : 0; }
};

namespace moe {
/// The persistent kernel's workspace words (see the file comment).
template <u32 MaxRoutes> struct persistent_workspace {
  static constexpr u32 claims_word = 0, finished_word = 1;
  static constexpr u32 unit_word0 = 32;                       // arrivals of unit j: word 32 + j
  static constexpr u32 group_word0 = unit_word0 + MaxRoutes;  // arrivals of tile group g
  static constexpr u32 tile_groups = 32, tiles = 128, rows = 16;
  static constexpr u32 counter_words = group_word0 + tile_groups;
  static constexpr u64 partials_offset = 4096;  // bytes
  static_assert(4ull * counter_words <= partials_offset, "netra::moe::persistent_workspace: counters fit before the partials");
  static constexpr u64 bytes = partials_offset + 4ull * tiles * MaxRoutes * rows;
};
}  // namespace moe

namespace contracts {

template <class Target, u32 MaxTokens = 16, u32 WaveSize = Target::wave_size> struct moe_expert_persistent {
  static_assert(is_built_target_v<Target>,
                "netra::contracts::moe_expert_persistent: field Target is not supported; supported: netra::gfx950, netra::sm90a");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_expert_persistent: field WaveSize must equal the target's wave size (gfx950: 64; sm90a: 32)");
  static_assert(MaxTokens >= 1 && MaxTokens <= 16, "netra::contracts::moe_expert_persistent: field MaxTokens must be in [1, 16]");

  using target = Target;
  using weights = moe::expert_weights;
  /// The stage contracts whose operations it runs and whose admission it applies, each with the
  /// target's default staging (sm90a: gate_up's 16 W13 rows into LDS by one bulk copy; a down
  /// item's 4 units of 8 KiB, one per wave, into the same buffer; gfx950: registers), act_quant
  /// with workgroup_size / 64 rows a pass.
  using gate_up = moe_expert_gate_up<Target, MaxTokens>;
  using down = moe_expert_down<Target, MaxTokens, moe_down_input_e4m3>;
  static constexpr u32 workgroup_size = gate_up::k_split * WaveSize;
  using act_quant = moe_act_quant<Target, 9 * MaxTokens, 1, workgroup_size / 64>;
  static constexpr const char* family = "moe_experts_persistent";
  static constexpr const char* template_name = "netra::contracts::moe_expert_persistent";
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 max_routes = MaxTokens * moe::route_layout::slots;
  static constexpr u32 wave_size = WaveSize;
  /// 2 workgroups per SM / CU (sm90a: 244 registers, gate_up's and down's pieces side by side;
  /// at 3 per SM ptxas spills); the grid: every workgroup resident, 264 = 132 SMs x 2 (sm90a),
  /// 512 = 256 CUs x 2 (gfx950). Completion does not depend on it (see the file comment).
  static constexpr u32 min_workgroups_per_processor = 2;
  static constexpr u32 grid = same_v<Target, sm90a> ? 264 : 512;
  using workspace = moe::persistent_workspace<max_routes>;
  static constexpr u64 workspace_bytes = workspace::bytes;
  static constexpr i64 template_args[] = {MaxTokens};

  /// Each tensor as the stage contract that reads or writes it admits it (gate_up: hidden, ids,
  /// w13, s13, gate_up; act_quant: gate_up, act, act_scales; down: act, act_scales, ids,
  /// route_weights, w2, s2, out), then the workspace.
  static decision admits(const moe_persistent_signature& s) {
    if (s.target != Target::id) return refuse("target", Target::name, s.target);
    if (const decision d = gate_up::admits({s.target, s.device, s.hidden, s.ids, s.w13, s.s13, s.gate_up}); !d.admitted()) return d;
    if (const decision d = act_quant::admits({s.target, s.device, s.gate_up, s.act, s.act_scales}); !d.admitted()) return d;
    if (const decision d = down::admits({s.target, s.device, s.act, s.act_scales, s.ids, s.route_weights, s.w2, s.s2, s.out}); !d.admitted())
      return d;
    return require_workspace(s, workspace_bytes);
  }

  /// Resource ceilings the audit enforces (no scratch, no spills on either target).
  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      resource_budget b;
      b.max_vgprs = 256;  // 2 workgroups of 4 waves per CU: 2 waves per SIMD (built: 162)
      b.max_agprs = 0;
      b.max_sgprs = 102;
      b.max_lds_bytes = 12288;  // gate_up's wave partials + the unit list
      b.max_code_bytes = 49152;
      return b;
    } else {
      resource_budget b;
      b.max_registers = 65536 / (min_workgroups_per_processor * workgroup_size) / 8 * 8;  // 256
      b.max_lds_bytes = 45056;  // gate_up's 36,944 (32 KiB staged rows) + the unit list (5.3 KiB) + the SM's 1 KiB per block
      b.max_code_bytes = 98304;
      return b;
    }
  }
};

/// The decode contract of the article's model: up to 16 tokens.
template <class Target> using moe_expert_persistent_decode = moe_expert_persistent<Target, 16>;

}  // namespace contracts
}  // namespace netra
