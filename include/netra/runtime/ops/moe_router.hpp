// netra/runtime/ops/moe_router.hpp — the host launch path of contracts::moe_router: validate the
// call's signature, then record the two kernels (logits, route) on the caller's stream with the
// handle's persistent workspace (the partial logits the route kernel reads), or for a contract
// with Cluster 16 its one cluster kernel (no workspace).
// Nothing is allocated, looked up or synchronised here (safe inside graph capture). One handle's
// workspace serves one stream at a time.
#pragma once
#include "netra/kernels/moe/router_cluster.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"

namespace netra {

inline moe_router_signature moe_router_call_signature(target_id target, const void* hidden, i64 tokens, i64 hidden_size,
                                                      i64 hidden_stride, const void* gate_weight, i64 experts, const i32* ids,
                                                      const float* weights, const void* workspace, u64 workspace_bytes,
                                                      const void* shared_gate_weight = nullptr) {
  return {moe_routing_call_of(target, hidden, tokens, hidden_size, hidden_stride, gate_weight, ids, weights), experts, workspace, workspace_bytes,
          shared_gate_weight};
}

/// Route slots 0..7 of tokens 0..tokens-1: ids[t * 9 + s] (int32), weights[t * 9 + s] (FP32), from
/// BF16 hidden [tokens, hidden_stride] and the BF16 gate weight [256, 2048]. Slot 8 is untouched,
/// unless the contract has SharedGate 1: then slot 8 is the shared-expert gate of
/// `shared_gate_weight` (BF16 [2048]), as contracts::moe_shared_gate writes it.
/// Throws (nothing launched, nothing written) when the contract refuses the call.
template <class Contract>
void moe_router(const handle<Contract>& h, stream_handle stream, const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride,
                const void* gate_weight, i64 experts, i32* ids, float* weights, const void* shared_gate_weight = nullptr) {
  const decision d = Contract::admits(moe_router_call_signature(h.device().target, hidden, tokens, hidden_size, hidden_stride, gate_weight,
                                                                experts, ids, weights, h.workspace(), h.workspace_bytes(), shared_gate_weight));
  if (!d.admitted()) throw error(refusal_status(d), "netra::moe_router: " + to_string(d));
  const auto m = static_cast<u32>(tokens);
  if constexpr (Contract::cluster != 0) {
    using one = kernels::moe_router_cluster_kernel<Contract>;
    h.template launch<one>(stream,
                           {static_cast<const u16*>(hidden), hidden_stride, static_cast<const u16*>(gate_weight), ids, weights, m,
                            static_cast<const u16*>(shared_gate_weight)},
                           one::shape(m));
  } else {
    using logits = kernels::moe_router_logits_kernel<Contract>;
    using route = kernels::moe_router_route_kernel<Contract>;
    auto* partials = static_cast<float*>(h.workspace());
    h.template launch<logits>(stream, {static_cast<const u16*>(hidden), hidden_stride, static_cast<const u16*>(gate_weight), partials, m},
                              logits::shape(m));
    h.template launch<route>(stream,
                             {partials, ids, weights, m, static_cast<const u16*>(hidden), hidden_stride, static_cast<const u16*>(shared_gate_weight)},
                             route::shape(m));
  }
}

}  // namespace netra
