// netra/contracts/moe/expert_down.hpp — decode MoE down projection with the weighted sum over
// the 9 routes of each token: block-FP8, BF16 [M, 2048] out.
//
// Semantics (M = tokens in [1, MaxTokens], MaxTokens <= 16, R = 9M routes):
//   inputs  activations, one of (field Input):
//             moe_down_input_e4m3:    act E4M3 [R, 512] + act_scales FP32 [R, 4], row r = route r,
//                                     as written by contracts::moe_act_quant;
//             moe_down_input_gate_up: the gate_up output BF16 [R, 1024] ([gate | up]); act_quant
//                                     is fused into the prologue with contracts::moe_act_quant's
//                                     exact semantics (kernels/moe/act_quant.hpp functions), so
//                                     both inputs give the same bits; MaxTokens <= 4;
//           ids int32 [M, 9], weights FP32 [M, 9]   route metadata (route_layout.hpp), as written
//           W2, S2                                  expert_weights.hpp
//   output  out BF16 [M, 2048]
//   y[r][n]   = sum_{b=0..3} (sa[r][b] * S2[e][n/128][b]) * sum_{k in block b} qa[r][k] * W2[e][n][k],  e = ids[r]
//   out[t][n] = bf16( sum_{s=0..8} weights[t][s] * y[t*9+s][n] )
//   Routes whose id is outside [0, 257) have y = +0.0 (their weight still multiplies it: a NaN
//   weight gives NaN). NaN in activations (act_quant poisons whole groups) propagates to the
//   token's outputs.
// Reduction order (fixed, independent of scheduling and of the other tokens of the batch):
//   per block the matrix instruction's sum; y = ((q_0 + q_1) + q_2) + q_3 with
//   q_b = P_b * (sa_b * sw_b); acc = +0, then acc = fma(weights[t][s], y[t*9+s], acc) for
//   s = 0, 1, ..., 8; out = bf16(acc).
// Comparison policy: expert_weights.hpp (|out - ref| <= 2^-8 |ref| + 2^-15 E + 2^-120 vs the
// FP64 reference of the dequantized math, NaN where the reference is NaN).
//
// Each distinct expert's W2 is read once per call: a route's work is done only by the first
// route with its expert, which serves every route of that expert.
// Field Format: the FP8 format of W2 and of the activations (dsl/fp8_format.hpp), the one the
// target's matrix unit reads (gfx950, sm90a: OCP E4M3FN; gfx942, audit only: E4M3FNUZ, with the
// fused act_quant's scale amax / 240 and NaN bytes 0x80); tensors in the other format are refused.
// gfx942 takes Input 1 only: act_quant writes OCP E4M3FN, which its matrix unit does not read.
#pragma once
#include "netra/contracts/moe/expert_weights.hpp"
#include "netra/contracts/staging.hpp"

