// netra/contracts/moe/grouped_plan.hpp — the plan of a grouped (mid / large batch) MoE call: the
// route stream grouped by expert, cut into tiles of at most Tile routes, and the hidden rows
// quantized once for gate_up. Written by contracts::moe_grouped_plan, read by
// contracts::moe_grouped_gate_up and contracts::moe_grouped_down (which must name the same
// MaxTokens and Tile).
//
// Input: ids int32 [M, 9] (route_layout.hpp, as the router and the shared gate wrote it; nothing
// re-sorts it), hidden BF16 [M, 2048]. Keys as expert_unit_list.hpp: a valid id is its own key,
// every other id the key 257 (invalid_key). The plan's order is the stable counting order: keys
// ascending, and inside a key the routes in route order. A tile is up to Tile consecutive routes
// of one key: for each key with c routes, tiles j = 0 .. ceil(c / Tile) - 1 hold positions
// [offset + j Tile, offset + min(c, (j + 1) Tile)); tiles are numbered key by key, key ascending.
// At most floor(R / Tile) + min(258, R) tiles for R = 9M routes (max_tiles), of which at most
// floor(R / Tile) + min(257, R) are experts' (max_expert_tiles: the invalid key's tiles come last).
//
// Layout (one buffer, caller-owned, `bytes` long; every part 16-byte aligned):
//   header  u32 [32]                 word 0: the call's tile count; word 1: its tokens; word 2: Tile
//   tiles   u32 [max_tiles][4]       key, first position, routes (1 .. Tile), 0
//   routes  u32 [9 MaxTokens]        position -> route
//   qx      E4M3 [MaxTokens, 2048]   moe::hidden_block_quant of hidden row t (expert_weights.hpp)
//   sx      FP32 [MaxTokens, 16]     its scales
// Entries past the call's tiles / routes / tokens are unspecified. Comparison policy: bitwise (the
// plan is integers; qx / sx are expert_weights.hpp's quantization, the decode gate_up's bits).
#pragma once
#include "netra/contracts/moe/expert_unit_list.hpp"

namespace netra::moe {

template <u32 MaxTokens, u32 Tile> struct grouped_plan_layout {
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 tile = Tile;
  static constexpr u32 max_routes = MaxTokens * route_layout::slots;
  static constexpr u32 keys = expert_unit_list::keys;  // 258: 257 experts + the invalid key
  static constexpr u32 invalid_key = expert_unit_list::invalid_key;
  NETRA_HOST_DEVICE static constexpr u32 max_tiles(u32 routes) { return routes / Tile + (routes < keys ? routes : keys); }
  /// Tiles of valid keys (they come first: the invalid key is the last): at most floor(R / Tile) + min(257, R).
  NETRA_HOST_DEVICE static constexpr u32 max_expert_tiles(u32 routes) { return routes / Tile + (routes < keys - 1 ? routes : keys - 1); }
  static constexpr u32 header_words = 32;
  static constexpr u32 count_word = 0, tokens_word = 1, tile_word = 2;
  static constexpr u32 tile_words = 4;
  static constexpr u64 tiles_offset = 4ull * header_words;  // bytes
  static constexpr u64 routes_offset = tiles_offset + 16ull * max_tiles(max_routes);
  static constexpr u64 qx_offset = (routes_offset + 4ull * max_routes + 15) / 16 * 16;
  static constexpr u64 sx_offset = qx_offset + 2048ull * MaxTokens;
  static constexpr u64 bytes = sx_offset + 64ull * MaxTokens;
};

}  // namespace netra::moe

