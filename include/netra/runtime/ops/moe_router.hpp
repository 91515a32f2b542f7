// netra/runtime/ops/moe_router.hpp — the host launch path of contracts::moe_router: the signature
// of a call from its tensors (or raw pointers), the launch of an admitted signature — the two
// kernels (logits, route) with the workspace bound in it (the partial logits the route kernel
// reads), or for a contract with Cluster 16 its one cluster kernel (no workspace) — and the
// checked C++ entry point. Nothing is allocated, looked up or synchronised here (safe inside
// graph capture). One handle's workspace serves one stream at a time.
#pragma once
#include "netra/kernels/moe/router_cluster.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/ops/moe_routing_call.hpp"

namespace netra {

/// The signature of a router call on `device` (shared_gate_weight: a missing tensor unless the
/// contract has SharedGate 1).
inline moe_router_signature moe_router_call_signature(const device_info& device, const tensor_arg& hidden, const tensor_arg& gate_weight,
                                                      const tensor_arg& ids, const tensor_arg& weights, const tensor_arg& shared_gate_weight = {}) {
  moe_router_signature s{};
  static_cast<moe_routing_call&>(s) = {device.target, device_of(device), hidden, gate_weight, ids, weights};
  s.shared_gate_weight = shared_gate_weight;
  return s;
}

/// Records the kernels of a call Contract::admits(s) admitted.
template <class Contract> void launch_moe_router(const handle<Contract>& h, stream_handle stream, const moe_router_signature& s) {
  const auto m = static_cast<u32>(s.tokens());
  const auto* hidden = static_cast<const u16*>(s.hidden.data);
  const auto* weight = static_cast<const u16*>(s.gate_weight.data);
  auto* ids = static_cast<i32*>(const_cast<void*>(s.ids.data));
  auto* weights = static_cast<float*>(const_cast<void*>(s.weights.data));
  const auto* shared_gate = static_cast<const u16*>(s.shared_gate_weight.data);
  if constexpr (Contract::cluster != 0) {
    using one = kernels::moe_router_cluster_kernel<Contract>;
    h.template launch<one>(stream, {hidden, s.hidden_stride(), weight, ids, weights, m, shared_gate}, one::shape(m));
  } else {
    using logits = kernels::moe_router_logits_kernel<Contract>;
    using route = kernels::moe_router_route_kernel<Contract>;
    auto* partials = static_cast<float*>(const_cast<void*>(s.workspace));
    h.template launch<logits>(stream, {hidden, s.hidden_stride(), weight, partials, m}, logits::shape(m));
    h.template launch<route>(stream, {partials, ids, weights, m, hidden, s.hidden_stride(), shared_gate}, route::shape(m));
  }
}

/// Route slots 0..7 of tokens 0..tokens-1: ids[t * 9 + s] (int32), weights[t * 9 + s] (FP32), from
/// BF16 hidden [tokens, hidden_stride] and the BF16 gate weight [experts = 256, 2048]. Slot 8 is
/// untouched, unless the contract has SharedGate 1: then slot 8 is the shared-expert gate of
/// `shared_gate_weight` (BF16 [2048]), as contracts::moe_shared_gate writes it. Uses the handle's
/// workspace. Throws (nothing launched, nothing written) when the contract refuses the call.
template <class Contract>
void moe_router(const handle<Contract>& h, stream_handle stream, const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride,
                const void* gate_weight, i64 experts, i32* ids, float* weights, const void* shared_gate_weight = nullptr) {
  const device_ref on = device_of(h.device());
  moe_router_signature s{};
  static_cast<moe_routing_call&>(s) = moe_routing_call_of(h.device().target, on, hidden, tokens, hidden_size, hidden_stride,
                                                          strided_tensor(gate_weight, dtype::bf16, on, {experts, hidden_size}), ids, weights);
  s.workspace = h.workspace();
  s.workspace_bytes = h.workspace_bytes();
  if (shared_gate_weight) s.shared_gate_weight = strided_tensor(shared_gate_weight, dtype::bf16, on, {hidden_size});
  require_admitted<Contract>("netra::moe_router", s);
  launch_moe_router(h, stream, s);
}

}  // namespace netra
