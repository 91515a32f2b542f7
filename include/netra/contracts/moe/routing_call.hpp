// netra/contracts/moe/routing_call.hpp — the run-time checks that the router and the shared-expert
// gate share: both take BF16 hidden rows and a BF16 gate weight and write route ids and weights
// in the route layout (route_layout.hpp).
#pragma once
#include "netra/contracts/common.hpp"

namespace netra {

/// The fields of a routing call (moe_router_signature and moe_shared_gate_signature add theirs).
struct moe_routing_call {
  target_id target;
  dtype hidden = dtype::bf16;
  dtype weight = dtype::bf16;
  dtype ids = dtype::i32;
  dtype weights = dtype::f32;
  i64 tokens = 0;
  i64 hidden_size = 0;
  i64 hidden_stride = 0;  // elements
  const void* hidden_states = nullptr;  // BF16 [tokens, hidden_stride]
  const void* gate_weight = nullptr;    // BF16: router [256, 2048], contiguous; shared gate [2048]
  const void* route_ids = nullptr;      // int32 [tokens, 9]
  const void* route_weights = nullptr;  // FP32 [tokens, 9]
};

/// A routing call's fields from its arguments (dtypes: the defaults, BF16 in, int32 / FP32 out).
inline moe_routing_call moe_routing_call_of(target_id target, const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride,
                                            const void* gate_weight, const void* ids, const void* weights) {
  moe_routing_call c{};
  c.target = target;
  c.tokens = tokens;
  c.hidden_size = hidden_size;
  c.hidden_stride = hidden_stride;
  c.hidden_states = hidden;
  c.gate_weight = gate_weight;
  c.route_ids = ids;
  c.route_weights = weights;
  return c;
}

}  // namespace netra

namespace netra::contracts {

/// The first refusing field of a routing call to `Contract` (moe_router or moe_shared_gate), in
/// this order: target, the four dtypes, hidden_size (2048), tokens ([1, MaxTokens]),
/// hidden_stride (>= 2048, 16-byte aligned rows), then the pointers hidden_states and gate_weight
/// (16-byte aligned), route_ids and route_weights (4-byte aligned).
template <class Contract> decision admits_routing_call(const moe_routing_call& s) {
  using Target = typename Contract::target;
  constexpr i64 hidden_size = Contract::hidden_size, max_tokens = Contract::max_tokens;
  static_assert(hidden_size == 2048, "admits_routing_call: the refusal texts name 2048 hidden values");
  if (s.target != Target::id) return refuse("target", Target::name, static_cast<i64>(s.target));
  if (s.hidden != dtype::bf16) return refuse("hidden dtype", "bf16", static_cast<i64>(s.hidden));
  if (s.weight != dtype::bf16) return refuse("weight dtype", "bf16", static_cast<i64>(s.weight));
  if (s.ids != dtype::i32) return refuse("ids dtype", "i32", static_cast<i64>(s.ids));
  if (s.weights != dtype::f32) return refuse("weights dtype", "f32", static_cast<i64>(s.weights));
  if (s.hidden_size != hidden_size) return refuse("hidden_size", "== 2048", s.hidden_size);
  if (s.tokens < 1 || s.tokens > max_tokens) return refuse("tokens", "in [1, MaxTokens]", s.tokens);
  if (s.hidden_stride < hidden_size || s.hidden_stride % 8 != 0)
    return refuse("hidden_stride", ">= 2048 and a multiple of 8 elements (16-byte aligned rows)", s.hidden_stride);
  if (const decision d = require_pointer<16>("hidden_states", s.hidden_states); !d.admitted()) return d;
  if (const decision d = require_pointer<16>("gate_weight", s.gate_weight); !d.admitted()) return d;
  if (const decision d = require_pointer<4>("route_ids", s.route_ids); !d.admitted()) return d;
  return require_pointer<4>("route_weights", s.route_weights);
}

}  // namespace netra::contracts
