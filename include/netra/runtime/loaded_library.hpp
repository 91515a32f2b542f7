// netra/runtime/loaded_library.hpp — APIs netra loads at run time (the CUDA driver, the HIP
// runtime, NVRTC, hipRTC): open the first available soname, resolve entry points with a list of
// what is missing, load each table once per process, and name the file a library came from (the
// JIT compilers' identity includes it).
#pragma once
#include <dlfcn.h>

#include <filesystem>
#include <initializer_list>
#include <string>

#include "netra/runtime/error.hpp"

namespace netra {

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

/// Resolves `name` into `slot`; appends the name to `missing` when the library lacks it.
template <class Function> void resolve_entry(void* handle, const char* name, Function*& slot, std::string& missing) {
  slot = reinterpret_cast<Function*>(dlsym(handle, name));
  if (slot == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
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

/// The process-wide instance of an API table, loaded on first use by `Table::load()` (which
/// returns an empty string, or why the API is unusable). Throws status::unavailable with that
/// reason on every call once loading failed.
/// A magic static, not std::call_once: call_once dispatches through a std:: template that an
/// executable and libnetra both instantiate, and the executable's copy would initialise its own
/// table instead of libnetra's.
template <class Table> const Table& load_once() {
  struct loaded {
    Table table;
    std::string failure;
  };
  static const loaded instance = [] {
    loaded l;
    l.failure = l.table.load();
    return l;
  }();
  if (!instance.failure.empty()) throw error(status::unavailable, instance.failure);
  return instance.table;
}

}  // namespace netra
