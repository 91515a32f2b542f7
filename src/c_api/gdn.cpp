// src/c_api/gdn.cpp — the gdn C ABI (netra/c/gdn.h) over gdn_dispatchers: the handle holds every
// gdn operation's tactics loaded for the device it was created on.
#include "netra/c/gdn.h"

#include "c_api/common.hpp"
#include "netra/runtime/ops/gdn_dispatch.hpp"

struct netra_gdn_handle {
  netra::gdn_dispatchers d;
};

using netra::c_api::guarded;
using netra::c_api::require;

extern "C" {

NETRA_API netra_status netra_gdn_create(netra_gdn_handle** handle) {
  return guarded("netra_gdn_create", [&] {
    require(handle, "netra_gdn_create", "handle");
    *handle = nullptr;
    *handle = new netra_gdn_handle{netra::gdn_dispatchers(netra::current_device(), netra::c_api::jit_options())};
    return netra::status::ok;
  });
}

NETRA_API void netra_gdn_destroy(netra_gdn_handle* handle) { delete handle; }

NETRA_API netra_status netra_gdn_conv(netra_gdn_handle* h, const DLTensor* x, const DLTensor* weight, const DLTensor* y, const DLTensor* slots,
                                      const DLTensor* state, const DLTensor* windows, void* stream) {
  return guarded("netra_gdn_conv", [&] {
    require(h, "netra_gdn_conv", "handle");
    return netra::c_api::run("netra_gdn_conv", h->d.conv, stream, x, weight, y, slots, state, windows);
  });
}

NETRA_API netra_status netra_gdn_precompute(netra_gdn_handle* h, const DLTensor* y, const DLTensor* a, const DLTensor* b, const DLTensor* a_log,
                                            const DLTensor* dt_bias, const DLTensor* q, const DLTensor* k, const DLTensor* decay,
                                            const DLTensor* beta, void* stream) {
  return guarded("netra_gdn_precompute", [&] {
    require(h, "netra_gdn_precompute", "handle");
    return netra::c_api::run("netra_gdn_precompute", h->d.precompute, stream, y, a, b, a_log, dt_bias, q, k, decay, beta);
  });
}

NETRA_API netra_status netra_gdn_verify(netra_gdn_handle* h, const DLTensor* q, const DLTensor* k, const DLTensor* v, const DLTensor* decay,
                                        const DLTensor* beta, const DLTensor* state, const DLTensor* slots, const DLTensor* out, void* stream) {
  return guarded("netra_gdn_verify", [&] {
    require(h, "netra_gdn_verify", "handle");
    return netra::c_api::run("netra_gdn_verify", h->d.verify, stream, q, k, v, decay, beta, state, slots, out);
  });
}

NETRA_API netra_status netra_gdn_m16(netra_gdn_handle* h, const DLTensor* q, const DLTensor* k, const DLTensor* v, const DLTensor* decay,
                                     const DLTensor* beta, const DLTensor* state, const DLTensor* slots, const DLTensor* out, void* stream) {
  return guarded("netra_gdn_m16", [&] {
    require(h, "netra_gdn_m16", "handle");
    return netra::c_api::run("netra_gdn_m16", h->d.m16, stream, q, k, v, decay, beta, state, slots, out);
  });
}

NETRA_API netra_status netra_gdn_replay(netra_gdn_handle* h, const DLTensor* q, const DLTensor* k, const DLTensor* v, const DLTensor* decay,
                                        const DLTensor* beta, const DLTensor* state, const DLTensor* slots, const DLTensor* accepted,
                                        const DLTensor* conv_windows, const DLTensor* conv_state, void* stream) {
  return guarded("netra_gdn_replay", [&] {
    require(h, "netra_gdn_replay", "handle");
    return netra::c_api::run("netra_gdn_replay", h->d.replay, stream, q, k, v, decay, beta, state, slots, accepted, conv_windows, conv_state);
  });
}

NETRA_API netra_status netra_gdn_replay_explain(netra_gdn_handle* h, const DLTensor* q, const DLTensor* k, const DLTensor* v, const DLTensor* decay,
                                                const DLTensor* beta, const DLTensor* state, const DLTensor* slots, const DLTensor* accepted,
                                                const DLTensor* conv_windows, const DLTensor* conv_state, char* text, size_t capacity,
                                                size_t* length) {
  return guarded("netra_gdn_replay_explain", [&] {
    require(h, "netra_gdn_replay_explain", "handle");
    return netra::c_api::explain(h->d.replay, text, capacity, length, q, k, v, decay, beta, state, slots, accepted, conv_windows, conv_state);
  });
}

}  // extern "C"
