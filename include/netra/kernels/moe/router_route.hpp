// netra/kernels/moe/router_route.hpp — the route kernel of contracts::moe_router: softmax ->
// top-8 -> renormalised weights (slots 0..7) from the logits kernel's partials.
//   grid ceil(M / 2), 64 threads (SharedGate: 128, the last 64 computing the two tokens' shared
//   gates with kernels/moe/shared_gate.hpp's shared_gate_lane: slot 8), one 32-lane group per
//   token (a warp32, or half a wave64: every shuffle stays inside the group); lane l owns experts
//   8l .. 8l + 7: two strong 16-byte loads per split (the logits kernel's completion is waited
//   for, not its L1 state), all issued before a workgroup barrier, split partials added in split
//   order, then route(): max and sums by 32-lane butterflies, top-8 by a bitonic selection of
//   64-bit keys (router_select.hpp), weights.
#pragma once
#include "netra/dsl/narrow_store.hpp"
#include "netra/kernels/moe/router_logits_lanes.hpp"
#include "netra/kernels/moe/router_select.hpp"
#include "netra/kernels/moe/shared_gate.hpp"

namespace netra::kernels {

template <class Contract> struct moe_router_route_kernel {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_moe_router_route";
  static constexpr u32 workgroup_size = Contract::route_workgroup_size;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 group = 32;                                // lanes per routed token
  static constexpr u32 tokens_per_workgroup = 2;                  // routing groups; then (SharedGate) as many gate groups
  static_assert(workgroup_size == group * tokens_per_workgroup * (Contract::shared_gate ? 2 : 1),
                "netra::kernels::moe_router: the route workgroup is 2 routing groups (+ 2 gate groups)");
  using gate_part = shared_gate_lane<target>;

  struct params {
    const float* partials;     // workspace: FP32 [k_splits][padded_tokens][256], the logits kernel's
    i32* ids;                  // int32 [tokens, 9]
    float* weights;            // FP32 [tokens, 9]
    u32 tokens;
    const u16* hidden;         // SharedGate: BF16 [tokens, hidden_stride]
    i64 hidden_stride;         // elements
    const u16* gate_weight;    // SharedGate: BF16 [2048]
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{ceil_div(tokens, tokens_per_workgroup), 1, 1}, workgroup_size, 0};
  }
  /// Token of group `grp` of workgroup `workgroup`: routing groups 0, 1 (lane l owns experts
  /// 8l .. 8l + 7), then (SharedGate) gate groups 2, 3 for the same two tokens.
  NETRA_HOST_DEVICE static constexpr u32 token_of(u32 workgroup, u32 grp) { return workgroup * tokens_per_workgroup + grp % tokens_per_workgroup; }
  /// True for the groups that compute the shared gate (SharedGate only).
  NETRA_HOST_DEVICE static constexpr bool gates(u32 grp) { return grp >= tokens_per_workgroup; }

  static NETRA_DEVICE u64 shuffle_key(u64 v, u32 mask) { return xor_shuffle_u64<target>(v, mask); }