namespace netra {

/// What a call to the plan has; built by the caller from its tensors.
struct moe_grouped_plan_signature {
  target_id target;
  device_ref device;
  tensor_arg hidden;  // bfloat16 [M, 2048]
  tensor_arg ids;     // int32 [M, 9]
  const void* plan = nullptr;  // written
  u64 plan_bytes = 0;
  NETRA_HOST_DEVICE constexpr i64 tokens() const { return hidden.rank == 2 ? hidden.shape[0] : 0; }
};

/// The fields every grouped expert stage after the plan has (gate_up and down signatures extend
/// it): the call's tokens, the plan, and the activations gate_up writes and down reads.
struct moe_grouped_stage_signature {
  target_id target;
  device_ref device;
  i64 tokens = 0;
  i64 plan_tile = 0;  // the Tile the plan was made with
  const void* plan = nullptr;
  u64 plan_bytes = 0;
  tensor_arg act;         // E4M3 [9M, 512]
  tensor_arg act_scales;  // float32 [9M, 4]
};

namespace contracts {

/// The checks every grouped stage after the plan makes first: its target, the element types, the
/// token range, the model's shape and the plan (its Tile, pointer and size).
template <class Target, u32 MinTokens, u32 MaxTokens, class Layout> decision admits_grouped_stage(const moe_grouped_stage_signature& s) {
  using weights = moe::expert_weights;
  const i64 routes = moe::route_layout::slots * s.tokens;
  if (s.target != Target::id) return refuse("target", Target::name, static_cast<i64>(s.target));
  if (s.tokens < MinTokens || s.tokens > MaxTokens) return refuse("tokens", "in [MinTokens, MaxTokens]", s.tokens);
  if (s.plan_tile != Layout::tile) return refuse("plan tile", "== the contract's Tile", s.plan_tile);
  if (const decision d = require_pointer<16>("plan", s.plan); !d.admitted()) return d;
  if (s.plan_bytes < Layout::bytes) return refuse("plan_bytes", ">= the plan layout's bytes", static_cast<i64>(s.plan_bytes));
  if (const decision d = require_tensor(s.act, {"act", dtype::e4m3, 2, {routes, weights::intermediate}, "[9 tokens, 512]", netra::layout::compact, 16}, s.device);
      !d.admitted())
    return d;
  return require_tensor(s.act_scales, {"act_scales", dtype::f32, 2, {routes, weights::w2_scale_cols}, "[9 tokens, 4]", netra::layout::compact, 16}, s.device);
}

template <class Target, u32 MaxTokens, u32 Tile, u32 WaveSize = Target::wave_size> struct moe_grouped_plan {
  static_assert(is_built_target_v<Target>,
                "netra::contracts::moe_grouped_plan: field Target is not supported; supported: netra::gfx950, netra::sm90a");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_grouped_plan: field WaveSize must equal the target's wave size (gfx950: 64; sm90a: 32)");
  static_assert(MaxTokens >= 1 && MaxTokens <= 768,
                "netra::contracts::moe_grouped_plan: field MaxTokens must be in [1, 768] (6912 routes: the plan's LDS)");
  static_assert(Tile == 16 || Tile == 32 || Tile == 64, "netra::contracts::moe_grouped_plan: field Tile must be 16, 32 or 64");

  using target = Target;
  using layout = moe::grouped_plan_layout<MaxTokens, Tile>;
  static constexpr const char* family = "moe_grouped_plan";
  static constexpr const char* template_name = "netra::contracts::moe_grouped_plan";
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 tile = Tile;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u64 workspace_bytes = 0;
  static constexpr i64 template_args[] = {MaxTokens, Tile};

  static decision admits(const moe_grouped_plan_signature& s) {
    if (s.target != Target::id) return refuse("target", Target::name, static_cast<i64>(s.target));
    if (const decision d = require_tensor(s.hidden, {"hidden", dtype::bf16, 2, {-1, moe::expert_weights::hidden}, "[tokens, 2048]", netra::layout::compact, 16},
                                          s.device);
        !d.admitted())
      return d;
    if (s.tokens() < 1 || s.tokens() > MaxTokens) return refuse("tokens", "in [1, MaxTokens]", s.tokens());
    if (const decision d = require_tensor(s.ids, {"ids", dtype::i32, 2, {s.tokens(), moe::route_layout::slots}, "[tokens, 9]", netra::layout::compact, 4},
                                          s.device);
        !d.admitted())
      return d;
    if (const decision d = require_pointer<16>("plan", s.plan); !d.admitted()) return d;
    if (s.plan_bytes < layout::bytes) return refuse("plan_bytes", ">= the plan layout's bytes", static_cast<i64>(s.plan_bytes));
    return admit();
  }

  /// One kernel: workgroup 0 groups the routes (1024 threads), the others quantize 4 tokens each.
  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      resource_budget b;
      b.max_vgprs = 64;  // 16 waves of 64 per workgroup
      b.max_agprs = 0;
      b.max_sgprs = 102;
      b.max_lds_bytes = 40960;  // the ids as 16-bit keys, per-wave key counts, the key scan
      b.max_code_bytes = 16384;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 64;  // 1024 threads per workgroup
      b.max_lds_bytes = 49152;
      b.max_code_bytes = 24576;
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::moe_grouped_plan: no resource budget for this target");
    }
  }
};

}  // namespace contracts
}  // namespace netra