namespace netra {

/// Activation input of the down projection (contract field Input).
inline constexpr u32 moe_down_input_e4m3 = 0;     // act_quant's E4M3 [R, 512] + FP32 [R, 4]
inline constexpr u32 moe_down_input_gate_up = 1;  // gate_up's BF16 [R, 1024], act_quant fused

/// What a call to the down projection has (its tensors, runtime/tensor.hpp; all compact):
///   act           Input 0: E4M3 [9 tokens, 512]; Input 1: bfloat16 [9 tokens, 1024] (gate_up's)
///   act_scales    Input 0: float32 [9 tokens, 4]; Input 1: not read (may be NULL)
///   ids int32 [tokens, 9], route_weights float32 [tokens, 9]
///   w2 E4M3 [257, 2048, 512] (the shared expert's slice included), s2 float32 [257, 16, 4]
///   out bfloat16 [tokens, 2048]
/// E4M3: float8_e4m3fn, or uint8 holding E4M3 bytes.
struct moe_down_signature {
  target_id target;
  device_ref device;
  tensor_arg act;
  tensor_arg act_scales;
  tensor_arg ids;
  tensor_arg route_weights;
  tensor_arg w2;
  tensor_arg s2;
  tensor_arg out;
  NETRA_HOST_DEVICE constexpr i64 tokens() const { return ids.rank == 2 ? ids.shape[0] : 0; }
};

namespace contracts {

/// The template arguments an instance is named and spelled by: Staging only when it is not the
/// target's default, so the instances with defaults keep their names.
template <u32 MaxTokens, u32 Input, u32 Staging, bool DefaultStaging> struct moe_down_args {
  static constexpr i64 value[] = {MaxTokens, Input, Staging};
};
template <u32 MaxTokens, u32 Input, u32 Staging> struct moe_down_args<MaxTokens, Input, Staging, true> {
  static constexpr i64 value[] = {MaxTokens, Input};
};

template <class Target, u32 MaxTokens, u32 Input, u32 Staging = default_staging<Target>, u32 WaveSize = Target::wave_size,
          class Format = native_fp8_t<Target>>
struct moe_expert_down {
  static_assert(is_built_target_v<Target> || same_v<Target, gfx942>,
                "netra::contracts::moe_expert_down: field Target is not supported; supported: netra::gfx950, netra::sm90a, "
                "netra::gfx942 (Input 1; built and audited only)");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_expert_down: field WaveSize must equal the target's wave size (gfx950, gfx942: 64; sm90a: 32)");
  static_assert(same_v<Format, native_fp8_t<Target>>,
                "netra::contracts::moe_expert_down: field Format must be the FP8 format the target's matrix unit reads "
                "(gfx950, sm90a: netra::fp8::e4m3fn; gfx942: netra::fp8::e4m3fnuz)");
  static_assert(Input == moe_down_input_gate_up || same_v<Format, fp8::e4m3fn>,
                "netra::contracts::moe_expert_down: field Input must be 1 (gate_up's BF16, act_quant fused) with an E4M3FNUZ "
                "Format: act_quant writes OCP E4M3FN only");
  static_assert(MaxTokens >= 1 && MaxTokens <= 16,
                "netra::contracts::moe_expert_down: field MaxTokens must be in [1, 16] (decode: at most 16 tokens, 144 routes)");
  static_assert(Input == moe_down_input_e4m3 || Input == moe_down_input_gate_up,
                "netra::contracts::moe_expert_down: field Input must be 0 (act_quant's E4M3 + scales) or 1 (gate_up's BF16, "
                "act_quant fused)");
  static_assert(Staging == staging::registers || Staging == staging::lds_bulk_copy,
                "netra::contracts::moe_expert_down: field Staging must be 0 (registers) or 1 (lds_bulk_copy)");
  static_assert(Staging != staging::lds_bulk_copy || Target::has_bulk_copy,
                "netra::contracts::moe_expert_down: field Staging 1 (lds_bulk_copy) needs the target's bulk copy (sm90a); use 0 (registers)");

  static_assert(Input != moe_down_input_gate_up || MaxTokens <= 4,
                "netra::contracts::moe_expert_down: field MaxTokens must be <= 4 with Input 1 (act_quant fused: every workgroup "
                "re-quantizes every route into LDS; beyond 4 tokens the separate act_quant kernel is cheaper)");

  using target = Target;
  using weights = moe::expert_weights;
  using fp8_format = Format;
  static constexpr const char* family = "moe_experts_down";
  static constexpr const char* template_name = "netra::contracts::moe_expert_down";
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 max_routes = MaxTokens * moe::route_layout::slots;
  static constexpr u32 input = Input;
  static constexpr bool fused_act_quant = Input == moe_down_input_gate_up;
  static constexpr u32 wave_size = WaveSize;
  /// Field Staging (contracts/staging.hpp): lds_bulk_copy (the sm90a default), each wave's next
  /// two units staged in LDS by the copy engine (192 KiB of dynamic LDS per workgroup);
  /// registers (the gfx950 default), the current unit in the lanes' registers.
  static constexpr u32 weight_staging = Staging;
  static constexpr bool weights_in_lds = Staging == staging::lds_bulk_copy;
  /// Waves per workgroup: the workgroup's units are dealt round-robin to them. 12; 8 with the
  /// weights in registers on a warp32 target (a lane's mma.sync weight pieces are 64 registers,
  /// which at 12 warps' 168 spilled). The results do not depend on it.
  static constexpr u32 waves = weights_in_lds || WaveSize == 64 ? 12 : 8;
  static constexpr u64 workspace_bytes = 0;
  static constexpr const auto& template_args = moe_down_args<MaxTokens, Input, Staging, Staging == default_staging<Target>>::value;