  /// Routes one token from its 256 logits (lane l of the group holds experts 8l .. 8l + 7):
  /// slots 0..7 of `token` in ids / weights.
  static NETRA_DEVICE void route(i32* ids, float* weights, u32 token, u32 lane, const float (&l)[8]) {
    u32 nan = 0;
    float m = bit_cast<float>(0xFF800000u);  // -inf
NETRA_UNROLL
    for (u32 x = 0; x < 8; ++x) {
      nan |= l[x] != l[x] ? 1u : 0u;
      m = max_num<target>(m, l[x]);
    }
NETRA_UNROLL
    for (u32 mask = 1; mask < group; mask <<= 1) {  // two independent butterflies, interleaved
      const u32 other_nan = xor_shuffle_u32<target>(nan, mask);
      const float other_m = xor_shuffle_f32<target>(m, mask);
      nan |= other_nan;
      m = max_num<target>(m, other_m);
    }
    const bool finite = nan == 0 && m > bit_cast<float>(0xFF800000u) && m < bit_cast<float>(0x7F800000u);
    i32 my_id = static_cast<i32>(lane);
    float my_weight = bit_cast<float>(0x7FC00000u);
    if (finite) {
      float e[8], s = 0.0f;
NETRA_UNROLL
      for (u32 x = 0; x < 8; ++x) {
        e[x] = exp_f32(sub_rn(l[x], m));
        s = add_rn(s, e[x]);
      }
NETRA_UNROLL
      for (u32 mask = 1; mask < group; mask <<= 1) s = add_rn(s, xor_shuffle_f32<target>(s, mask));
      u64 k[8];
NETRA_UNROLL
      for (u32 x = 0; x < 8; ++x) k[x] = router_key(div_rn(e[x], s), 8 * lane + x);
      router_sort8(k);
NETRA_NO_UNROLL  // five dependent stages: rolled, the code stays small (it is fetched cold)
      for (u32 mask = 1; mask < group; mask <<= 1) {
        u64 q[8];
NETRA_UNROLL
        for (u32 i = 0; i < 8; ++i) q[i] = shuffle_key(k[i], mask);
        router_merge8(k, q);
      }
      // every lane holds the top 8, descending; s8 in slot order, lane s < 8 owns slot s
      float s8 = 0.0f;
      u64 mine = k[0];
NETRA_UNROLL
      for (u32 i = 0; i < 8; ++i) {
        s8 = add_rn(s8, router_key_p(k[i]));
        mine = lane == i ? k[i] : mine;
      }
      my_id = static_cast<i32>(router_key_expert(mine));
      my_weight = div_rn(router_key_p(mine), s8);
    }
    if (lane < Contract::top_k) {
      const u64 index = moe::route_layout::index(token, lane);
      store_4B<target>(ids + index, static_cast<u32>(my_id));
      store_4B<target>(weights + index, bit_cast<u32>(my_weight));
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    const u32 thread = thread_id<target>();
    const u32 lane = thread % group, grp = thread / group;
    const u32 token = token_of(workgroup_id<target, 0>(), grp);
    const bool live = token < p.tokens;  // uniform over the 32-lane group
    NETRA_SHARED float one_slot;
    if (thread == 0) one_slot = static_cast<float>(p.tokens != 0);  // 1.0 (tokens >= 1), unknown to the compiler
    if constexpr (Contract::shared_gate && target::has_l2_prefetch) {
      // the gate weight (4 KiB) into L2 while the logits kernel runs (a hint): after the wait the
      // gate lanes then meet L2, as the routing lanes do for the partials
      if (grp == tokens_per_workgroup && lane == 0) prefetch_l2<target>(p.gate_weight, 2 * Contract::hidden_size);
    }
    launch_dependents<target>();
    wait_for_prerequisites<target>();  // the logits kernel has completed
    if constexpr (Contract::shared_gate) {
      if (gates(grp)) {  // whole waves on both targets: groups 2, 3 are warps 2, 3 / the second wave64
        const u64 t = live ? token : p.tokens - 1;
        gate_part part;
        part.load(p.hidden + static_cast<i64>(t) * p.hidden_stride, p.gate_weight, lane);
        workgroup_barrier<target>();  // the routing groups' barrier (below)
        const float g = part.value();
        if (live && lane == 0) gate_part::store(p.ids, p.weights, t, g);
        return;
      }
    }
    u32x4 v[Contract::k_splits][2];
NETRA_UNROLL
    for (u32 s = 0; s < Contract::k_splits; ++s) {
      const float* base = p.partials + router_partial_index<Contract>(s, live ? token : 0, 8 * lane);
      v[s][0] = load_16B_after_acquire<target>(base);
      v[s][1] = load_16B_after_acquire<target>(base + 4);
    }
    // Every load above is issued before the first addition: the sums start from split 0 times a
    // 1.0 read from LDS after a barrier (x * 1 = x exactly), and strong loads stay above the
    // barrier, so the compiler cannot trade registers for a second L2 round trip.
    workgroup_barrier<target>();
    const float one = one_slot;
    if (!live) return;
    float l[8];
NETRA_UNROLL
    for (u32 s = 0; s < Contract::k_splits; ++s)
NETRA_UNROLL
      for (u32 x = 0; x < 8; ++x) {
        const float f = bit_cast<float>(v[s][x / 4][x % 4]);
        l[x] = s == 0 ? mul_rn(f, one) : add_rn(l[x], f);
      }
    route(p.ids, p.weights, token, lane, l);
  }
};

}  // namespace netra::kernels
