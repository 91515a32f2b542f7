// netra/contracts/moe/shared_gate.hpp — the shared-expert gate, appended as the 9th route.
//
// Semantics (bitwise; tests/oracles/moe_routing.hpp): for each token t < M,
//   x_t = dot(hidden[t, 0:2048], w_shared_gate[0:2048])  (BF16 inputs; every product is exact in
//         FP32, so only the order of the additions matters; that order is fixed:)
//         32 partials, partial j = the sequential sum over k = 64j .. 64j + 63 (ascending) of
//         hidden[t, k] * w[k], starting from +0 (fma); the 32 partials added in the 32-lane
//         butterfly order (for m = 1, 2, 4, 8, 16: s_i = s_i + s_(i xor m); the result is s_0)
//   g_t = sigmoid_f32(x_t) = 1 / (1 + exp_f32(-x_t))  (dsl/math.hpp); a NaN g is written as the
//         canonical 0x7FC00000
// written as slot 8 of the route layout (contracts/moe/route_layout.hpp):
//   ids[t * 9 + 8] = 256 (int32), weights[t * 9 + 8] = g_t (FP32).
// Nothing else is written (slots 0..7 belong to the router). Comparison policy: bitwise.
//
// Mapping (both targets): 32 consecutive threads per token; thread j of its token loads
// hidden[t, 64j .. 64j + 63] and w[64j .. 64j + 63] (8 + 8 16-byte loads, all issued before the
// first fma), accumulates its partial, then the 32 threads take the butterfly sum (xor masks 1..16,
// so it stays inside half a wave64 on gfx950 and inside the warp on sm90a) and thread 0 of the
// token stores the two words. TokensPerWorkgroup tokens share a workgroup (2 by default: one wave64
// on gfx950, two warps on sm90a); grid = ceil(M / TokensPerWorkgroup). No LDS, no workspace.
#pragma once
#include "netra/contracts/common.hpp"
#include "netra/contracts/moe/route_layout.hpp"
#include "netra/contracts/moe/routing_call.hpp"

namespace netra {

/// What a call to the shared-expert gate has: the routing call (gate_weight: bfloat16 [2048]).
struct moe_shared_gate_signature : moe_routing_call {};

namespace contracts {

template <class Target, u32 MaxTokens, u32 TokensPerWorkgroup = 2, u32 WaveSize = Target::wave_size>
struct moe_shared_gate {
  static_assert(is_built_target_v<Target> || is_audit_only_target_v<Target>,
                "netra::contracts::moe_shared_gate: field Target is not supported; supported: netra::gfx950, netra::sm90a, "
                "netra::gfx942, netra::gfx1151 (built and audited only)");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_shared_gate: field WaveSize must equal the target's wave size (gfx950, gfx942: 64; sm90a, gfx1151: 32)");
  static_assert(MaxTokens >= 1 && MaxTokens <= 65535u * 2u,
                "netra::contracts::moe_shared_gate: field MaxTokens must be in [1, 131070]");
  static_assert(TokensPerWorkgroup >= 1 && TokensPerWorkgroup <= 32,
                "netra::contracts::moe_shared_gate: field TokensPerWorkgroup must be in [1, 32] (32 threads per token, <= 1024 threads)");
  static_assert((TokensPerWorkgroup * 32u) % WaveSize == 0,
                "netra::contracts::moe_shared_gate: field TokensPerWorkgroup must make whole waves (gfx950: an even number)");

  using target = Target;
  static constexpr const char* family = "moe_shared_gate";
  static constexpr const char* template_name = "netra::contracts::moe_shared_gate";
  static constexpr u32 hidden_size = 2048;
  static constexpr u32 threads_per_token = 32;
  static constexpr u32 k_per_thread = hidden_size / threads_per_token;  // 64
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 tokens_per_workgroup = TokensPerWorkgroup;
  static constexpr u32 workgroup_size = TokensPerWorkgroup * threads_per_token;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u64 workspace_bytes = 0;

  static constexpr i64 template_args[] = {MaxTokens, TokensPerWorkgroup};

  static decision admits(const moe_shared_gate_signature& s) {
    if (const decision d = admits_routing_call<moe_shared_gate>(s); !d.admitted()) return d;
    return require_tensor(s.gate_weight, {"gate_weight", dtype::bf16, 1, {hidden_size}, "[2048]", layout::compact, 16}, s.device);
  }

  static constexpr resource_budget budget() {
    if constexpr (is_amd_v<Target>) {  // gfx950; gfx942 (measured 71 VGPRs, 1,772 bytes), gfx1151 (69, 1,900)
      resource_budget b;
      b.max_vgprs = 96;
      b.max_sgprs = 40;
      b.max_code_bytes = 2048;
      return b;  // no AGPRs, no LDS, no scratch, no spills
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 96;
      b.max_code_bytes = 8192;  // the IEEE division's slow path is out of line
      return b;  // no shared memory, no stack, no spills
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::moe_shared_gate: no resource budget for this target");
    }
  }
};

/// Up to 512 tokens (R = 9 * 512 routes), two tokens per workgroup.
template <class Target> using moe_shared_gate_reference = moe_shared_gate<Target, 512>;

}  // namespace contracts
}  // namespace netra
