// netra/runtime/jit/hiprtc.hpp — hipRTC, loaded at run time, compiling one instantiation source
// to an AMD code object. Works without a GPU: Debian's hipRTC (ROCm 5.2, inside
// libamdhip64.so.5) compiles gfx90a code objects on CI machines.
//
// hipRTC lives in libhiprtc.so.7 / .so.6 on ROCm 6 and later and inside libamdhip64.so.5 on
// ROCm 5. netra declares its C functions itself (see hip_runtime.hpp for why). gfx950 needs the
// LLVM of ROCm 7; older hipRTC builds gfx90a only here (jit/compile.hpp chooses).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "netra/runtime/error.hpp"
#include "netra/runtime/loaded_library.hpp"

namespace netra::jit {

struct hiprtc_library {
  using program = struct ihiprtcProgram*;
  using result = int;  // hiprtcResult; HIPRTC_SUCCESS == 0
  result (*hiprtcVersion)(int*, int*) = nullptr;
  result (*hiprtcCreateProgram)(program*, const char*, const char*, int, const char**, const char**) = nullptr;
  result (*hiprtcDestroyProgram)(program*) = nullptr;
  result (*hiprtcCompileProgram)(program, int, const char**) = nullptr;
  result (*hiprtcGetProgramLogSize)(program, std::size_t*) = nullptr;
  result (*hiprtcGetProgramLog)(program, char*) = nullptr;
  result (*hiprtcGetCodeSize)(program, std::size_t*) = nullptr;
  result (*hiprtcGetCode)(program, char*) = nullptr;
  const char* (*hiprtcGetErrorString)(result) = nullptr;
  /// ROCm major release of the library (7, 6 or 5), from its soname.
  int rocm_major = 0;
  /// "hipRTC 9.0 (/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153)": part of every cache key.
  std::string identity;

  /// The process-wide table; throws status::unavailable when no hipRTC can be loaded.
  static const hiprtc_library& get() {
    return load_once<hiprtc_library>();
  }

 private:
  template <class Table> friend const Table& ::netra::load_once();
  std::string load() {
    const opened_library lib = open_first({"libhiprtc.so.7", "libhiprtc.so.6", "libamdhip64.so.5"});
    if (!lib.handle) return "netra: hipRTC is not available (" + lib.tried + ")";
    rocm_major = lib.soname.back() - '0';
    std::string missing;
    auto resolve = [&](const char* name, auto& slot) { resolve_entry(lib.handle, name, slot, missing); };
    resolve("hiprtcVersion", hiprtcVersion);
    resolve("hiprtcCreateProgram", hiprtcCreateProgram);
    resolve("hiprtcDestroyProgram", hiprtcDestroyProgram);
    resolve("hiprtcCompileProgram", hiprtcCompileProgram);
    resolve("hiprtcGetProgramLogSize", hiprtcGetProgramLogSize);
    resolve("hiprtcGetProgramLog", hiprtcGetProgramLog);
    resolve("hiprtcGetCodeSize", hiprtcGetCodeSize);
    resolve("hiprtcGetCode", hiprtcGetCode);
    resolve("hiprtcGetErrorString", hiprtcGetErrorString);
    if (!missing.empty()) return "netra: " + lib.soname + " lacks " + missing;
    int major = 0, minor = 0;
    hiprtcVersion(&major, &minor);
    identity = "hipRTC " + std::to_string(major) + "." + std::to_string(minor) + " (" +
               library_file(reinterpret_cast<const void*>(hiprtcCompileProgram)) + ")";
    return {};
  }
};

/// The options netra compiles an AMD target with through hipRTC (besides -I<include root>).
inline std::vector<std::string> hiprtc_options(const char* target) {
  return {std::string("--gpu-architecture=") + target, "-std=c++20", "-O3"};
}

/// Compiles `source` (named `name` in diagnostics) to a code object. Throws
/// status::compile_error with hipRTC's log when compilation fails.
inline std::vector<std::byte> hiprtc_compile(const std::string& source, const std::string& name, const std::vector<std::string>& options) {
  const auto& lib = hiprtc_library::get();
  hiprtc_library::program program = nullptr;
  if (const auto r = lib.hiprtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr); r != 0)
    throw error(status::compile_error, std::string("netra: hiprtcCreateProgram failed: ") + lib.hiprtcGetErrorString(r));
  struct destroy_on_exit {
    const hiprtc_library& lib;
    hiprtc_library::program& program;
    ~destroy_on_exit() { lib.hiprtcDestroyProgram(&program); }
  } guard{lib, program};
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const auto compiled = lib.hiprtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  lib.hiprtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) lib.hiprtcGetProgramLog(program, log.data());
  if (compiled != 0)
    throw error(status::compile_error, "netra: hipRTC failed to compile " + name + " (" + lib.hiprtcGetErrorString(compiled) + "):\n" + log);
  std::size_t size = 0;
  lib.hiprtcGetCodeSize(program, &size);
  std::vector<std::byte> code(size);
  if (size == 0 || lib.hiprtcGetCode(program, reinterpret_cast<char*>(code.data())) != 0)
    throw error(status::compile_error, "netra: hipRTC produced no code object for " + name);
  return code;
}

}  // namespace netra::jit
