// netra/runtime/cuda_driver.hpp — the CUDA driver API, loaded at run time.
//
// libcuda.so.1 is opened with dlopen and every entry point is resolved once through
// cuGetProcAddress (so the ABI version matches the cuda.h netra was built with). A machine
// without the driver (CI) gets status::unavailable with the loader's message instead of a
// binary that fails to start.
#pragma once
#include <cuda.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "netra/runtime/error.hpp"

namespace netra::cuda {

struct driver {
#define NETRA_CUDA_ENTRY(name) decltype(&::name) name = nullptr;
#define NETRA_CUDA_ENTRIES(X)                                                                                       \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetAttribute) X(cuDeviceGetName)     \
  X(cuDevicePrimaryCtxRetain) X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize)          \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel) X(cuFuncGetAttribute)               \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) \
  X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamGetCaptureInfo)           \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphExecDestroy) \
  X(cuGraphDestroy) X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy)  \
  X(cuGetErrorString) X(cuGetErrorName)
  NETRA_CUDA_ENTRIES(NETRA_CUDA_ENTRY)
#undef NETRA_CUDA_ENTRY

  /// The process-wide driver table, loaded and cuInit'ed on first use. Throws
  /// error(status::unavailable) when the driver or a device is absent.
  static const driver& get() {
    static std::once_flag once;
    static driver d;
    static std::string failure;
    std::call_once(once, [] { failure = d.load(); });
    if (!failure.empty()) throw error(status::unavailable, failure);
    return d;
  }

  /// Throws error(status::backend_error) naming `what` and the driver's message.
  void check(CUresult r, const char* what) const {
    if (r == CUDA_SUCCESS) return;
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName) cuGetErrorName(r, &name);
    if (cuGetErrorString) cuGetErrorString(r, &text);
    throw error(status::backend_error, std::string("netra: ") + what + " failed: " + (name ? name : "CUDA error") + " (" +
                                           (text ? text : "no message") + ")");
  }

 private:
  std::string load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      return std::string("netra: the CUDA driver is not available (") + (why ? why : "libcuda.so.1 not found") + ")";
    }
    using get_proc_t = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto get_proc = reinterpret_cast<get_proc_t>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!get_proc) return "netra: libcuda.so.1 has no cuGetProcAddress_v2 (driver older than CUDA 12)";
    std::string missing;
    auto resolve = [&](const char* name, void** slot) {
      CUdriverProcAddressQueryResult found{};
      if (get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS || *slot == nullptr)
        missing += std::string(missing.empty() ? "" : ", ") + name;
    };
#define NETRA_CUDA_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&name));
    NETRA_CUDA_ENTRIES(NETRA_CUDA_RESOLVE)
#undef NETRA_CUDA_RESOLVE
    if (!missing.empty()) return "netra: the CUDA driver lacks " + missing;
    const CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) {
      const char* text = nullptr;
      cuGetErrorString(r, &text);
      return std::string("netra: cuInit failed: ") + (text ? text : "unknown error") + " (no usable NVIDIA GPU?)";
    }
    int count = 0;
    if (cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) return "netra: no CUDA device";
    return {};
  }
#undef NETRA_CUDA_ENTRIES
};

}  // namespace netra::cuda
