// src/c_api/common.hpp — the glue every per-operation C file of libnetra shares:
//   guarded(name, body)   runs body() (returning netra::status) inside one try/catch, so no C++
//                         exception crosses the C boundary; a thrown netra::error becomes its
//                         status and this thread's last error; success clears the last error;
//   require(ptr, ...)     refuses a NULL handle or output argument with INVALID_ARGUMENT;
//   jit_options()         how handles created through the C ABI JIT-compile (cache, headers, log);
//   create(function, h)   netra_<op>_create's body for a handle struct of dispatchers;
//   current_device()      (netra/runtime/backend.hpp) is the device handles are created on.
//   run(function, dispatcher, stream, tensors...)      one call of an op_dispatcher from
//                         DLTensors: its signature, the one dispatch path, NOT_SUPPORTED with
//                         the call's tensors named when no tactic admits it;
//   explain(function, dispatcher, text, capacity, length, tensors...)   the same call's
//                         explanation, copied NUL-terminated (the *_explain functions).
// Per-operation files (src/c_api/argmax.cpp, ...) define the handle struct and the extern "C"
// functions of their header in include/netra/c/, each a line over run()/explain() (docs/c-abi.md).
#pragma once
#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "netra/c/netra.h"
#include "netra/runtime/backend.hpp"
#include "netra/runtime/error.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/jit/compile.hpp"
#include "netra/runtime/op_dispatcher.hpp"

namespace netra::c_api {

static_assert(NETRA_STATUS_OK == static_cast<int>(status::ok) && NETRA_STATUS_INVALID_ARGUMENT == static_cast<int>(status::invalid_argument) &&
                  NETRA_STATUS_NOT_SUPPORTED == static_cast<int>(status::not_supported) &&
                  NETRA_STATUS_WRONG_TARGET == static_cast<int>(status::wrong_target) &&
                  NETRA_STATUS_BACKEND_ERROR == static_cast<int>(status::backend_error) &&
                  NETRA_STATUS_UNAVAILABLE == static_cast<int>(status::unavailable) &&
                  NETRA_STATUS_COMPILE_ERROR == static_cast<int>(status::compile_error) &&
                  NETRA_STATUS_WORKSPACE_TOO_SMALL == static_cast<int>(status::workspace_too_small) &&
                  NETRA_STATUS_INTERNAL == static_cast<int>(status::internal),
              "netra_status must mirror netra::status");

static_assert(kDLCUDA == 2 && kDLROCM == 10 && kDLCPU == 1, "device_of (runtime/backend.hpp) numbers devices as DLPack does");

/// Sets the calling thread's last error (core.cpp).
void set_last_error(std::string_view message);

/// JIT options of handles created through the C ABI: the default cache, the headers installed
/// next to libnetra (else the tree it was built from), log lines on stderr (core.cpp).
jit::options jit_options();

template <class Body> netra_status guarded(const char* function, Body&& body) noexcept {
  try {
    const status s = body();
    if (s == status::ok) set_last_error({});
    return static_cast<netra_status>(s);
  } catch (const error& e) {
    set_last_error(e.what());
    return static_cast<netra_status>(e.code());
  } catch (const std::bad_alloc&) {
    set_last_error(std::string(function) + ": out of host memory");
  } catch (const std::exception& e) {
    set_last_error(std::string(function) + ": " + e.what());
  } catch (...) {
    set_last_error(std::string(function) + ": unknown exception");
  }
  return NETRA_STATUS_INTERNAL;
}

/// Throws status::invalid_argument naming `what` when `p` is NULL.
inline void require(const void* p, const char* function, const char* what) {
  if (p == nullptr) throw error(status::invalid_argument, std::string(function) + ": " + what + " is NULL");
}

/// netra_<op>_create: a new Handle (an aggregate of dispatchers, each built from the calling
/// thread's current device and jit_options()) in *handle, NULL on failure.
template <class Handle> netra_status create(const char* function, Handle** handle) {
  return guarded(function, [&] {
    require(handle, function, "handle");
    *handle = nullptr;
    *handle = new Handle{{current_device(), jit_options()}};
    return status::ok;
  });
}

/// "logits float32 shape [16, 248320] strides [248320, 1] on cuda:0" (a NOT_SUPPORTED message).
inline std::string tensor_text(const char* name, const tensor_arg& t) {
  if (t.rank < 0) return std::string(name) + " NULL";
  decision shape = refuse(name, "", 0, value_kind::shape), strides = refuse(name, "", 0, value_kind::strides);
  shape.count = strides.count = std::min(t.rank, max_tensor_rank);
  for (i32 i = 0; i < shape.count; ++i) {
    shape.values[i] = t.shape[i];
    strides.values[i] = t.strides[i];
  }
  decision type = refuse(name, "", t.type);
  type.count = 2;
  type.values[1] = t.dlpack_dtype;
  return std::string(name) + " " + value_text(type) + " " + value_text(shape) + " " + value_text(strides) + " on " +
         device_text(t.device.type, t.device.id);
}

/// One call of `dispatcher` from the caller's DLTensors (in Op::tensor_names order).
template <class Op, class... Tensors>
status run(const char* function, const op_dispatcher<Op>& dispatcher, void* stream, const Tensors*... tensors) {
  const typename Op::signature s = dispatcher.signature_of(tensor_of(tensors)...);
  if (dispatcher.run(stream, s)) return status::ok;
  std::string call;
  std::size_t i = 0;
  ((call += (i ? ", " : "") + tensor_text(Op::tensor_names[i], tensor_of(tensors)), ++i), ...);
  set_last_error(std::string(function) + ": no tactic admits " + call + " (" + function + "_explain says why); nothing was launched");
  return status::not_supported;
}

/// Copies `s` NUL-terminated and truncated to `capacity` bytes; *length gets its full length.
inline void copy_text(const std::string& s, char* text, size_t capacity, size_t* length) {
  if (length) *length = s.size();
  if (text && capacity > 0) {
    const std::size_t n = std::min(s.size(), capacity - 1);
    std::memcpy(text, s.data(), n);
    text[n] = '\0';
  }
}

/// The explanation of the same call: every tactic's decision and the outcome.
template <class Op, class... Tensors>
status explain(const op_dispatcher<Op>& dispatcher, char* text, size_t capacity, size_t* length, const Tensors*... tensors) {
  copy_text(dispatcher.explain(dispatcher.signature_of(tensor_of(tensors)...)).text(), text, capacity, length);
  return status::ok;
}

}  // namespace netra::c_api
