// netra/contracts/moe/router.hpp — the MoE router: logits -> softmax -> top-8 -> renormalised
// weights, written as slots 0..7 of the route layout (contracts/moe/route_layout.hpp), for
// 1 <= M <= MaxTokens <= 768 (the serving envelope: 128 decode tokens, 768 verification tokens).
//
// Inputs: hidden BF16 [M, 2048] (row stride in elements), gate weight BF16 [256, 2048] (row-major,
// contiguous). Outputs: ids int32 and weights FP32 at [t * 9 + s], s = 0..7, descending weight
// (equal weights: lower expert id first). Slot 8 is not touched (the shared gate writes it).
//
// Routing semantics (both tactics; tests/oracles/moe_routing.hpp route_token):
//   l_x: the FP32 logits of the tactic (below), x = 0..255
//   non-finite token: any l_x is NaN, or m = max_x l_x is ±Inf -> ids 0..7, weights 0x7FC00000
//   otherwise e_x = exp_f32(l_x - m) (dsl/math.hpp); S = the 32-lane butterfly sum (xor 1, 2, 4,
//   8, 16) of the partials S_j = e_(8j) + ... + e_(8j+7) (sequential from +0); p_x = e_x / S;
//   the top-8 by p, equal p: lower x first; s8 = p_(id0) + ... + p_(id7) sequentially in slot
//   order; w_i = p_(id_i) / s8. Every operation is IEEE FP32 (no contraction, IEEE division).
//
// Tactics and their comparison policies:
//   exact_fp32 (Tactic 0): logits in a fixed FP32 order, so ids and weights are bitwise equal to
//     the oracle. Products of BF16 values are exact in FP32, so only the additions round:
//     l = ((((G_0 + G_1) + G_2) + ...) + G_7), G_g = the halving tree (for b = 16, 8, 4, 2, 1:
//     s_i += s_(i+b), i < b) over the 32 slice partials of group g, slice i = 32g + l covering
//     k = 8i .. 8i + 7, slice partial = sequential fma over its 8 k from +0.
//     Mapping (logits kernel): a 32-lane group (a warp on sm90a, half a wave64 on gfx950) owns
//     one K group g (256 k), 8 experts and up to 8 tokens; lane l owns slice 32g + l (one 16-byte
//     load per expert and per token), 32 exact-product fma chains per 4 tokens, then a 32-lane
//     reduce-scatter (xor 16, 8, 4, 2, 1: the halving tree; lane l ends with the pair
//     (token l / 8, expert l % 8)) and one store of G_g. On sm90a a tile of one token runs one
//     pass of 8 chains instead (the same pairs in the same order: the same bits). Workgroup = 2 groups (K groups 2j,
//     2j + 1); grid (128, ceil(M / 8)). The route kernel adds G_0 .. G_7 in order.
//     FP32-FMA bound: meant for M <= 32.
//   matrix_bf16 (Tactic 1): logits from BF16 matrix instructions with FP32 accumulation
//     (sm90a mma.sync m16n8k16, gfx950 v_mfma_f32_16x16x32_bf16): each instruction's internal sum
//     is the vendor's, so the policy is a bound. Every product is exact. Model an instruction that
//     adds k products to C with alignment to the largest term and truncation to 24 bits: its error
//     is at most (k + 1) 2^-23 (|C| + sum |products|). A logit is 4 instructions per wave (k = 16 on
//     sm90a, 32 on gfx950, the wave's K slice), then 7 + 3 (sm90a) or 3 + 3 (gfx950) IEEE FP32
//     additions (waves, K splits), so |l_x - l64_x| <= ~2^-16 sum_k |hidden_k * w_xk| for K = 2048
//     (l64: the FP64 dot product). The contract's bound leaves a factor 32 for hardware that keeps
//     fewer bits (down to ~19):
//       B_x = 2^-11 * sum_k |hidden_k * w_xk|
//     (tests/gpu/test_moe_router_gpu.cpp reports the measured worst |l - l64| / sum |products|).
//     The tactic's logits are the workspace partials added in split order (layout below), and the
//     policy is three checks (tests/gpu/test_moe_router_gpu.cpp):
//       (1) every logit is within B_x of l64_x;
//       (2) ids and weights are bitwise the routing semantics above applied to those logits;
//       (3) hence ids equal the FP64 reference's except where the bound makes another order
//           admissible: for every slot i with a nonzero weight and every expert y chosen in no
//           slot <= i whose FP32 probability differs from p_(id_i), l64_(id_i) + B_(id_i) >=
//           l64_y - B_y; slots with weight 0 hold the lowest ids not chosen before; and
//           |w_i - w64_i| <= w64_i * (e^(4 B_max) - 1 + 2^-20) + 2^-120, w64 the FP64 softmax over
//           the chosen ids, B_max = max_i B_(id_i) (a product with w64_i = 0 is 0).
//     Mapping (logits kernel): workgroup tile 16 tokens x 64 experts x 512 K (K split in 4); grid
//     (16, ceil(M / 16)); sm90a: 8 warps split the 512 K eight ways (64 K each: 4 A + 16 B 16-byte
//     loads per lane, 32 mma.sync over 8 n8 tiles); gfx950: 4 wave64 split it four ways (128 K
//     each: 4 A + 16 B 16-byte loads per lane, 16 MFMA over 4 n16 tiles); gfx1151 (audit only): 8
//     wave32 as sm90a's warps, 16 v_wmma_f32_16x16x16_bf16 over 4 n16 tiles (k = 16, 7 + 3
//     additions as sm90a), lanes l and l + 16 loading the same 8 A + 32 B pieces (WMMA reads every
//     row and column from both halves); all load A and B with the
//     same K permutation inside an instruction (the sum is unchanged). Partial tiles meet in LDS
//     (36 KB sm90a: rows padded to 72 floats against bank conflicts; 16 KB gfx950) and are added in
//     wave order; the route kernel adds the 4 K-split partials in split order.
//
// Two kernels per call, no atomics, no counters:
//   logits: every workgroup writes its partial logits (exact: the group sums G_g; matrix: the
//     K-split partials) to the workspace and exits;
//   route:  one 32-lane group per token (lane l owns experts 8l .. 8l + 7: two 16-byte loads per
//     split) adds the partials in split order and routes: max and sums by 32-lane butterflies,
//     top-8 by a bitonic selection of 64-bit keys (p bits, ~expert): every lane sorts its 8 keys
//     (19 comparators), then 5 butterfly stages (xor 1, 2, 4, 8, 16) each keep the top 8 of the
//     lane's and its partner's sorted lists (max(a_i, b_(7-i)) then a 3-level bitonic merge).
//     Keys are distinct, so the selection is the oracle's order. Grid ceil(M / 2), 64 threads.
// The kernel boundary orders the two (on sm90a with programmatic dependent launch: the route
// kernel starts early and waits at griddepcontrol.wait for the logits kernel's completion; the
// logits kernel prefetches its weight and hidden rows into L2 before its own wait, which never
// changes results). The workspace needs no initial contents; one workspace serves one stream at
// a time.
// Cluster 16 (exact_fp32 only; targets with workgroup clusters, dsl/cluster.hpp: sm90a): one
//   kernel instead of two, the same bits. A cluster of 16 workgroups owns a token tile (4
//   tokens); workgroup c of it owns experts 16c .. 16c + 15 over all of K: 16 waves, wave w the K
//   group w % 8 of expert tile 2c + w / 8 with the logits kernel's lane code (the same G_g), the
//   sums into LDS; then wave 0 adds G_0 .. G_7 in order (the route kernel's l) and pushes token
//   t's 16 logits into workgroup t's LDS (16-byte st.async, counted on an mbarrier there), and
//   workgroup t (t < the tile's tokens) routes token t with the route kernel's lane code once its
//   256 logits have landed. No workspace, no global round trip between logits and routes.
//   SharedGate 1: wave 1 of workgroup t computes token t's gate after its G_g (its operands
//   asked into L2 at the start), while wave 0 pushes and routes.
// SharedGate 1 (the decode block's router): the route kernel also writes slot 8 exactly as
// contracts::moe_shared_gate does (same order, same bits; kernels/moe/shared_gate.hpp
// shared_gate_lane), on 32 more lanes per token that load the hidden row and the gate weight
// when the routing lanes load the partials; the call then also takes the gate weight (BF16
// [2048], 16-byte aligned) and writes all nine slots.
#pragma once
#include "netra/contracts/common.hpp"
#include "netra/contracts/moe/route_layout.hpp"
#include "netra/contracts/moe/routing_call.hpp"

