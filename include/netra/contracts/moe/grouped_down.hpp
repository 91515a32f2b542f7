// netra/contracts/moe/grouped_down.hpp — grouped MoE down projection for mid and large batches:
// each route's activations times its expert's W2, per route (the weighted route sum is
// contracts::moe_grouped_reduce, the next launch).
//
// Semantics (M = tokens in [MinTokens, MaxTokens], R = 9M routes):
//   inputs  plan             moe::grouped_plan_layout<MaxTokens, Tile> of this call
//           act, act_scales  E4M3 [R, 512] + FP32 [R, 4] (act_quant's layout, row r = route r)
//           W2, S2           expert_weights.hpp
//   output  partials         caller-owned, `partials_bytes` (persistent: the reducer reads it)
//   q_b[r][n] = P_b * (sa[r][b] * S2[e][n/128][b]) for the 4 scale blocks b of K (P_b the matrix
//   instruction's sum of the block's 128 exact products, FP32 accumulation; one FP32 product each),
//   e = ids[r] (the plan's key). Field KParts splits K:
//     KParts 1: y[r][n] = ((q_0 + q_1) + q_2) + q_3, FP32 [R_max, 2048] at partials
//               (the decode down's y, expert_down.hpp);
//     KParts 2: h_p[r][n] = f16(q_2p + q_2p+1) for p = 0, 1 (RNE, overflow to ±Inf, subnormals
//               kept), FP16 [R_max, 2048, 2] at partials (the two parts of a value adjacent);
//               the reducer's y = f32(h_0) + f32(h_1).
//   with R_max = 9 MaxTokens. Rows of routes with an invalid id are not written.
// Comparison policy: through the reducer's output (grouped_reduce.hpp). Each value is computed by
// the same operations wherever its route lands in the plan's tiles: bitwise repeatable.
//
// Mapping: grid (RowTiles x KParts, max_expert_tiles(R)); workgroup (x, j): plan tile j, K part
// p = x % KParts, output rows [2048 / RowTiles * (x / KParts), + 2048 / RowTiles) in passes of
// 128 rows (8 waves of 16 rows). The tile's activations (its K part) are staged once in LDS; each
// W2 byte of an expert is read once per tile of that expert.
// Field WeightStages: 0, the wave's weight pieces of a whole 128-row pass in registers, the next
// pass's in flight; S in [2, 4], through a per-thread LDS ring of S scale blocks (asynchronous
// 16-byte copies, S - 1 blocks ahead, no weight registers held), so that several workgroups share
// an SM. The same operations per value either way. Field Trim: 0, a 16-column chunk holding a
// route runs all its instruction tiles; 1, only the instruction tiles (8 columns on sm90a, 16 on
// gfx950) holding a route: the same operations for every stored column. Each field is spelled
// only when it or a later one is not 0 (earlier instances keep their names).
#pragma once
#include "netra/contracts/moe/grouped_plan.hpp"

namespace netra {

/// What a call to the grouped down projection has; built by the caller from its tensors.
struct moe_grouped_down_signature : moe_grouped_stage_signature {
  tensor_arg w2, s2;               // expert_weights.hpp
  const void* partials = nullptr;  // written
  u64 partials_bytes = 0;
};

namespace contracts {

template <u32 MinTokens, u32 MaxTokens, u32 Tile, u32 KParts, u32 RowTiles, u32 WeightStages, u32 Trim> struct moe_grouped_down_args {
  static constexpr i64 value[] = {MinTokens, MaxTokens, Tile, KParts, RowTiles, WeightStages, Trim};
};
template <u32 MinTokens, u32 MaxTokens, u32 Tile, u32 KParts, u32 RowTiles, u32 WeightStages>
struct moe_grouped_down_args<MinTokens, MaxTokens, Tile, KParts, RowTiles, WeightStages, 0> {
  static constexpr i64 value[] = {MinTokens, MaxTokens, Tile, KParts, RowTiles, WeightStages};
};
template <u32 MinTokens, u32 MaxTokens, u32 Tile, u32 KParts, u32 RowTiles> struct moe_grouped_down_args<MinTokens, MaxTokens, Tile, KParts, RowTiles, 0, 0> {
  static constexpr i64 value[] = {MinTokens, MaxTokens, Tile, KParts, RowTiles};
};

template <class Target, u32 MinTokens, u32 MaxTokens, u32 Tile, u32 KParts, u32 RowTiles, u32 WeightStages = 0, u32 Trim = 0, u32 WaveSize = Target::wave_size>
struct moe_grouped_down {
  static_assert(is_built_target_v<Target>,
                "netra::contracts::moe_grouped_down: field Target is not supported; supported: netra::gfx950, netra::sm90a");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_grouped_down: field WaveSize must equal the target's wave size (gfx950: 64; sm90a: 32)");
  static_assert(MinTokens >= 1 && MinTokens <= MaxTokens && MaxTokens <= 768,
                "netra::contracts::moe_grouped_down: fields MinTokens, MaxTokens must satisfy 1 <= MinTokens <= MaxTokens <= 768");
  static_assert(Tile == 16 || Tile == 32 || Tile == 64, "netra::contracts::moe_grouped_down: field Tile must be 16, 32 or 64");
  static_assert(KParts == 1 || KParts == 2,
                "netra::contracts::moe_grouped_down: field KParts must be 1 (FP32 y) or 2 (two FP16 K partials)");
  static_assert(RowTiles == 1 || RowTiles == 2 || RowTiles == 4 || RowTiles == 8 || RowTiles == 16,
                "netra::contracts::moe_grouped_down: field RowTiles must be 1, 2, 4, 8 or 16 (whole 128-row passes)");
  static_assert(WeightStages == 0 || (WeightStages >= 2 && WeightStages <= 4),
                "netra::contracts::moe_grouped_down: field WeightStages must be 0 (registers) or in [2, 4] (an LDS ring)");
  static_assert(Trim == 0 || Trim == 1, "netra::contracts::moe_grouped_down: field Trim must be 0 (whole chunks) or 1 (the instruction tiles holding a route)");