  static decision admits(const moe_down_signature& s) {
    constexpr i64 slots = moe::route_layout::slots;
    if (s.target != Target::id) return refuse("target", Target::name, s.target);
    if (const decision d = require_tensor(s.ids, {"ids", dtype::i32, 2, {-1, slots}, "[tokens, 9]", layout::compact, 4}, s.device); !d.admitted())
      return d;
    if (s.tokens() < 1 || s.tokens() > MaxTokens) return refuse("tokens", "in [1, MaxTokens]", s.tokens());
    const i64 routes = slots * s.tokens();
    if constexpr (fused_act_quant) {
      if (const decision d = require_tensor(s.act, {"act", dtype::bf16, 2, {routes, weights::gate_up_rows}, "[9 tokens, 1024] (gate_up's output)",
                                                    layout::compact, 16},
                                            s.device);
          !d.admitted())
        return d;
    } else {
      if (const decision d = require_tensor(s.act, {"act", fp8_dtype_v<Format>, 2, {routes, weights::intermediate}, "[9 tokens, 512] (act_quant's output)",
                                                    layout::compact, 16},
                                            s.device);
          !d.admitted())
        return d;
      if (const decision d = require_tensor(s.act_scales, {"act_scales", dtype::f32, 2, {routes, weights::intermediate / weights::block},
                                                           "[9 tokens, 4]", layout::compact, 16},
                                            s.device);
          !d.admitted())
        return d;
    }
    if (const decision d = require_tensor(s.route_weights, {"route_weights", dtype::f32, 2, {s.tokens(), slots}, "[tokens, 9]", layout::compact, 4},
                                          s.device);
        !d.admitted())
      return d;
    if (const decision d = weights::require<Format>(s.w2, "w2", "[257 experts (256 routed + shared), 2048, 512]", s.s2, "s2", "[257, 16, 4]",
                                                    weights::hidden, weights::intermediate, s.device);
        !d.admitted())
      return d;
    return require_tensor(s.out, {"out", dtype::bf16, 2, {s.tokens(), weights::hidden}, "[tokens, 2048]", layout::compact, 4}, s.device);
  }

  /// Resource ceilings the audit enforces (no scratch, no spills on either target).
  static constexpr resource_budget budget() {
    if constexpr (is_amd_v<Target>) {  // gfx950; gfx942: 4 MFMA 16x16x32 per block instead of one 16x16x128
      resource_budget b;
      b.max_vgprs = 128;  // 12 waves of 64 lanes per workgroup: 3 per SIMD
      b.max_agprs = 0;
      b.max_sgprs = 102;
      b.max_lds_bytes = 40960;
      b.max_code_bytes = 32768;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = waves == 12 ? 168 : 255;  // 12 warps: 3 per sub-partition, 16384 / (3 x 32) registers each; 8: 255
      // 192 KiB of staged units (dynamic) + partials, schedule, barriers (+ Input 1's activations)
      // + the 1 KiB the SM reserves per block: within the 227 KiB a workgroup may have
      b.max_lds_bytes = weights_in_lds ? 221184 : 40960;  // registers staging: no staged units
      b.max_code_bytes = 65536;
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::moe_expert_down: no resource budget for this target");
    }
  }
};

/// Decode contracts of the article's model, up to 16 tokens.
template <class Target> using moe_expert_down_decode = moe_expert_down<Target, 16, moe_down_input_e4m3>;
template <class Target> using moe_expert_down_fused_decode = moe_expert_down<Target, 4, moe_down_input_gate_up>;

}  // namespace contracts
}  // namespace netra