namespace netra {

/// What a call to the router has: the routing call (gate_weight bfloat16 [experts = 256, 2048]),
/// the workspace and (for a contract with SharedGate 1) the shared-expert gate weight, bfloat16
/// [2048].
struct moe_router_signature : moe_routing_call {
  const void* workspace = nullptr;
  u64 workspace_bytes = 0;
  tensor_arg shared_gate_weight;
  NETRA_HOST_DEVICE constexpr i64 experts() const { return gate_weight.rank == 2 ? gate_weight.shape[0] : 0; }
};

/// Router tactics (the Tactic field of contracts::moe_router).
namespace router_tactic {
inline constexpr u32 exact_fp32 = 0;   // fixed FP32 order: bitwise policy
inline constexpr u32 matrix_bf16 = 1;  // BF16 matrix instructions: bounded policy
}  // namespace router_tactic

namespace contracts {

/// The template arguments an instance is named and spelled by: SharedGate only when it is 1, so
/// the instances without it keep their names.
/// The template arguments an instance is named and spelled by: SharedGate only when it or Cluster
/// is not 0, Cluster only when it is not 0, so the instances without them keep their names.
template <u32 Tactic, u32 MaxTokens, u32 SharedGate, u32 Cluster> struct moe_router_args {
  static constexpr i64 value[] = {Tactic, MaxTokens, SharedGate, Cluster};
};
template <u32 Tactic, u32 MaxTokens, u32 SharedGate> struct moe_router_args<Tactic, MaxTokens, SharedGate, 0> {
  static constexpr i64 value[] = {Tactic, MaxTokens, SharedGate};
};
template <u32 Tactic, u32 MaxTokens> struct moe_router_args<Tactic, MaxTokens, 0, 0> {
  static constexpr i64 value[] = {Tactic, MaxTokens};
};

/// The router's Cluster field where a target has workgroup clusters (one kernel), else 0.
template <class Target> inline constexpr u32 router_cluster_default = Target::has_clusters ? 16 : 0;

template <class Target, u32 Tactic, u32 MaxTokens, u32 SharedGate = 0, u32 Cluster = 0, u32 WaveSize = Target::wave_size>
struct moe_router {
  static_assert(is_built_target_v<Target> || is_audit_only_target_v<Target>,
                "netra::contracts::moe_router: field Target is not supported; supported: netra::gfx950, netra::sm90a, "
                "netra::gfx942, netra::gfx1151 (built and audited only)");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_router: field WaveSize must equal the target's wave size (gfx950, gfx942: 64; sm90a, gfx1151: 32)");
  static_assert(Tactic == router_tactic::exact_fp32 || Tactic == router_tactic::matrix_bf16,
                "netra::contracts::moe_router: field Tactic must be 0 (exact_fp32) or 1 (matrix_bf16)");
  static_assert(MaxTokens >= 1 && MaxTokens <= 768, "netra::contracts::moe_router: field MaxTokens must be in [1, 768]");
  static_assert(SharedGate == 0 || SharedGate == 1,
                "netra::contracts::moe_router: field SharedGate must be 0 (slots 0..7) or 1 (the route kernel also writes slot 8)");
  static_assert(Cluster == 0 || Cluster == 16,
                "netra::contracts::moe_router: field Cluster must be 0 (two kernels) or 16 (one kernel: a cluster of 16 workgroups per token tile)");
  static_assert(Cluster == 0 || Target::has_clusters,
                "netra::contracts::moe_router: field Cluster must be 0 on a target without workgroup clusters (gfx950)");
  static_assert(Cluster == 0 || Tactic == router_tactic::exact_fp32,
                "netra::contracts::moe_router: field Cluster: only Tactic 0 (exact_fp32) has a cluster mapping");

