// netra/contracts/moe/grouped_gate_up.hpp — grouped MoE gate_up for mid and large batches, with
// act_quant fused: every route's token row times its expert's W13, then SiLU(gate) * up and the
// E4M3 block quantization of contracts::moe_act_quant.
//
// Semantics (M = tokens in [MinTokens, MaxTokens], R = 9M routes):
//   inputs  plan        moe::grouped_plan_layout<MaxTokens, Tile> as contracts::moe_grouped_plan
//                       wrote it for this call (the grouped routes, qx / sx of the hidden rows)
//           W13, S13    expert_weights.hpp
//   outputs act         E4M3 [R, 512], act_scales FP32 [R, 4] (row r = route r; act_quant's layout)
//           gate_up     BF16 [R, 1024] (optional: null writes nothing)
//   g[r][n] = bf16( acc ), acc = +0, then acc = fma(P_b, sx[t][b] * S13[e][n/128][b], acc) for the
//   scale blocks b = 0 .. 15 in order (P_b: the matrix instruction's sum of the 128 products of the
//   block, exact products, FP32 accumulation), e = ids[r], t = r / 9;
//   act / act_scales = contracts::moe_act_quant of the BF16 row g[r] (bitwise: the same
//   operations, dsl/block_quant.hpp). Routes with an invalid id: g = +0.0, act 0x00, scale +0.0
//   (act_quant of a zero row). A hidden block with NaN / Inf poisons its token (expert_weights.hpp).
// Comparison policy: gate_up rows vs the FP64 reference of the dequantized math as
// expert_weights.hpp (|g - ref| <= 2^-8 |ref| + 2^-15 E + 2^-120); act / act_scales bitwise equal
// to act_quant of g. Every value is computed by the same operations whatever tile, workgroup or
// column it lands in (a D column depends only on its B column), so results are bitwise
// repeatable and do not depend on the other routes of the call.
//
// Mapping: grid (4, max_tiles(R)); workgroup (g, j) serves plan tile j for the intermediate group
// g (gate rows 128 g .. 128 g + 127 and the up rows 512 + 128 g ..: everything one 128-value
// act_quant group needs); workgroups past the call's tile count exit. 8 waves; wave w owns gate
// rows 128 g + 16 w .. + 15 and the up rows 512 + 128 g + 16 w ..; the tile's activations are
// staged once in LDS. Each W13 byte of an expert is read once per tile of that expert.
#pragma once
#include "netra/contracts/moe/grouped_plan.hpp"

namespace netra {

/// What a call to the grouped gate_up has; built by the caller from its tensors.
struct moe_grouped_gate_up_signature : moe_grouped_stage_signature {
  tensor_arg w13, s13;  // expert_weights.hpp
  tensor_arg gate_up;   // optional (no tensor: rank -1): bfloat16 [9M, 1024]
};

namespace contracts {

/// How a grouped gate_up's weights wait between their load and their products (field WeightStages):
/// 0: in registers, one block ahead; S in [2, 4]: in an LDS ring of S blocks that each thread fills
/// with asynchronous 16-byte copies (dsl/async_copy.hpp), S - 1 blocks ahead, no registers held.
/// Field Trim: 0, a 16-column chunk that holds a route runs all its instruction tiles; 1, only
/// the instruction tiles (the shape's n columns: 8 on sm90a, 16 on gfx950) that hold a route. A
/// stored column gets the same operations either way (a D column depends only on its B column).
/// Each field is spelled only when it or a later one is not 0, so earlier instances keep their names.
template <u32 MinTokens, u32 MaxTokens, u32 Tile, u32 WeightStages, u32 Trim> struct moe_grouped_gate_up_args {
  static constexpr i64 value[] = {MinTokens, MaxTokens, Tile, WeightStages, Trim};
};
template <u32 MinTokens, u32 MaxTokens, u32 Tile, u32 WeightStages> struct moe_grouped_gate_up_args<MinTokens, MaxTokens, Tile, WeightStages, 0> {
  static constexpr i64 value[] = {MinTokens, MaxTokens, Tile, WeightStages};
};
template <u32 MinTokens, u32 MaxTokens, u32 Tile> struct moe_grouped_gate_up_args<MinTokens, MaxTokens, Tile, 0, 0> {
  static constexpr i64 value[] = {MinTokens, MaxTokens, Tile};
};

template <class Target, u32 MinTokens, u32 MaxTokens, u32 Tile, u32 WeightStages = 0, u32 Trim = 0, u32 WaveSize = Target::wave_size>
struct moe_grouped_gate_up {
  static_assert(is_built_target_v<Target>,
                "netra::contracts::moe_grouped_gate_up: field Target is not supported; supported: netra::gfx950, netra::sm90a");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_grouped_gate_up: field WaveSize must equal the target's wave size (gfx950: 64; sm90a: 32)");
  static_assert(MinTokens >= 1 && MinTokens <= MaxTokens && MaxTokens <= 768,
                "netra::contracts::moe_grouped_gate_up: fields MinTokens, MaxTokens must satisfy 1 <= MinTokens <= MaxTokens <= 768");
  static_assert(Tile == 16 || Tile == 32 || Tile == 64, "netra::contracts::moe_grouped_gate_up: field Tile must be 16, 32 or 64");
  static_assert(WeightStages == 0 || (WeightStages >= 2 && WeightStages <= 4),
                "netra::contracts::moe_grouped_gate_up: field WeightStages must be 0 (registers) or in [2, 4] (an LDS ring)");
  static_assert(Trim == 0 || Trim == 1, "netra::contracts::moe_grouped_gate_up: field Trim must be 0 (whole chunks) or 1 (the instruction tiles holding a route)");

