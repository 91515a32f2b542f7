// src/c_api/moe_routing.cpp — the MoE routing C ABI (netra/c/moe_routing.h) over
// moe_routing_dispatcher: the handle holds the tactics loaded for the device it was created on.
#include "netra/c/moe_routing.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "c_api/common.hpp"
#include "netra/runtime/ops/moe_routing_dispatch.hpp"

struct netra_moe_routing_handle {
  netra::moe_routing_dispatcher dispatcher;
};

using netra::c_api::guarded;
using netra::c_api::require;

namespace {
netra::status declined(const char* name, const std::string& call) {
  netra::c_api::set_last_error(std::string(name) + ": no tactic admits " + call + " (" + name + "_explain says why); nothing was launched");
  return netra::status::not_supported;
}
void copy_text(const std::string& s, char* text, size_t capacity, size_t* length) {
  if (length) *length = s.size();
  if (text && capacity > 0) {
    const std::size_t n = std::min(s.size(), capacity - 1);
    std::memcpy(text, s.data(), n);
    text[n] = '\0';
  }
}
}  // namespace

extern "C" {

NETRA_API netra_status netra_moe_routing_create(netra_moe_routing_handle** handle) {
  return guarded("netra_moe_routing_create", [&] {
    require(handle, "netra_moe_routing_create", "handle");
    *handle = nullptr;
    *handle = new netra_moe_routing_handle{netra::moe_routing_dispatcher(netra::current_device(), netra::c_api::jit_options())};
    return netra::status::ok;
  });
}

NETRA_API void netra_moe_routing_destroy(netra_moe_routing_handle* handle) { delete handle; }

NETRA_API netra_status netra_moe_act_quant(netra_moe_routing_handle* handle, const void* in, int64_t rows, int64_t cols, int64_t row_stride,
                                           void* out, float* scales, void* stream) {
  return guarded("netra_moe_act_quant", [&] {
    require(handle, "netra_moe_act_quant", "handle");
    if (handle->dispatcher.act_quant(stream, in, rows, cols, row_stride, out, scales)) return netra::status::ok;
    return declined("netra_moe_act_quant", "rows " + std::to_string(rows) + ", cols " + std::to_string(cols) + ", row_stride " +
                                               std::to_string(row_stride));
  });
}

NETRA_API netra_status netra_moe_router(netra_moe_routing_handle* handle, const void* hidden, int64_t tokens, int64_t hidden_size,
                                        int64_t hidden_stride, const void* gate_weight, int64_t experts, int32_t* ids, float* weights,
                                        void* stream) {
  return guarded("netra_moe_router", [&] {
    require(handle, "netra_moe_router", "handle");
    if (handle->dispatcher.router(stream, hidden, tokens, hidden_size, hidden_stride, gate_weight, experts, ids, weights))
      return netra::status::ok;
    return declined("netra_moe_router", "tokens " + std::to_string(tokens) + ", hidden_size " + std::to_string(hidden_size) + ", experts " +
                                            std::to_string(experts));
  });
}

NETRA_API netra_status netra_moe_shared_gate(netra_moe_routing_handle* handle, const void* hidden, int64_t tokens, int64_t hidden_size,
                                             int64_t hidden_stride, const void* gate_weight, int32_t* ids, float* weights, void* stream) {
  return guarded("netra_moe_shared_gate", [&] {
    require(handle, "netra_moe_shared_gate", "handle");
    if (handle->dispatcher.shared_gate(stream, hidden, tokens, hidden_size, hidden_stride, gate_weight, ids, weights)) return netra::status::ok;
    return declined("netra_moe_shared_gate", "tokens " + std::to_string(tokens) + ", hidden_size " + std::to_string(hidden_size));
  });
}

NETRA_API netra_status netra_moe_act_quant_explain(netra_moe_routing_handle* handle, const void* in, int64_t rows, int64_t cols,
                                                   int64_t row_stride, const void* out, const float* scales, char* text, size_t capacity,
                                                   size_t* length) {
  return guarded("netra_moe_act_quant_explain", [&] {
    require(handle, "netra_moe_act_quant_explain", "handle");
    copy_text(handle->dispatcher.explain_act_quant(in, rows, cols, row_stride, out, scales).text(), text, capacity, length);
    return netra::status::ok;
  });
}

NETRA_API netra_status netra_moe_router_explain(netra_moe_routing_handle* handle, const void* hidden, int64_t tokens, int64_t hidden_size,
                                                int64_t hidden_stride, const void* gate_weight, int64_t experts, const int32_t* ids,
                                                const float* weights, char* text, size_t capacity, size_t* length) {
  return guarded("netra_moe_router_explain", [&] {
    require(handle, "netra_moe_router_explain", "handle");
    copy_text(handle->dispatcher.explain_router(hidden, tokens, hidden_size, hidden_stride, gate_weight, experts, ids, weights).text(), text,
              capacity, length);
    return netra::status::ok;
  });
}

NETRA_API netra_status netra_moe_shared_gate_explain(netra_moe_routing_handle* handle, const void* hidden, int64_t tokens, int64_t hidden_size,
                                                     int64_t hidden_stride, const void* gate_weight, const int32_t* ids, const float* weights,
                                                     char* text, size_t capacity, size_t* length) {
  return guarded("netra_moe_shared_gate_explain", [&] {
    require(handle, "netra_moe_shared_gate_explain", "handle");
    copy_text(handle->dispatcher.explain_shared_gate(hidden, tokens, hidden_size, hidden_stride, gate_weight, ids, weights).text(), text, capacity,
              length);
    return netra::status::ok;
  });
}

}  // extern "C"
