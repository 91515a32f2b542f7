// netra/runtime/jit/nvrtc.hpp — NVRTC, loaded at run time, compiling one instantiation source to
// an sm_90a cubin. Works without a GPU (CI compiles the device headers through it).
//
// libnvrtc is opened with dlopen (so.13, so.12, unversioned, then $CUDA_HOME/lib64 and
// /usr/local/cuda/lib64) and resolved once. Options: -default-device, because contract types
// also carry host-side member functions without execution-space annotations, which NVRTC
// would otherwise reject as host code.
#pragma once
#include <nvrtc.h>

#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "netra/runtime/error.hpp"
#include "netra/runtime/loaded_library.hpp"

namespace netra::jit {

struct nvrtc_library {
#define NETRA_NVRTC_ENTRIES(X)                                                                                     \
  X(nvrtcVersion) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) \
  X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetErrorString)
#define NETRA_NVRTC_ENTRY(name) decltype(&::name) name = nullptr;
  NETRA_NVRTC_ENTRIES(NETRA_NVRTC_ENTRY)
#undef NETRA_NVRTC_ENTRY
  /// "NVRTC 13.0 (/usr/local/cuda-13.0/lib/libnvrtc.so.13.0.88)": part of every cache key.
  std::string identity;

  /// The process-wide table; throws status::unavailable when no libnvrtc can be loaded.
  static const nvrtc_library& get() {
    return load_once<nvrtc_library>();
  }

 private:
  template <class Table> friend const Table& ::netra::load_once();
  std::string load() {
    const char* cuda_home = std::getenv("CUDA_HOME");
    const opened_library lib = open_first({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                           cuda_home ? std::string(cuda_home) + "/lib64/libnvrtc.so" : std::string(),
                                           "/usr/local/cuda/lib64/libnvrtc.so"});
    if (!lib.handle) return "netra: NVRTC is not available (" + lib.tried + ")";
    std::string missing;
#define NETRA_NVRTC_RESOLVE(name) resolve_entry(lib.handle, #name, name, missing);
    NETRA_NVRTC_ENTRIES(NETRA_NVRTC_RESOLVE)
#undef NETRA_NVRTC_RESOLVE
    if (!missing.empty()) return "netra: " + lib.soname + " lacks " + missing;
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    if (major < 12) return "netra: " + lib.soname + " is NVRTC " + std::to_string(major) + "." + std::to_string(minor) + "; sm_90a needs 12 or later";
    identity = "NVRTC " + std::to_string(major) + "." + std::to_string(minor) + " (" +
               library_file(reinterpret_cast<const void*>(nvrtcCompileProgram)) + ")";
    return {};
  }
#undef NETRA_NVRTC_ENTRIES
};

/// The options netra compiles sm_90a instances with (besides -I<include root>).
inline std::vector<std::string> nvrtc_options() { return {"--gpu-architecture=sm_90a", "-std=c++20", "-default-device"}; }

/// Compiles `source` (named `name` in diagnostics) to a cubin. Throws status::compile_error
/// with NVRTC's log when compilation fails.
inline std::vector<std::byte> nvrtc_compile(const std::string& source, const std::string& name, const std::vector<std::string>& options) {
  const auto& lib = nvrtc_library::get();
  nvrtcProgram program = nullptr;
  if (const nvrtcResult r = lib.nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr); r != NVRTC_SUCCESS)
    throw error(status::compile_error, std::string("netra: nvrtcCreateProgram failed: ") + lib.nvrtcGetErrorString(r));
  struct destroy_on_exit {
    const nvrtc_library& lib;
    nvrtcProgram& program;
    ~destroy_on_exit() { lib.nvrtcDestroyProgram(&program); }
  } guard{lib, program};
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult compiled = lib.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  lib.nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) lib.nvrtcGetProgramLog(program, log.data());
  if (compiled != NVRTC_SUCCESS)
    throw error(status::compile_error, "netra: NVRTC failed to compile " + name + " (" + lib.nvrtcGetErrorString(compiled) + "):\n" + log);
  std::size_t size = 0;
  lib.nvrtcGetCUBINSize(program, &size);
  std::vector<std::byte> cubin(size);
  if (size == 0 || lib.nvrtcGetCUBIN(program, reinterpret_cast<char*>(cubin.data())) != NVRTC_SUCCESS)
    throw error(status::compile_error, "netra: NVRTC produced no cubin for " + name + " (is the architecture a real sm_ one?)");
  return cubin;
}

}  // namespace netra::jit