  using target = Target;
  using weights = moe::expert_weights;
  using layout = moe::grouped_plan_layout<MaxTokens, Tile>;
  static constexpr const char* family = "moe_grouped_gate_up";
  static constexpr const char* template_name = "netra::contracts::moe_grouped_gate_up";
  static constexpr u32 min_tokens = MinTokens;
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 tile = Tile;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u32 waves = 8;
  static constexpr u64 workspace_bytes = 0;
  static constexpr u32 weight_stages = WeightStages;
  static constexpr bool trim = Trim == 1;
  static constexpr const auto& template_args = moe_grouped_gate_up_args<MinTokens, MaxTokens, Tile, WeightStages, Trim>::value;
  /// LDS of the tile's activations: Tile columns of 2048 E4M3 bytes, each padded by 64 bytes.
  static constexpr u32 column_stride = weights::hidden + 64;
  static constexpr u32 staged_bytes = Tile * column_stride;
  /// The weight ring (WeightStages > 0): per stage, every thread's 2 x 16-row pieces of one block
  /// (2 x 16 rows x 128 K of each of the 8 waves).
  static constexpr u32 ring_stage_bytes = 2 * 16 * 128 * waves;
  static constexpr u32 ring_bytes = WeightStages * ring_stage_bytes;

  static decision admits(const moe_grouped_gate_up_signature& s) {
    if (const decision d = admits_grouped_stage<Target, MinTokens, MaxTokens, layout>(s); !d.admitted()) return d;
    if (const decision d = weights::require(s.w13, "w13", "[257 experts (256 routed + shared), 1024, 2048]", s.s13, "s13", "[257, 8, 16]",
                                            weights::gate_up_rows, weights::hidden, s.device);
        !d.admitted())
      return d;
    if (s.gate_up.rank < 0) return admit();
    return require_tensor(s.gate_up, {"gate_up", dtype::bf16, 2, {moe::route_layout::slots * s.tokens, weights::gate_up_rows}, "[9 tokens, 1024]",
                                      netra::layout::compact, 16},
                          s.device);
  }

  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      resource_budget b;
      b.max_vgprs = 128;  // 8 waves of 64 per workgroup
      b.max_agprs = 0;
      b.max_sgprs = 102;
      b.max_lds_bytes = 163840;  // the staged activations (Tile x 2112 B), the BF16 group, the scales
      b.max_code_bytes = 32768;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 224;  // 256 threads, one workgroup per SM: two blocks' weight pieces of 32 rows in flight per lane
      b.max_lds_bytes = 232448;
      b.max_code_bytes = 65536;
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::moe_grouped_gate_up: no resource budget for this target");
    }
  }
};

}  // namespace contracts
}  // namespace netra
