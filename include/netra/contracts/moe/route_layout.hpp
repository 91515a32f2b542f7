// netra/contracts/moe/route_layout.hpp — the route metadata every decode MoE kernel shares.
//
// Model contract (Qwen3.6-35B-A3B): 256 routed experts, top-8, plus one shared expert appended
// as a 9th route. For M tokens the routing stage writes two row-major arrays with row stride 9:
//
//   ids     int32 [M, 9]   ids[t * 9 + s]
//   weights FP32  [M, 9]   weights[t * 9 + s]
//
// - slots 0..7: the router's top-8 for token t, in descending weight order; equal weights put
//   the lower expert id first. Ids are in [0, 256). Written by the router kernel.
// - slot 8: the shared expert, id 256 (shared_expert_id), weight g = sigmoid(shared gate).
//   Written by the shared-gate kernel.
// - Route r = t * 9 + s is also the row index of the gate_up output / act_quant input
//   [9M, 1024] and of act_quant's outputs [9M, 512] (E4M3) + [9M, 4] (scales).
//
// Nothing downstream re-sorts this metadata: the expert kernels read it as written.
// Device-light: no standard library.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::moe {

struct route_layout {
  static constexpr u32 routed_experts = 256;    // router output ids are in [0, routed_experts)
  static constexpr u32 top_k = 8;               // slots 0..top_k-1: routed experts
  static constexpr u32 shared_slot = 8;         // slot of the shared expert
  static constexpr u32 slots = 9;               // row stride of ids/weights (elements)
  static constexpr i32 shared_expert_id = 256;  // id written in the shared slot
  static constexpr u32 experts = 257;           // distinct ids that can appear (256 routed + shared)

  /// Index of slot s of token t in ids / weights; also the route row r in [9M, ...] arrays.
  NETRA_HOST_DEVICE static constexpr u64 index(u64 token, u32 slot) { return token * slots + slot; }
  /// The token and slot of route row r.
  NETRA_HOST_DEVICE static constexpr u64 token_of(u64 route) { return route / slots; }
  NETRA_HOST_DEVICE static constexpr u32 slot_of(u64 route) { return static_cast<u32>(route % slots); }
  /// Number of routes (rows of the gate_up output) for M tokens.
  NETRA_HOST_DEVICE static constexpr u64 routes(u64 tokens) { return tokens * slots; }
};

static_assert(route_layout::slots == route_layout::top_k + 1 && route_layout::shared_slot == route_layout::top_k,
              "netra::moe::route_layout: slot 8 is the shared expert after the top-8");

}  // namespace netra::moe
