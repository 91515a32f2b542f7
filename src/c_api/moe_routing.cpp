// src/c_api/moe_routing.cpp — the MoE routing C ABI (netra/c/moe_routing.h) over
// moe_routing_dispatcher: the handle holds the tactics loaded for the device it was created on.
#include "netra/c/moe_routing.h"

#include "c_api/common.hpp"
#include "netra/runtime/ops/moe_routing_dispatch.hpp"

struct netra_moe_routing_handle {
  netra::moe_routing_dispatcher d;
};

using netra::c_api::explain;
using netra::c_api::guarded;
using netra::c_api::require;
using netra::c_api::run;

extern "C" {

NETRA_API netra_status netra_moe_routing_create(netra_moe_routing_handle** handle) { return netra::c_api::create("netra_moe_routing_create", handle); }

NETRA_API void netra_moe_routing_destroy(netra_moe_routing_handle* handle) { delete handle; }

NETRA_API netra_status netra_moe_act_quant(netra_moe_routing_handle* handle, const DLTensor* in, const DLTensor* out, const DLTensor* scales,
                                           void* stream) {
  return guarded("netra_moe_act_quant", [&] {
    require(handle, "netra_moe_act_quant", "handle");
    return run("netra_moe_act_quant", handle->d.act_quant, stream, in, out, scales);
  });
}

NETRA_API netra_status netra_moe_router(netra_moe_routing_handle* handle, const DLTensor* hidden, const DLTensor* gate_weight, const DLTensor* ids,
                                        const DLTensor* weights, void* stream) {
  return guarded("netra_moe_router", [&] {
    require(handle, "netra_moe_router", "handle");
    return run("netra_moe_router", handle->d.router, stream, hidden, gate_weight, ids, weights);
  });
}

NETRA_API netra_status netra_moe_shared_gate(netra_moe_routing_handle* handle, const DLTensor* hidden, const DLTensor* gate_weight,
                                             const DLTensor* ids, const DLTensor* weights, void* stream) {
  return guarded("netra_moe_shared_gate", [&] {
    require(handle, "netra_moe_shared_gate", "handle");
    return run("netra_moe_shared_gate", handle->d.shared_gate, stream, hidden, gate_weight, ids, weights);
  });
}

NETRA_API netra_status netra_moe_act_quant_explain(netra_moe_routing_handle* handle, const DLTensor* in, const DLTensor* out,
                                                   const DLTensor* scales, char* text, size_t capacity, size_t* length) {
  return guarded("netra_moe_act_quant_explain", [&] {
    require(handle, "netra_moe_act_quant_explain", "handle");
    return explain(handle->d.act_quant, text, capacity, length, in, out, scales);
  });
}

NETRA_API netra_status netra_moe_router_explain(netra_moe_routing_handle* handle, const DLTensor* hidden, const DLTensor* gate_weight,
                                                const DLTensor* ids, const DLTensor* weights, char* text, size_t capacity, size_t* length) {
  return guarded("netra_moe_router_explain", [&] {
    require(handle, "netra_moe_router_explain", "handle");
    return explain(handle->d.router, text, capacity, length, hidden, gate_weight, ids, weights);
  });
}

NETRA_API netra_status netra_moe_shared_gate_explain(netra_moe_routing_handle* handle, const DLTensor* hidden, const DLTensor* gate_weight,
                                                     const DLTensor* ids, const DLTensor* weights, char* text, size_t capacity, size_t* length) {
  return guarded("netra_moe_shared_gate_explain", [&] {
    require(handle, "netra_moe_shared_gate_explain", "handle");
    return explain(handle->d.shared_gate, text, capacity, length, hidden, gate_weight, ids, weights);
  });
}

}  // extern "C"
