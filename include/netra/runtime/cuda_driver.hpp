// netra/runtime/cuda_driver.hpp — the CUDA driver API, loaded at run time.
//
// libcuda.so.1 is opened with dlopen and every entry point is resolved once, under the ABI
// symbol that the cuda.h netra was built with maps its name to. A machine
// without the driver (CI) gets status::unavailable with the loader's message instead of a
// binary that fails to start.
#pragma once
#include <cuda.h>
#include <dlfcn.h>

#include <string>

#include "netra/runtime/error.hpp"

namespace netra::cuda {

struct driver {
#define NETRA_CUDA_ENTRY(name) decltype(&::name) name = nullptr;
#define NETRA_CUDA_ENTRIES(X)                                                                                       \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetAttribute) X(cuDeviceGetName)     \
  X(cuDevicePrimaryCtxRetain) X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize)          \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuFuncGetAttribute)               \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) \
  X(cuMemsetD8Async) X(cuMemcpyDtoDAsync) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)              \
  X(cuStreamGetCaptureInfo) X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags)          \
  X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize)   \
  X(cuEventElapsedTime) X(cuEventDestroy) X(cuGetErrorString) X(cuGetErrorName)
  NETRA_CUDA_ENTRIES(NETRA_CUDA_ENTRY)
#undef NETRA_CUDA_ENTRY

  /// The process-wide driver table, loaded and cuInit'ed on first use. Throws
  /// error(status::unavailable) when the driver or a device is absent.
  static const driver& get() {
    // A magic static, not std::call_once: call_once dispatches through a std:: template that
    // an executable and libnetra both instantiate, and the executable's copy would initialise
    // its own table instead of libnetra's.
    struct loaded {
      driver table;
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
    // Each entry is looked up under the ABI name cuda.h maps it to (cuMemAlloc -> cuMemAlloc_v2,
    // cuCtxSynchronize -> cuCtxSynchronize), i.e. the version whose signature the header declares.
    // (cuGetProcAddress with CUDA_VERSION would return the newest version instead, whose
    // signature can differ: cuCtxSynchronize takes a context since CUDA 13.)
    std::string missing;
    auto resolve = [&](const char* abi_name, void** slot) {
      *slot = dlsym(lib, abi_name);
      if (*slot == nullptr) missing += std::string(missing.empty() ? "" : ", ") + abi_name;
    };
#define NETRA_CUDA_ABI_NAME(name) #name
#define NETRA_CUDA_RESOLVE(name) resolve(NETRA_CUDA_ABI_NAME(name), reinterpret_cast<void**>(&name));
    NETRA_CUDA_ENTRIES(NETRA_CUDA_RESOLVE)
#undef NETRA_CUDA_RESOLVE
#undef NETRA_CUDA_ABI_NAME
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
