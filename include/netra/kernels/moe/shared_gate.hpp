// netra/kernels/moe/shared_gate.hpp — the one kernel of contracts::moe_shared_gate.
//
// Contract: g_t = sigmoid(dot(hidden[t], w)) in the fixed order of the contract, written as route
// slot 8 (id 256, weight g_t); bitwise. The per-lane part (shared_gate_lane) is shared with the
// router's route kernel, which appends the gate itself in the decode block.
// Mapping: grid ceil(M / TokensPerWorkgroup), workgroup TokensPerWorkgroup * 32 threads. Thread
// i of workgroup w owns token w * TokensPerWorkgroup + i / 32 and, with j = i % 32, the values
// k = 64j .. 64j + 63: 8 + 8 16-byte loads (hidden, gate weight), 64 sequential fmas from +0,
// then the butterfly sum over the token's 32 threads (xor 1, 2, 4, 8, 16: inside half a wave64 on
// gfx950, inside the warp on sm90a), sigmoid, and thread j = 0 stores ids/weights of slot 8.
// Tokens past M (last workgroup) compute on token M - 1 and store nothing. On sm90a the kernel is
// launched with programmatic dependent launch (the hidden states' producer waited for before the
// first load; the successor released after the stores).
#pragma once
#include "netra/contracts/moe/shared_gate.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"

namespace netra::kernels {

/// One lane's part of the shared-expert gate of one token, in the contract's fixed order (also
/// run by the router's route kernel when it appends the gate): lane j of the token's 32 lanes
/// loads hidden[64j .. 64j + 63] and w[64j .. 64j + 63] (8 + 8 16-byte loads, issued together),
/// then value() runs the 64 sequential fmas from +0, the butterfly (xor 1 .. 16) and sigmoid_f32;
/// a NaN becomes 0x7FC00000. Every lane of the 32 gets the gate.
template <class Target> struct shared_gate_lane {
  static constexpr u32 threads_per_token = 32;
  static constexpr u32 k_per_lane = 2048 / threads_per_token;  // 64
  static constexpr u32 vectors = k_per_lane / 8;
  u32x4 hv[vectors], wv[vectors];

  /// First k of lane `lane` (0 .. 31) of the token.
  NETRA_HOST_DEVICE static constexpr u32 first_k(u32 lane) { return k_per_lane * lane; }
  NETRA_DEVICE void load(const u16* hidden_row, const u16* weight, u32 lane) {
NETRA_UNROLL
    for (u32 v = 0; v < vectors; ++v) {
      hv[v] = load_16B<Target, cache_policy::streaming>(hidden_row + first_k(lane) + 8 * v);
      wv[v] = load_16B<Target>(weight + first_k(lane) + 8 * v);
    }
  }
  NETRA_DEVICE float value() const {
    float acc = 0.0f;
NETRA_UNROLL
    for (u32 v = 0; v < vectors; ++v) {
NETRA_UNROLL
      for (u32 e = 0; e < 4; ++e) {
        const u32 hw = hv[v][e], ww = wv[v][e];
        acc = fma_rn(bit_cast<float>(hw << 16), bit_cast<float>(ww << 16), acc);
        acc = fma_rn(bit_cast<float>(hw & 0xFFFF0000u), bit_cast<float>(ww & 0xFFFF0000u), acc);
      }
    }
NETRA_UNROLL
    for (u32 mask = 1; mask < threads_per_token; mask <<= 1) acc = add_rn(acc, xor_shuffle_f32<Target>(acc, mask));
    const float g = sigmoid_f32(acc);
    return g != g ? bit_cast<float>(0x7FC00000u) : g;
  }
  /// Route slot 8 of token t: id 256, weight g (one lane of the 32 calls it).
  static NETRA_DEVICE void store(i32* ids, float* weights, u64 token, float g) {
    const u64 slot = moe::route_layout::index(token, moe::route_layout::shared_slot);
    store_4B<Target>(ids + slot, static_cast<u32>(moe::route_layout::shared_expert_id));
    store_4B<Target>(weights + slot, bit_cast<u32>(g));
  }
};

template <class Contract> struct moe_shared_gate_kernel {
  using target = typename Contract::target;
  using lane_part = shared_gate_lane<target>;
  static constexpr const char* symbol = "netra_moe_shared_gate";
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static_assert(Contract::threads_per_token == lane_part::threads_per_token && Contract::k_per_thread == lane_part::k_per_lane,
                "netra::kernels::moe_shared_gate: the contract's order is shared_gate_lane's");

  struct params {
    const u16* hidden;  // BF16 [tokens, hidden_stride]
    i64 hidden_stride;  // elements
    const u16* weight;  // BF16 [2048]
    i32* ids;           // int32 [tokens, 9]
    float* weights;     // FP32 [tokens, 9]
    u32 tokens;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{ceil_div(tokens, Contract::tokens_per_workgroup), 1, 1}, workgroup_size, 0};
  }
  /// Token of thread `thread` of workgroup `workgroup` (may be >= M in the last workgroup).
  NETRA_HOST_DEVICE static constexpr u32 token_of(u32 workgroup, u32 thread) {
    return workgroup * Contract::tokens_per_workgroup + thread / Contract::threads_per_token;
  }
  /// First k of the thread's partial.
  NETRA_HOST_DEVICE static constexpr u32 first_k(u32 thread) { return lane_part::first_k(thread % Contract::threads_per_token); }

  static NETRA_DEVICE void run(const params& p) {
    const u32 thread = thread_id<target>();
    const u32 token = token_of(workgroup_id<target, 0>(), thread);
    const bool live = token < p.tokens;
    const u64 t = live ? token : p.tokens - 1;
    wait_for_prerequisites<target>();
    lane_part part;
    part.load(p.hidden + static_cast<i64>(t) * p.hidden_stride, p.weight, thread % Contract::threads_per_token);
    const float g = part.value();
    if (live && thread % Contract::threads_per_token == 0) lane_part::store(p.ids, p.weights, t, g);
    launch_dependents<target>();  // after the stores
  }
};

template <class Target, u32 MaxTokens, u32 TokensPerWorkgroup, u32 WaveSize>
struct kernels_of<contracts::moe_shared_gate<Target, MaxTokens, TokensPerWorkgroup, WaveSize>> {
  using contract = contracts::moe_shared_gate<Target, MaxTokens, TokensPerWorkgroup, WaveSize>;
  using type = type_list<moe_shared_gate_kernel<contract>>;
};

}  // namespace netra::kernels
