// netra/runtime/ops/moe_shared_gate.hpp — the host launch path of contracts::moe_shared_gate: the
// signature of a call from its tensors (or raw pointers), the launch of an admitted signature
// (one kernel on the caller's stream, nothing checked again), and the checked C++ entry point.
// Nothing is allocated, looked up or synchronised here (safe inside graph capture).
#pragma once
#include "netra/kernels/moe/shared_gate.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/ops/moe_routing_call.hpp"

namespace netra {

inline moe_shared_gate_signature moe_shared_gate_call_signature(const device_info& device, const tensor_arg& hidden, const tensor_arg& gate_weight,
                                                                const tensor_arg& ids, const tensor_arg& weights) {
  return {{device.target, device_of(device), hidden, gate_weight, ids, weights}};
}

/// Records the kernel of a call Contract::admits(s) admitted.
template <class Contract> void launch_moe_shared_gate(const handle<Contract>& h, stream_handle stream, const moe_shared_gate_signature& s) {
  using kernel = kernels::moe_shared_gate_kernel<Contract>;
  const auto tokens = static_cast<u32>(s.tokens());
  h.template launch<kernel>(stream,
                            {static_cast<const u16*>(s.hidden.data), s.hidden_stride(), static_cast<const u16*>(s.gate_weight.data),
                             static_cast<i32*>(const_cast<void*>(s.ids.data)), static_cast<float*>(const_cast<void*>(s.weights.data)), tokens},
                            kernel::shape(tokens));
}

/// Route slot 8 of tokens 0..tokens-1: ids[t * 9 + 8] = 256, weights[t * 9 + 8] = sigmoid(hidden[t] .
/// gate_weight). Slots 0..7 are untouched. Throws (nothing launched, nothing written) when the
/// contract refuses the call.
template <class Contract>
void moe_shared_gate(const handle<Contract>& h, stream_handle stream, const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride,
                     const void* gate_weight, i32* ids, float* weights) {
  const device_ref on = device_of(h.device());
  const moe_shared_gate_signature s{moe_routing_call_of(h.device().target, on, hidden, tokens, hidden_size, hidden_stride,
                                                        strided_tensor(gate_weight, dtype::bf16, on, {hidden_size}), ids, weights)};
  require_admitted<Contract>("netra::moe_shared_gate", s);
  launch_moe_shared_gate(h, stream, s);
}

}  // namespace netra
