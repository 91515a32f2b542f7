// src/c_api/norm.cpp — the normalization C ABI (netra/c/norm.h) over norm_dispatcher: the handle
// holds the tactics loaded for the device it was created on. The call's signature comes from its
// DLTensors (c_api's tensor_of) plus the operation, weight form and eps it names.
#include "netra/c/norm.h"

#include <string>

#include "c_api/common.hpp"
#include "netra/runtime/ops/norm_dispatch.hpp"

struct netra_norm_handle {
  netra::norm_dispatcher dispatcher;
};

namespace {
using netra::c_api::guarded;
using netra::c_api::require;
using netra::tensor_of;

netra::norm_signature signature(const netra_norm_handle* h, netra::norm_kind kind, int zero_centred, float eps, const DLTensor* x,
                                const DLTensor* residual, const DLTensor* gate, const DLTensor* weight, const DLTensor* out,
                                const DLTensor* scales) {
  return netra::norm_call(h->dispatcher, kind, zero_centred ? netra::norm_weight::zero_centred : netra::norm_weight::plain, eps, tensor_of(x),
                          tensor_of(residual), tensor_of(gate), tensor_of(weight), tensor_of(out), tensor_of(scales));
}

/// Dispatch one call; NOT_SUPPORTED names every tensor of it (as c_api::run does).
netra::status run(const char* function, const netra_norm_handle* h, const netra::norm_signature& s, void* stream) {
  if (h->dispatcher.run(stream, s)) return netra::status::ok;
  const netra::tensor_arg* tensors[] = {&s.x, &s.residual, &s.gate, &s.weight, &s.out, &s.scales};
  std::string call;
  for (std::size_t i = 0; i < 6; ++i)
    if (tensors[i]->rank >= 0) call += (call.empty() ? "" : ", ") + netra::c_api::tensor_text(netra::norm_op::tensor_names[i], *tensors[i]);
  netra::c_api::set_last_error(std::string(function) + ": no tactic admits " + call + " (netra_norm_explain says why); nothing was launched");
  return netra::status::not_supported;
}
}  // namespace

extern "C" {

NETRA_API netra_status netra_norm_create(netra_norm_handle** handle) {
  return guarded("netra_norm_create", [&] {
    require(handle, "netra_norm_create", "handle");
    *handle = nullptr;
    *handle = new netra_norm_handle{netra::norm_dispatcher(netra::current_device(), netra::c_api::jit_options())};
    return netra::status::ok;
  });
}

NETRA_API void netra_norm_destroy(netra_norm_handle* handle) { delete handle; }

NETRA_API netra_status netra_rms_norm(netra_norm_handle* handle, const DLTensor* x, const DLTensor* weight, const DLTensor* out,
                                      const DLTensor* scales, float eps, int zero_centred, void* stream) {
  return guarded("netra_rms_norm", [&] {
    require(handle, "netra_rms_norm", "handle");
    return run("netra_rms_norm", handle, signature(handle, netra::norm_kind::rms, zero_centred, eps, x, nullptr, nullptr, weight, out, scales), stream);
  });
}

NETRA_API netra_status netra_add_rms_norm(netra_norm_handle* handle, const DLTensor* x, const DLTensor* residual, const DLTensor* weight,
                                          const DLTensor* out, const DLTensor* scales, float eps, int zero_centred, void* stream) {
  return guarded("netra_add_rms_norm", [&] {
    require(handle, "netra_add_rms_norm", "handle");
    return run("netra_add_rms_norm", handle,
               signature(handle, netra::norm_kind::add_rms, zero_centred, eps, x, residual, nullptr, weight, out, scales), stream);
  });
}

NETRA_API netra_status netra_gated_rms_norm(netra_norm_handle* handle, const DLTensor* x, const DLTensor* gate, const DLTensor* weight,
                                            const DLTensor* out, const DLTensor* scales, float eps, void* stream) {
  return guarded("netra_gated_rms_norm", [&] {
    require(handle, "netra_gated_rms_norm", "handle");
    return run("netra_gated_rms_norm", handle, signature(handle, netra::norm_kind::gated, 0, eps, x, nullptr, gate, weight, out, scales), stream);
  });
}

NETRA_API netra_status netra_norm_explain(netra_norm_handle* handle, int kind, const DLTensor* x, const DLTensor* residual, const DLTensor* gate,
                                          const DLTensor* weight, const DLTensor* out, const DLTensor* scales, float eps, int zero_centred,
                                          char* text, size_t capacity, size_t* length) {
  return guarded("netra_norm_explain", [&] {
    require(handle, "netra_norm_explain", "handle");
    if (kind < 0 || kind > 2) throw netra::error(netra::status::invalid_argument, "netra_norm_explain: kind must be 0, 1 or 2");
    const auto s = signature(handle, static_cast<netra::norm_kind>(kind), zero_centred, eps, x, residual, gate, weight, out, scales);
    netra::c_api::copy_text(handle->dispatcher.explain(s).text(), text, capacity, length);
    return netra::status::ok;
  });
}

}  // extern "C"
