// netra/contracts/moe/grouped_reduce.hpp — the weighted route sum after contracts::moe_grouped_down:
// out[t] = the 9 routes' down rows of token t, weighted, in a fixed order, BF16.
//
// Semantics (M = tokens in [MinTokens, MaxTokens]; partials as grouped_down.hpp wrote them with
// the same MaxTokens and KParts):
//   y[r][n] = KParts 1: the FP32 value; KParts 2: f32(h_0[r][n]) + f32(h_1[r][n]) (one FP32 add)
//             and +0.0 for a route whose id is outside [0, 257) (its partials are not read)
//   acc = +0, then acc = fma(weights[t][s], y[t*9+s][n], acc) for s = 0, 1, .., 8; out = bf16(acc)
//   (the decode down's order, expert_down.hpp; a NaN weight gives NaN).
// Comparison policy, vs the FP64 reference of the dequantized math (E as expert_weights.hpp):
//   KParts 1: |out - ref| <= 2^-8 |ref| + 2^-15 E + 2^-120 (expert_weights.hpp's, same derivation).
//   KParts 2: each FP16 rounding adds at most 2^-11 |h| (|h| <= the part's share of E) or 2^-25
//   (subnormal spacing / 2), so with W = sum over valid routes of |weights[t][s]|:
//       |out - ref| <= 2^-8 |ref| + 2^-10 E + 2^-23 W + 2^-120
//   (2^-10 > (1 + 2^-8)(2^-11 + 2^-15), 2^-23 > (1 + 2^-8) 2 x 2^-25), provided every partial's
//   FP64 value is below 65520 in magnitude (the FP16 range after rounding); a partial beyond it is
//   ±Inf and its token's column is ±Inf or NaN.
// Mapping: grid (16, M); workgroup (x, t): 64 threads, thread i owns columns 128 x + 2 i, + 1 of
// token t: reads the 9 routes' ids and weights, then their partials, in route order. No LDS.
#pragma once
#include "netra/contracts/moe/expert_weights.hpp"

namespace netra {

struct moe_grouped_reduce_signature {
  target_id target;
  device_ref device;
  const void* partials = nullptr;
  u64 partials_bytes = 0;
  tensor_arg ids;            // int32 [M, 9]
  tensor_arg route_weights;  // float32 [M, 9]
  tensor_arg out;            // bfloat16 [M, 2048] (written)
  NETRA_HOST_DEVICE constexpr i64 tokens() const { return ids.rank == 2 ? ids.shape[0] : 0; }
};

namespace contracts {

template <class Target, u32 MinTokens, u32 MaxTokens, u32 KParts, u32 WaveSize = Target::wave_size> struct moe_grouped_reduce {
  static_assert(is_built_target_v<Target>,
                "netra::contracts::moe_grouped_reduce: field Target is not supported; supported: netra::gfx950, netra::sm90a");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_grouped_reduce: field WaveSize must equal the target's wave size (gfx950: 64; sm90a: 32)");
  static_assert(MinTokens >= 1 && MinTokens <= MaxTokens && MaxTokens <= 768,
                "netra::contracts::moe_grouped_reduce: fields MinTokens, MaxTokens must satisfy 1 <= MinTokens <= MaxTokens <= 768");
  static_assert(KParts == 1 || KParts == 2, "netra::contracts::moe_grouped_reduce: field KParts must be 1 or 2");

  using target = Target;
  using weights = moe::expert_weights;
  static constexpr const char* family = "moe_grouped_reduce";
  static constexpr const char* template_name = "netra::contracts::moe_grouped_reduce";
  static constexpr u32 min_tokens = MinTokens;
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 k_parts = KParts;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u32 max_routes = MaxTokens * moe::route_layout::slots;
  static constexpr u64 partials_bytes = 4ull * max_routes * weights::hidden;
  static constexpr u64 workspace_bytes = 0;
  static constexpr i64 template_args[] = {MinTokens, MaxTokens, KParts};

  static decision admits(const moe_grouped_reduce_signature& s) {
    constexpr i64 slots = moe::route_layout::slots;
    if (s.target != Target::id) return refuse("target", Target::name, static_cast<i64>(s.target));
    if (const decision d = require_tensor(s.ids, {"ids", dtype::i32, 2, {-1, slots}, "[tokens, 9]", netra::layout::compact, 4}, s.device); !d.admitted())
      return d;
    if (s.tokens() < MinTokens || s.tokens() > MaxTokens) return refuse("tokens", "in [MinTokens, MaxTokens]", s.tokens());
    if (const decision d = require_tensor(s.route_weights, {"route_weights", dtype::f32, 2, {s.tokens(), slots}, "[tokens, 9]", netra::layout::compact, 4}, s.device);
        !d.admitted())
      return d;
    if (const decision d = require_tensor(s.out, {"out", dtype::bf16, 2, {s.tokens(), weights::hidden}, "[tokens, 2048]", netra::layout::compact, 4}, s.device);
        !d.admitted())
      return d;
    if (const decision d = require_pointer<16>("partials", s.partials); !d.admitted()) return d;
    if (s.partials_bytes < partials_bytes) return refuse("partials_bytes", ">= the contract's partials_bytes", static_cast<i64>(s.partials_bytes));
    return admit();
  }

  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      resource_budget b;
      b.max_vgprs = 32;
      b.max_agprs = 0;
      b.max_sgprs = 102;
      b.max_lds_bytes = 0;
      b.max_code_bytes = 16384;  // KParts 2: the FP16 widening in integer operations, 36 per thread
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 40;
      b.max_lds_bytes = 0;
      b.max_code_bytes = 32768;
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::moe_grouped_reduce: no resource budget for this target");
    }
  }
};

}  // namespace contracts
}  // namespace netra
