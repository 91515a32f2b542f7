// src/c_api/argmax.cpp — the argmax C ABI (netra/c/argmax.h) over argmax_dispatcher: the handle
// holds the tactics loaded for the device it was created on.
#include "netra/c/argmax.h"

#include "c_api/common.hpp"
#include "netra/runtime/ops/argmax_dispatch.hpp"

struct netra_argmax_handle {
  netra::argmax_dispatcher dispatcher;
};

using netra::c_api::guarded;
using netra::c_api::require;

extern "C" {

NETRA_API netra_status netra_argmax_create(netra_argmax_handle** handle) { return netra::c_api::create("netra_argmax_create", handle); }

NETRA_API void netra_argmax_destroy(netra_argmax_handle* handle) { delete handle; }

NETRA_API netra_status netra_argmax(netra_argmax_handle* handle, const DLTensor* logits, const DLTensor* out, void* stream) {
  return guarded("netra_argmax", [&] {
    require(handle, "netra_argmax", "handle");
    return netra::c_api::run("netra_argmax", handle->dispatcher, stream, logits, out);
  });
}

NETRA_API netra_status netra_argmax_explain(netra_argmax_handle* handle, const DLTensor* logits, const DLTensor* out, char* text,
                                            size_t capacity, size_t* length) {
  return guarded("netra_argmax_explain", [&] {
    require(handle, "netra_argmax_explain", "handle");
    return netra::c_api::explain(handle->dispatcher, text, capacity, length, logits, out);
  });
}

}  // extern "C"