  using target = Target;
  /// Cluster contracts are their own kernel family (one kernel, instantiate/moe_router_cluster.hpp).
  static constexpr const char* family = Cluster ? "moe_router_cluster" : "moe_router";
  static constexpr const char* template_name = "netra::contracts::moe_router";
  static constexpr u32 tactic = Tactic;
  static constexpr bool exact = Tactic == router_tactic::exact_fp32;
  static constexpr u32 hidden_size = 2048;
  static constexpr u32 experts = moe::route_layout::routed_experts;
  static constexpr u32 top_k = moe::route_layout::top_k;
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 wave_size = WaveSize;
  /// Logits kernel: exact 2 x 32 lanes (two K groups of one 8-expert x 8-token tile), matrix 256
  /// (the 16 x 64 x 512 tile); route kernel: route_workgroup_size, one 32-lane group per token.
  static constexpr u32 workgroup_size = exact ? 64 : 256;
  /// SharedGate 1: the route kernel also computes contracts::moe_shared_gate's slot 8, with that
  /// contract's order and bits, on 32 more lanes per token (its workgroup: 2 tokens' routing
  /// groups, then their 2 gate groups; on gfx950 one wave64 each).
  static constexpr bool shared_gate = SharedGate == 1;
  static constexpr u32 route_workgroup_size = shared_gate ? 128 : 64;
  /// Cluster: workgroups per cluster (0: the two-kernel mapping), the experts one workgroup owns
  /// and its workgroup: 16 waves of 32 lanes (2 expert tiles x 8 K groups).
  static constexpr u32 cluster = Cluster;
  static constexpr u32 cluster_experts = Cluster ? moe::route_layout::routed_experts / Cluster : 0;
  static constexpr u32 cluster_workgroup_size = (cluster_experts / 8) * 8 * 32;
  /// Cluster: tokens per cluster: 4, not the logits kernel's 8 (with 4-token passes a lane's 8
  /// hidden vectors spill at 16 waves' 128 registers). H200: 32 tokens, 8 clusters of 16, took a
  /// second wave (9.78 us against 5.18 at 16 tokens), so the cluster router serves M <= 16.
  static constexpr u32 cluster_token_tile = 4;
  /// exact_fp32: a one-token tile sums in 1-token passes (8 values per lane) instead of 4-token
  /// ones, where it pays and fits: sm90a (H200, two kernels, M = 1 4.52 -> 3.89 us); on gfx950
  /// the second pass size takes the logits kernel from 125 to 172 VGPRs, over the 128 budgeted.
  static constexpr bool exact_one_token_passes = same_v<Target, sm90a>;
  static constexpr u32 token_tile = exact ? 8 : 16;
  static constexpr u32 expert_tile = exact ? 8 : 64;
  static constexpr u32 k_splits = exact ? 8 : 4;  // exact: the 8 K groups' sums G_g; matrix: 512-K splits
  static constexpr u32 k_chunk = hidden_size / k_splits;
  static constexpr u32 expert_tiles = experts / expert_tile;
  static constexpr u32 max_token_tiles = ceil_div(MaxTokens, token_tile);
  static constexpr u32 padded_tokens = max_token_tiles * token_tile;
  /// Workspace: partial logits FP32 [k_splits][padded_tokens][256], written by the logits kernel
  /// and read by the route kernel of the same call (no initial contents needed).
  static constexpr u64 partials_bytes = static_cast<u64>(k_splits) * padded_tokens * experts * sizeof(float);
  static constexpr u64 workspace_bytes = Cluster ? 0 : partials_bytes;  // Cluster: none
  static_assert(exact ? expert_tile * 4 == 32 : true,
                "netra::contracts::moe_router: the exact tactic's 32-lane reduce-scatter needs 8 experts x 4 tokens");

