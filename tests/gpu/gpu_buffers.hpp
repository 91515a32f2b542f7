// tests/gpu/gpu_buffers.hpp — small helpers for GPU tests: typed device buffers with host copies.
#pragma once
#include <vector>

#include "netra/runtime/device_memory.hpp"

namespace netra::testing {

inline const cuda::driver& drv() { return cuda::driver::get(); }

template <class T> struct gpu_array {
  device_buffer buffer;
  std::size_t count = 0;
  explicit gpu_array(std::size_t n) : buffer(backend_api::cuda, n * sizeof(T) + 64), count(n) {}
  T* data() const { return static_cast<T*>(buffer.data()); }
  void upload(const std::vector<T>& host) const {
    drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(buffer.data()), host.data(), host.size() * sizeof(T)), "cuMemcpyHtoD");
    settle();
  }
  std::vector<T> download() const {
    std::vector<T> host(count);
    drv().check(drv().cuMemcpyDtoH(host.data(), reinterpret_cast<CUdeviceptr>(buffer.data()), count * sizeof(T)), "cuMemcpyDtoH");
    return host;
  }
  void fill_bytes(unsigned char value) const {
    drv().check(drv().cuMemsetD8(reinterpret_cast<CUdeviceptr>(buffer.data()), value, buffer.size()), "cuMemsetD8");
    settle();
  }
  /// The copy from pageable memory and the memset run on the legacy stream and may still be in
  /// flight when they return; the tests launch on non-blocking streams, which do not wait for the
  /// legacy stream. Waiting here makes the data visible to whatever is launched next.
  static void settle() { drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize"); }
};

}  // namespace netra::testing
