// netra/runtime/hip_runtime.hpp — the HIP runtime API, loaded at run time.
//
// libamdhip64 (so.7, so.6, then so.5) is opened with dlopen and every entry point is resolved
// once, like cuda_driver.hpp. netra declares the few HIP types and functions it calls itself:
// their C ABI is the same in ROCm 5, 6 and 7, while the HIP headers differ between releases and
// Debian's do not compile against CUDA 13. A machine without the library, or with the library
// but no AMD GPU (CI), gets status::unavailable with the reason instead of a failed start.
#pragma once

#include <cstddef>
#include <string>

#include "netra/runtime/error.hpp"
#include "netra/runtime/loaded_library.hpp"

namespace netra::hip {

// The HIP C types netra passes through (hip_runtime_api.h, stable across ROCm 5-7).
using hipError_t = int;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;
inline constexpr hipError_t hipSuccess = 0;

// hipDeviceAttribute_t values (identical in ROCm 5.2 and 7.x).
inline constexpr int attribute_compute_units = 63;            // hipDeviceAttributeMultiprocessorCount
inline constexpr int attribute_shared_bytes_per_block = 74;   // hipDeviceAttributeMaxSharedMemoryPerBlock

// hipDeviceProp_t changed layout in ROCm 6 (R0600); gcnArchName ("gfx950:sramecc+:xnack-") sits
// at byte 1160 there and at byte 396 in the ROCm 5 layout (R0000, also the unversioned symbol).
inline constexpr std::size_t arch_name_offset_r0600 = 1160;
inline constexpr std::size_t arch_name_offset_r0000 = 396;
inline constexpr std::size_t device_properties_bytes = 4096;  // larger than either layout

struct runtime {
  using init_t = hipError_t (*)(unsigned);
  using get_device_count_t = hipError_t (*)(int*);
  using get_device_t = hipError_t (*)(int*);
  using device_get_attribute_t = hipError_t (*)(int*, int, int);
  using device_get_name_t = hipError_t (*)(char*, int, int);
  using get_device_properties_t = hipError_t (*)(void*, int);
  using module_load_data_t = hipError_t (*)(hipModule_t*, const void*);
  using module_unload_t = hipError_t (*)(hipModule_t);
  using module_get_function_t = hipError_t (*)(hipFunction_t*, hipModule_t, const char*);
  using module_launch_kernel_t = hipError_t (*)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                                unsigned, hipStream_t, void**, void**);
  using malloc_t = hipError_t (*)(void**, std::size_t);
  using free_t = hipError_t (*)(void*);
  using memset_t = hipError_t (*)(void*, int, std::size_t);
  using device_synchronize_t = hipError_t (*)();
  using error_text_t = const char* (*)(hipError_t);

  init_t hipInit = nullptr;
  get_device_count_t hipGetDeviceCount = nullptr;
  get_device_t hipGetDevice = nullptr;
  device_get_attribute_t hipDeviceGetAttribute = nullptr;
  device_get_name_t hipDeviceGetName = nullptr;
  module_load_data_t hipModuleLoadData = nullptr;
  module_unload_t hipModuleUnload = nullptr;
  module_get_function_t hipModuleGetFunction = nullptr;
  module_launch_kernel_t hipModuleLaunchKernel = nullptr;
  malloc_t hipMalloc = nullptr;
  free_t hipFree = nullptr;
  memset_t hipMemset = nullptr;
  device_synchronize_t hipDeviceSynchronize = nullptr;
  error_text_t hipGetErrorName = nullptr;
  error_text_t hipGetErrorString = nullptr;
  /// hipGetDevicePropertiesR0600 where the runtime has it, else the ROCm 5 entry point.
  get_device_properties_t get_device_properties = nullptr;
  std::size_t arch_name_offset = 0;
  /// The soname that was loaded ("libamdhip64.so.5"); empty when none was found.
  std::string library;

  /// The process-wide runtime table, loaded and hipInit'ed on first use. Throws
  /// error(status::unavailable) when the library, or a device, is absent.
  static const runtime& get() {
    return load_once<runtime>();
  }

  /// Throws error(status::backend_error) naming `what` and the runtime's message.
  void check(hipError_t e, const char* what) const {
    if (e == hipSuccess) return;
    throw error(status::backend_error, std::string("netra: ") + what + " failed: " + describe(e));
  }

  std::string describe(hipError_t e) const {
    const char* name = hipGetErrorName ? hipGetErrorName(e) : nullptr;
    const char* text = hipGetErrorString ? hipGetErrorString(e) : nullptr;
    return std::string(name ? name : "HIP error " + std::to_string(e)) + " (" + (text ? text : "no message") + ")";
  }

 private:
  template <class Table> friend const Table& ::netra::load_once();
  std::string load() {
    const opened_library lib = open_first({"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"});
    if (!lib.handle) return "netra: the HIP runtime is not available (" + lib.tried + ")";
    library = lib.soname;
    std::string missing;
    auto resolve = [&](const char* name, auto& slot) { resolve_entry(lib.handle, name, slot, missing); };
    resolve("hipInit", hipInit);
    resolve("hipGetDeviceCount", hipGetDeviceCount);
    resolve("hipGetDevice", hipGetDevice);
    resolve("hipDeviceGetAttribute", hipDeviceGetAttribute);
    resolve("hipDeviceGetName", hipDeviceGetName);
    resolve("hipModuleLoadData", hipModuleLoadData);
    resolve("hipModuleUnload", hipModuleUnload);
    resolve("hipModuleGetFunction", hipModuleGetFunction);
    resolve("hipModuleLaunchKernel", hipModuleLaunchKernel);
    resolve("hipMalloc", hipMalloc);
    resolve("hipFree", hipFree);
    resolve("hipMemset", hipMemset);
    resolve("hipDeviceSynchronize", hipDeviceSynchronize);
    resolve("hipGetErrorName", hipGetErrorName);
    resolve("hipGetErrorString", hipGetErrorString);
    if (void* r0600 = dlsym(lib.handle, "hipGetDevicePropertiesR0600")) {
      get_device_properties = reinterpret_cast<get_device_properties_t>(r0600);
      arch_name_offset = arch_name_offset_r0600;
    } else if (void* r0000 = dlsym(lib.handle, "hipGetDeviceProperties")) {
      get_device_properties = reinterpret_cast<get_device_properties_t>(r0000);
      arch_name_offset = arch_name_offset_r0000;
    } else {
      missing += std::string(missing.empty() ? "" : ", ") + "hipGetDeviceProperties";
    }
    if (!missing.empty()) return "netra: " + library + " lacks " + missing;
    const hipError_t e = hipInit(0);
    if (e != hipSuccess) return "netra: " + library + " loaded, but hipInit failed: " + describe(e) + " (no usable AMD GPU)";
    int count = 0;
    const hipError_t c = hipGetDeviceCount(&count);
    if (c != hipSuccess || count == 0)
      return "netra: " + library + " loaded, but it sees no device" + (c != hipSuccess ? ": " + describe(c) : std::string());
    return {};
  }
};

}  // namespace netra::hip
