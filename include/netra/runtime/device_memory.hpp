// netra/runtime/device_memory.hpp — an owning device allocation (persistent workspaces, test
// buffers) through cuMemAlloc or hipMalloc. Allocation happens at construction, never on a
// launch path.
#pragma once
#include <cstddef>
#include <utility>

#include "netra/runtime/backend.hpp"

namespace netra {

class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(backend_api api, std::size_t bytes) : api_(api), bytes_(bytes) {
    if (bytes == 0) return;
    if (api == backend_api::cuda) {
      const auto& d = cuda::driver::get();
      CUdeviceptr p = 0;
      d.check(d.cuMemAlloc(&p, bytes), "cuMemAlloc");
      ptr_ = reinterpret_cast<void*>(p);
      return;
    }
    const auto& r = hip::runtime::get();
    r.check(r.hipMalloc(&ptr_, bytes), "hipMalloc");
  }
  device_buffer(device_buffer&& o) noexcept : api_(o.api_), ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(api_, o.api_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() {
    if (!ptr_) return;
    if (api_ == backend_api::cuda) cuda::driver::get().cuMemFree(reinterpret_cast<CUdeviceptr>(ptr_));
    else hip::runtime::get().hipFree(ptr_);
  }

  /// Sets every byte to zero (synchronous; construction-time use only, never on a launch path).
  void fill_zero() const {
    if (!ptr_) return;
    if (api_ == backend_api::cuda) {
      const auto& d = cuda::driver::get();
      d.check(d.cuMemsetD8(reinterpret_cast<CUdeviceptr>(ptr_), 0, bytes_), "cuMemsetD8");
      d.check(d.cuCtxSynchronize(), "cuCtxSynchronize");
      return;
    }
    const auto& r = hip::runtime::get();
    r.check(r.hipMemset(ptr_, 0, bytes_), "hipMemset");
    r.check(r.hipDeviceSynchronize(), "hipDeviceSynchronize");
  }

  void* data() const { return ptr_; }
  std::size_t size() const { return bytes_; }

 private:
  backend_api api_ = backend_api::cuda;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace netra
