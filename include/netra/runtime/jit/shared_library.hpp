// netra/runtime/jit/shared_library.hpp — opening the first available of several sonames, and
// naming the file a loaded library came from (the JIT compilers' identity includes it).
#pragma once
#include <dlfcn.h>

#include <filesystem>
#include <initializer_list>
#include <string>

namespace netra::jit {

struct opened_library {
  void* handle = nullptr;
  std::string soname;  // the name that was opened
  std::string tried;   // the loader's message for every name that failed
};

/// dlopen()s the names in order and returns the first that loads.
inline opened_library open_first(std::initializer_list<std::string> names) {
  opened_library lib;
  for (const std::string& name : names) {
    if (name.empty()) continue;
    lib.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib.handle) {
      lib.soname = name;
      return lib;
    }
    const char* why = dlerror();
    lib.tried += (lib.tried.empty() ? "" : "; ") + std::string(why ? why : name);
  }
  return lib;
}

/// The real file (symlinks resolved) of the library that defines `symbol`, e.g.
/// /usr/local/cuda-13.0/lib/libnvrtc.so.13.0.88; empty if unknown.
inline std::string library_file(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  const auto real = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : real.string();
}

}  // namespace netra::jit
