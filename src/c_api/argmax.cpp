// src/c_api/argmax.cpp — the argmax C ABI (netra/c/argmax.h) over argmax_dispatcher: the handle
// holds the tactics loaded for the device it was created on.
#include "netra/c/argmax.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "c_api/common.hpp"
#include "netra/runtime/ops/argmax_dispatch.hpp"

struct netra_argmax_handle {
  netra::argmax_dispatcher dispatcher;
};

using netra::c_api::guarded;
using netra::c_api::require;

extern "C" {

NETRA_API netra_status netra_argmax_create(netra_argmax_handle** handle) {
  return guarded("netra_argmax_create", [&] {
    require(handle, "netra_argmax_create", "handle");
    *handle = nullptr;
    *handle = new netra_argmax_handle{netra::argmax_dispatcher(netra::current_device(), netra::c_api::jit_options())};
    return netra::status::ok;
  });
}

NETRA_API void netra_argmax_destroy(netra_argmax_handle* handle) { delete handle; }

NETRA_API netra_status netra_argmax(netra_argmax_handle* handle, const float* logits, int64_t rows, int64_t cols, int64_t row_stride,
                                    int64_t* out, void* stream) {
  return guarded("netra_argmax", [&] {
    require(handle, "netra_argmax", "handle");
    if (handle->dispatcher.run(stream, logits, rows, cols, row_stride, out)) return netra::status::ok;
    netra::c_api::set_last_error("netra_argmax: no tactic admits rows " + std::to_string(rows) + ", cols " + std::to_string(cols) +
                                 ", row_stride " + std::to_string(row_stride) + " (netra_argmax_explain says why); nothing was launched");
    return netra::status::not_supported;
  });
}

NETRA_API netra_status netra_argmax_explain(netra_argmax_handle* handle, const float* logits, int64_t rows, int64_t cols,
                                            int64_t row_stride, const int64_t* out, char* text, size_t capacity, size_t* length) {
  return guarded("netra_argmax_explain", [&] {
    require(handle, "netra_argmax_explain", "handle");
    const std::string s = handle->dispatcher.explain(logits, rows, cols, row_stride, out).text();
    if (length) *length = s.size();
    if (text && capacity > 0) {
      const std::size_t n = std::min(s.size(), capacity - 1);
      std::memcpy(text, s.data(), n);
      text[n] = '\0';
    }
    return netra::status::ok;
  });
}

}  // extern "C"
