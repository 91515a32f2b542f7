// src/c_api/moe_experts.cpp — the decode expert projections' and the decode block's C ABI
// (netra/c/moe_experts.h) over moe_experts_dispatcher and moe_block_dispatcher: each handle holds
// the tactics loaded for the device it was created on.
#include "netra/c/moe_experts.h"

#include <string>

#include "c_api/common.hpp"
#include "netra/runtime/ops/moe_block.hpp"
#include "netra/runtime/ops/moe_experts_dispatch.hpp"

struct netra_moe_experts_handle {
  netra::moe_experts_dispatcher d;
};

struct netra_moe_block_handle {
  netra::moe_block_dispatcher block;
};

using netra::c_api::explain;
using netra::c_api::guarded;
using netra::c_api::require;
using netra::c_api::run;
using netra::tensor_of;

namespace {
netra::moe_block_variant variant_of(netra_moe_block_variant v, const char* function) {
  if (v != NETRA_MOE_BLOCK_UNFUSED && v != NETRA_MOE_BLOCK_FUSED)
    throw netra::error(netra::status::invalid_argument,
                       std::string(function) + ": variant must be NETRA_MOE_BLOCK_UNFUSED or NETRA_MOE_BLOCK_FUSED, got " + std::to_string(static_cast<int>(v)));
  return static_cast<netra::moe_block_variant>(v);
}
/// The block's tensors, in moe_block_tensor_names order.
template <class... T> netra::moe_block_tensors block_tensors(const T*... t) {
  static_assert(sizeof...(T) == netra::moe_block_tensor_names.size(), "one DLTensor per block tensor");
  return {tensor_of(t)...};
}
}  // namespace

extern "C" {

NETRA_API netra_status netra_moe_experts_create(netra_moe_experts_handle** handle) { return netra::c_api::create("netra_moe_experts_create", handle); }

NETRA_API void netra_moe_experts_destroy(netra_moe_experts_handle* handle) { delete handle; }

NETRA_API netra_status netra_moe_expert_gate_up(netra_moe_experts_handle* handle, const DLTensor* hidden, const DLTensor* ids,
                                                const DLTensor* w13, const DLTensor* s13, const DLTensor* out, void* stream) {
  return guarded("netra_moe_expert_gate_up", [&] {
    require(handle, "netra_moe_expert_gate_up", "handle");
    return run("netra_moe_expert_gate_up", handle->d.gate_up, stream, hidden, ids, w13, s13, out);
  });
}

NETRA_API netra_status netra_moe_expert_down(netra_moe_experts_handle* handle, const DLTensor* act, const DLTensor* act_scales,
                                             const DLTensor* ids, const DLTensor* route_weights, const DLTensor* w2, const DLTensor* s2,
                                             const DLTensor* out, void* stream) {
  return guarded("netra_moe_expert_down", [&] {
    require(handle, "netra_moe_expert_down", "handle");
    return run("netra_moe_expert_down", handle->d.down, stream, act, act_scales, ids, route_weights, w2, s2, out);
  });
}

NETRA_API netra_status netra_moe_expert_gate_up_explain(netra_moe_experts_handle* handle, const DLTensor* hidden, const DLTensor* ids,
                                                        const DLTensor* w13, const DLTensor* s13, const DLTensor* out, char* text,
                                                        size_t capacity, size_t* length) {
  return guarded("netra_moe_expert_gate_up_explain", [&] {
    require(handle, "netra_moe_expert_gate_up_explain", "handle");
    return explain(handle->d.gate_up, text, capacity, length, hidden, ids, w13, s13, out);
  });
}

NETRA_API netra_status netra_moe_expert_down_explain(netra_moe_experts_handle* handle, const DLTensor* act, const DLTensor* act_scales,
                                                     const DLTensor* ids, const DLTensor* route_weights, const DLTensor* w2,
                                                     const DLTensor* s2, const DLTensor* out, char* text, size_t capacity, size_t* length) {
  return guarded("netra_moe_expert_down_explain", [&] {
    require(handle, "netra_moe_expert_down_explain", "handle");
    return explain(handle->d.down, text, capacity, length, act, act_scales, ids, route_weights, w2, s2, out);
  });
}

NETRA_API netra_status netra_moe_block_create(netra_moe_block_handle** handle) { return netra::c_api::create("netra_moe_block_create", handle); }

NETRA_API void netra_moe_block_destroy(netra_moe_block_handle* handle) { delete handle; }

NETRA_API netra_status netra_moe_block(netra_moe_block_handle* handle, const DLTensor* hidden, const DLTensor* router_weight,
                                       const DLTensor* shared_gate_weight, const DLTensor* w13, const DLTensor* s13, const DLTensor* w2,
                                       const DLTensor* s2, const DLTensor* ids, const DLTensor* route_weights, const DLTensor* gate_up,
                                       const DLTensor* act, const DLTensor* act_scales, const DLTensor* out, netra_moe_block_variant variant,
                                       void* stream) {
  return guarded("netra_moe_block", [&] {
    require(handle, "netra_moe_block", "handle");
    const auto t = block_tensors(hidden, router_weight, shared_gate_weight, w13, s13, w2, s2, ids, route_weights, gate_up, act, act_scales, out);
    if (handle->block.run(stream, t, variant_of(variant, "netra_moe_block"))) return netra::status::ok;
    netra::c_api::set_last_error("netra_moe_block: a stage has no tactic that admits its call (netra_moe_block_explain says which); "
                                 "nothing was launched");
    return netra::status::not_supported;
  });
}

NETRA_API netra_status netra_moe_block_explain(netra_moe_block_handle* handle, const DLTensor* hidden, const DLTensor* router_weight,
                                               const DLTensor* shared_gate_weight, const DLTensor* w13, const DLTensor* s13,
                                               const DLTensor* w2, const DLTensor* s2, const DLTensor* ids, const DLTensor* route_weights,
                                               const DLTensor* gate_up, const DLTensor* act, const DLTensor* act_scales, const DLTensor* out,
                                               netra_moe_block_variant variant, char* text, size_t capacity, size_t* length) {
  return guarded("netra_moe_block_explain", [&] {
    require(handle, "netra_moe_block_explain", "handle");
    const auto t = block_tensors(hidden, router_weight, shared_gate_weight, w13, s13, w2, s2, ids, route_weights, gate_up, act, act_scales, out);
    netra::c_api::copy_text(handle->block.explain(t, variant_of(variant, "netra_moe_block_explain")), text, capacity, length);
    return netra::status::ok;
  });
}

}  // extern "C"
