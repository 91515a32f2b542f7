// netra/runtime/ops/moe_routing_call.hpp — the tensors of a routing call (router, shared gate)
// built from raw pointers, for their checked C++ entry points (ops/moe_router.hpp,
// ops/moe_shared_gate.hpp).
#pragma once
#include "netra/contracts/moe/routing_call.hpp"
#include "netra/runtime/tensor.hpp"

namespace netra {

/// A routing call's tensors from raw pointers on device `on`: hidden BF16 row t at hidden + t *
/// hidden_stride, the gate weight as given, ids int32 / weights FP32 [tokens, 9].
inline moe_routing_call moe_routing_call_of(target_id target, device_ref on, const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride,
                                            const tensor_arg& gate_weight, const void* ids, const void* weights) {
  const i64 slots = moe::route_layout::slots;
  return {target, on, strided_tensor(hidden, dtype::bf16, on, {tokens, hidden_size}, {hidden_stride, 1}), gate_weight,
          strided_tensor(ids, dtype::i32, on, {tokens, slots}), strided_tensor(weights, dtype::f32, on, {tokens, slots})};
}

}  // namespace netra
