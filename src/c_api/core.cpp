// src/c_api/core.cpp — the core of the C ABI (netra/c/netra.h): the thread-local last error,
// status names, the ABI version, and the JIT options of C-ABI handles.
#include <dlfcn.h>

#include <filesystem>
#include <string>

#include "c_api/common.hpp"

namespace {
thread_local std::string last_error;
}

namespace netra::c_api {

void set_last_error(std::string_view message) { last_error.assign(message); }

jit::options jit_options() {
  jit::options o;
  Dl_info info{};
  if (std::getenv("NETRA_INCLUDE_DIR") == nullptr && dladdr(reinterpret_cast<const void*>(&netra_abi_version), &info) != 0 &&
      info.dli_fname != nullptr) {
    // An installed libnetra (<prefix>/lib/libnetra.so) JIT-compiles the headers installed with it.
    const auto installed = std::filesystem::path(info.dli_fname).parent_path().parent_path() / "include";
    std::error_code ec;
    if (std::filesystem::exists(installed / "netra" / "instantiate", ec)) o.include_root = installed;
  }
  return o;
}

}  // namespace netra::c_api

extern "C" {

NETRA_API const char* netra_last_error(void) { return last_error.c_str(); }

NETRA_API const char* netra_status_name(netra_status s) { return netra::status_name(static_cast<netra::status>(s)); }

NETRA_API int netra_abi_version(void) { return NETRA_ABI_VERSION; }

}  // extern "C"