  using target = Target;
  using weights = moe::expert_weights;
  using layout = moe::grouped_plan_layout<MaxTokens, Tile>;
  static constexpr const char* family = "moe_grouped_down";
  static constexpr const char* template_name = "netra::contracts::moe_grouped_down";
  static constexpr u32 min_tokens = MinTokens;
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 tile = Tile;
  static constexpr u32 k_parts = KParts;
  static constexpr u32 row_tiles = RowTiles;
  static constexpr u32 weight_stages = WeightStages;
  static constexpr bool trim = Trim == 1;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u32 waves = 8;
  static constexpr u32 max_routes = layout::max_routes;
  /// Bytes of the partials: FP32 [R_max, 2048] (KParts 1) or FP16 [R_max, 2048, 2] (KParts 2).
  static constexpr u64 partials_bytes = 4ull * max_routes * weights::hidden;
  static constexpr u64 workspace_bytes = 0;
  static constexpr const auto& template_args = moe_grouped_down_args<MinTokens, MaxTokens, Tile, KParts, RowTiles, WeightStages, Trim>::value;
  /// LDS of the tile's activations: Tile columns of the part's K bytes, each padded by 64 bytes.
  static constexpr u32 part_k = weights::intermediate / KParts;
  static constexpr u32 column_stride = part_k + 64;
  /// The weight ring (WeightStages > 0): per stage, every thread's pieces of one scale block (16
  /// rows x 128 K of each of the 8 waves).
  static constexpr u32 ring_stage_bytes = 16 * 128 * waves;
  static constexpr u32 ring_bytes = WeightStages * ring_stage_bytes;

  static decision admits(const moe_grouped_down_signature& s) {
    if (const decision d = admits_grouped_stage<Target, MinTokens, MaxTokens, layout>(s); !d.admitted()) return d;
    if (const decision d = weights::require(s.w2, "w2", "[257 experts (256 routed + shared), 2048, 512]", s.s2, "s2", "[257, 16, 4]", weights::hidden,
                                            weights::intermediate, s.device);
        !d.admitted())
      return d;
    if (const decision d = require_pointer<16>("partials", s.partials); !d.admitted()) return d;
    if (s.partials_bytes < partials_bytes) return refuse("partials_bytes", ">= the contract's partials_bytes", static_cast<i64>(s.partials_bytes));
    return admit();
  }

  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      resource_budget b;
      b.max_vgprs = 128;
      b.max_agprs = 0;
      b.max_sgprs = 102;
      b.max_lds_bytes = 65536;  // the staged activations (Tile x (512 / KParts + 64) B) and scales
      b.max_code_bytes = 32768;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      // one pass per workgroup; or several, the next pass's weights in flight; or the ring, several workgroups per SM
      b.max_registers = WeightStages > 0 ? 128 : RowTiles == 16 ? 168 : 255;
      b.max_lds_bytes = 65536 + ring_bytes;
      b.max_code_bytes = 65536;
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::moe_grouped_down: no resource budget for this target");
    }
  }
};

}  // namespace contracts
}  // namespace netra
