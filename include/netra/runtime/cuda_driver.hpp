// netra/runtime/cuda_driver.hpp — the CUDA driver API, loaded at run time.
//
// libcuda.so.1 is opened with dlopen and every entry point is resolved once, under the ABI
// symbol that the cuda.h netra was built with maps its name to. A machine
// without the driver (CI) gets status::unavailable with the loader's message instead of a
// binary that fails to start.
#pragma once
#include <cuda.h>

#include <string>

#include "netra/runtime/error.hpp"
#include "netra/runtime/loaded_library.hpp"

namespace netra::cuda {

struct driver {
#define NETRA_CUDA_ENTRY(name) decltype(&::name) name = nullptr;
#define NETRA_CUDA_ENTRIES(X)                                                                                       \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetAttribute) X(cuDeviceGetName)     \
  X(cuDevicePrimaryCtxRetain) X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize)          \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuOccupancyMaxActiveClusters)               \
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
    return load_once<driver>();
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
  template <class Table> friend const Table& ::netra::load_once();
  std::string load() {
    const opened_library lib = open_first({"libcuda.so.1"});
    if (!lib.handle) return "netra: the CUDA driver is not available (" + lib.tried + ")";
    // Each entry is looked up under the ABI name cuda.h maps it to (cuMemAlloc -> cuMemAlloc_v2,
    // cuCtxSynchronize -> cuCtxSynchronize), i.e. the version whose signature the header declares.
    // (cuGetProcAddress with CUDA_VERSION would return the newest version instead, whose
    // signature can differ: cuCtxSynchronize takes a context since CUDA 13.)
    std::string missing;
#define NETRA_CUDA_ABI_NAME(name) #name
#define NETRA_CUDA_RESOLVE(name) resolve_entry(lib.handle, NETRA_CUDA_ABI_NAME(name), name, missing);
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
