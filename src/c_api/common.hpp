// src/c_api/common.hpp — the glue every per-operation C file of libnetra shares:
//   guarded(name, body)   runs body() (returning netra::status) inside one try/catch, so no C++
//                         exception crosses the C boundary; a thrown netra::error becomes its
//                         status and this thread's last error; success clears the last error;
//   require(ptr, ...)     refuses a NULL handle or output argument with INVALID_ARGUMENT;
//   jit_options()         how handles created through the C ABI JIT-compile (cache, headers, log);
//   current_device()      (netra/runtime/backend.hpp) is the device handles are created on.
// Per-operation files (src/c_api/argmax.cpp, ...) define the handle struct and the extern "C"
// functions of their header in include/netra/c/ (docs/c-abi.md).
#pragma once
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "netra/c/netra.h"
#include "netra/runtime/backend.hpp"
#include "netra/runtime/error.hpp"
#include "netra/runtime/jit/compile.hpp"

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

}  // namespace netra::c_api
