// The MoE GPU tests' stream and handles: one non-blocking stream per test binary, and one handle
// per contract loaded from the build's code objects (NETRA_CODE_OBJECT_DIR) for the current device.
#pragma once
#include <string>

#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/instance.hpp"

namespace netra::testing {

template <class Contract> const handle<Contract>& handle_of() {
  static const handle<Contract> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<Contract>() + ".cubin", current_cuda_device());
  return h;
}
inline CUstream test_stream() {
  static CUstream s = [] {
    CUstream st;
    drv().check(drv().cuStreamCreate(&st, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return st;
  }();
  return s;
}
inline void sync_stream() { drv().check(drv().cuStreamSynchronize(test_stream()), "cuStreamSynchronize"); }

}  // namespace netra::testing
