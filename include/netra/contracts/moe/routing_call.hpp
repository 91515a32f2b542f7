// netra/contracts/moe/routing_call.hpp — the run-time checks that the router and the shared-expert
// gate share: both take BF16 hidden rows and a BF16 gate weight and write route ids and weights
// in the route layout (route_layout.hpp).
#pragma once
#include "netra/contracts/common.hpp"
#include "netra/contracts/moe/route_layout.hpp"

namespace netra {

/// The tensors of a routing call (moe_router_signature and moe_shared_gate_signature add theirs):
///   hidden_states  bfloat16 [tokens, 2048], rows contiguous, row stride a multiple of 8 elements;
///   gate_weight    bfloat16: router [256, 2048], shared gate [2048]; compact;
///   route_ids      int32 [tokens, 9], route_weights float32 [tokens, 9]; compact.
struct moe_routing_call {
  target_id target;
  device_ref device;
  tensor_arg hidden;
  tensor_arg gate_weight;
  tensor_arg ids;
  tensor_arg weights;
  NETRA_HOST_DEVICE constexpr i64 tokens() const { return hidden.rank == 2 ? hidden.shape[0] : 0; }
  NETRA_HOST_DEVICE constexpr i64 hidden_size() const { return hidden.rank == 2 ? hidden.shape[1] : 0; }
  /// Elements between token rows (a single row's stride does not matter: its length).
  NETRA_HOST_DEVICE constexpr i64 hidden_stride() const { return tokens() == 1 ? hidden_size() : hidden.strides[0]; }
};

}  // namespace netra

namespace netra::contracts {

/// The first refusing field of a routing call to `Contract` (moe_router or moe_shared_gate), in
/// this order: target, hidden_states (device, bfloat16, rank 2, contiguous rows, 16-byte
/// aligned), hidden_size (2048), tokens ([1, MaxTokens]), hidden_stride (16-byte aligned rows),
/// route_ids (int32 [tokens, 9]) and route_weights (float32 [tokens, 9]), 4-byte aligned. The
/// gate weight is the caller contract's (its shape differs).
template <class Contract> decision admits_routing_call(const moe_routing_call& s) {
  using Target = typename Contract::target;
  constexpr i64 hidden_size = Contract::hidden_size, max_tokens = Contract::max_tokens, slots = moe::route_layout::slots;
  if (s.target != Target::id) return refuse("target", Target::name, s.target);
  if (const decision d = require_tensor(s.hidden, {"hidden_states", dtype::bf16, 2, {-1, -1}, "[tokens, 2048]", layout::rows, 16}, s.device);
      !d.admitted())
    return d;
  if (s.hidden_size() != hidden_size) return refuse("hidden_size", "== 2048", s.hidden_size());
  if (s.tokens() < 1 || s.tokens() > max_tokens) return refuse("tokens", "in [1, MaxTokens]", s.tokens());
  if (s.hidden_stride() < hidden_size || s.hidden_stride() % 8 != 0)
    return refuse("hidden_stride", ">= 2048 and a multiple of 8 elements (16-byte aligned rows)", s.hidden_stride());
  if (const decision d = require_tensor(s.ids, {"route_ids", dtype::i32, 2, {s.tokens(), slots}, "[tokens, 9]", layout::compact, 4}, s.device);
      !d.admitted())
    return d;
  return require_tensor(s.weights, {"route_weights", dtype::f32, 2, {s.tokens(), slots}, "[tokens, 9]", layout::compact, 4}, s.device);
}

}  // namespace netra::contracts
