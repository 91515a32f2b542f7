// netra/runtime/ops/moe_shared_gate.hpp — the host launch path of contracts::moe_shared_gate:
// validate the call's signature, then record the one kernel on the caller's stream. Nothing is
// allocated, looked up or synchronised here (safe inside graph capture).
#pragma once
#include "netra/kernels/moe/shared_gate.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"

namespace netra {

inline moe_shared_gate_signature moe_shared_gate_call_signature(target_id target, const void* hidden, i64 tokens, i64 hidden_size,
                                                                i64 hidden_stride, const void* gate_weight, const i32* ids,
                                                                const float* weights) {
  return {moe_routing_call_of(target, hidden, tokens, hidden_size, hidden_stride, gate_weight, ids, weights)};
}

/// Route slot 8 of tokens 0..tokens-1: ids[t * 9 + 8] = 256, weights[t * 9 + 8] = sigmoid(hidden[t] .
/// gate_weight). Slots 0..7 are untouched. Throws (nothing launched, nothing written) when the
/// contract refuses the call.
template <class Contract>
void moe_shared_gate(const handle<Contract>& h, stream_handle stream, const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride,
                     const void* gate_weight, i32* ids, float* weights) {
  const decision d =
      Contract::admits(moe_shared_gate_call_signature(h.device().target, hidden, tokens, hidden_size, hidden_stride, gate_weight, ids, weights));
  if (!d.admitted()) throw error(refusal_status(d), "netra::moe_shared_gate: " + to_string(d));
  using kernel = kernels::moe_shared_gate_kernel<Contract>;
  h.template launch<kernel>(
      stream, {static_cast<const u16*>(hidden), hidden_stride, static_cast<const u16*>(gate_weight), ids, weights, static_cast<u32>(tokens)},
      kernel::shape(static_cast<u32>(tokens)));
}

}  // namespace netra