  static constexpr const auto& template_args = moe_router_args<Tactic, MaxTokens, SharedGate, Cluster>::value;

  static decision admits(const moe_router_signature& s) {
    if (const decision d = admits_routing_call<moe_router>(s); !d.admitted()) return d;
    if (s.gate_weight.rank == 2 && s.experts() != experts) return refuse("experts", "== 256 (gate_weight rows)", s.experts());
    if (const decision d = require_tensor(s.gate_weight, {"gate_weight", dtype::bf16, 2, {experts, hidden_size}, "[256, 2048]", layout::compact, 16},
                                          s.device);
        !d.admitted())
      return d;
    if constexpr (workspace_bytes > 0)  // (a contract without a workspace ignores the field)
      if (const decision d = require_workspace(s, workspace_bytes); !d.admitted()) return d;
    if constexpr (shared_gate)
      if (const decision d = require_tensor(s.shared_gate_weight, {"shared_gate_weight", dtype::bf16, 1, {hidden_size}, "[2048]", layout::compact, 16},
                                            s.device);
          !d.admitted())
        return d;
    return admit();
  }

  /// Floats between two rows of the matrix tactic's per-wave partial tile in LDS: sm90a 72 (the
  /// 8-byte stores of the mma D fragment's element pairs spread over all 32 banks), gfx1151 80
  /// (WMMA's item stores cover rows 2i and 2i + 1, 16 floats each: 80 puts the second row on the
  /// other 16 of 32 banks), gfx950 64.
  static constexpr u32 matrix_tile_stride = same_v<Target, sm90a> ? 72 : same_v<Target, gfx1151> ? 80 : 64;
  /// LDS of one logits workgroup: the matrix tactic's per-wave partial tiles (16 rows of 64 floats
  /// per wave, matrix_tile_stride apart), plus (both tactics) the +0.0 that chains start from
  /// after the loads' barrier; the route kernel has none.
  /// Cluster: the one kernel's G_g [8 groups][8 tokens][16 experts], the routed token's 256
  /// logits, their mbarrier, the staged weight rows' mbarrier and the +0.0 (static), and the
  /// workgroup's 16 weight rows staged before the wait (dynamic, cluster_staged_weight_bytes).
  static constexpr u32 cluster_staged_weight_bytes = Cluster ? cluster_experts * hidden_size * 2 : 0;
  /// (the static part rounded up to 128 bytes: the dynamic rows start 128-aligned after it)
  static constexpr u32 cluster_static_lds_bytes = Cluster ? ceil_div(k_splits * cluster_token_tile * cluster_experts * 4 + experts * 4 + 32, 128u) * 128 : 0;
  static constexpr u32 lds_bytes = Cluster ? cluster_static_lds_bytes + cluster_staged_weight_bytes
                                           : (exact ? 0 : (workgroup_size / WaveSize) * 16 * matrix_tile_stride * 4) + 16;

  static constexpr resource_budget budget() {
    if constexpr (is_amd_v<Target>) {
      // gfx950; gfx942 (matrix: v_mfma_f32_16x16x16_bf16, 102 VGPRs measured); gfx1151: the matrix tactic's WMMA operands are loaded by both
      // lane halves (16 + 128 VGPRs of pieces per lane: 182 measured), the exact one 125
      resource_budget b;
      b.max_vgprs = same_v<Target, gfx1151> && !exact ? 192 : 128;
      b.max_agprs = 0;
      b.max_sgprs = 64;
      b.max_lds_bytes = lds_bytes;
      b.max_code_bytes = 16384;
      return b;  // no scratch, no spills
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 128;
      b.max_lds_bytes = lds_bytes + 1024;  // sm_90 reserves 1 KiB of shared memory per block (counted by the cubin)
      b.max_code_bytes = exact ? 49152 : 32768;  // exact: two pass sizes (and, Cluster, both kernels' code in one)
      return b;  // no stack, no spills
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::moe_router: no resource budget for this target");
    }
  }
};

/// The decode router: exact FP32 order, up to 32 tokens, two kernels (on the H200 the cluster
/// kernel was no faster without the gate: M = 1 4.64 against 4.52 us, M = 16 5.18 against 4.80,
/// and M = 32 9.78 against 5.89, its 8 clusters of 16 not resident at once).
template <class Target> using moe_router_exact = moe_router<Target, router_tactic::exact_fp32, 32>;
/// The decode block's router (up to the block's 16 tokens): moe_router_exact's slots 0..7 and the
/// shared-expert gate appended (slot 8, bitwise contracts::moe_shared_gate's), so the block needs
/// no shared-gate kernel; one cluster kernel where the target has clusters (4 clusters of 16
/// workgroups at 16 tokens: all resident at once).
template <class Target>
using moe_router_exact_shared_gate = moe_router<Target, router_tactic::exact_fp32, 16, 1, router_cluster_default<Target>>;
/// Up to 128 tokens on the matrix units, bounded policy.
template <class Target> using moe_router_matrix = moe_router<Target, router_tactic::matrix_bf16, 128>;
/// The block's router above the decode router's 16 tokens (17..768, the grouped experts' range):
/// the matrix tactic (bounded policy; its workspace 4 x 768 x 256 FP32 = 3 MiB) with the shared
/// gate appended as slot 8 by the route kernel (bitwise contracts::moe_shared_gate's), two kernels.
template <class Target> using moe_router_matrix_shared_gate = moe_router<Target, router_tactic::matrix_bf16, 768, 1>;

}  // namespace contracts
}  // namespace netra
