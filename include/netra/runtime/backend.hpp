// netra/runtime/backend.hpp — one thin mapping over the GPU APIs a kernel can be launched with.
//
//   device          the current device of the calling thread (CUDA: the current context, or the
//                   primary context of device 0; HIP: the current device), with the attributes
//                   dispatch needs: target, compute units, LDS/shared bytes, arch name.
//   module          a code object loaded from memory or from a file; refuses an object whose
//                   target differs from the device's before anything is launched.
//   kernel_function a resolved entry point; launch() records it on the caller's stream and does
//                   nothing else: no allocation, no lookup, no host synchronisation.
// NVIDIA goes through the CUDA driver API (cuda_driver.hpp). Streams are the caller's
// (CUstream / hipStream_t) passed as void*.
#pragma once
#include <cstddef>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "netra/dsl/entry.hpp"
#include "netra/runtime/code_object.hpp"
#include "netra/runtime/cuda_driver.hpp"
#include "netra/runtime/error.hpp"

namespace netra {

enum class backend_api { cuda, hip };
using stream_handle = void*;

struct device_info {
  backend_api api = backend_api::cuda;
  target_id target = target_id::sm90a;
  std::string name;       // marketing name
  std::string arch_name;  // "sm_90" / "gfx950"
  int ordinal = 0;
  int compute_units = 0;
  std::size_t lds_bytes_per_workgroup = 0;
};

/// Attributes of the calling thread's current CUDA device (creating/setting the primary
/// context of device 0 when no context is current). Throws status::unavailable without a GPU.
inline device_info current_cuda_device() {
  const auto& d = cuda::driver::get();
  CUcontext ctx = nullptr;
  d.check(d.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  CUdevice dev = 0;
  if (ctx == nullptr) {
    d.check(d.cuDeviceGet(&dev, 0), "cuDeviceGet");
    d.check(d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    d.check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  } else {
    d.check(d.cuCtxGetDevice(&dev), "cuCtxGetDevice");
  }
  device_info info;
  info.api = backend_api::cuda;
  info.ordinal = dev;
  char name[256] = {};
  d.check(d.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
  info.name = name;
  int major = 0, minor = 0, sms = 0, smem = 0;
  d.check(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev), "cuDeviceGetAttribute");
  info.arch_name = "sm_" + std::to_string(major * 10 + minor);
  info.compute_units = sms;
  info.lds_bytes_per_workgroup = static_cast<std::size_t>(smem);
  // sm_90a code runs on compute capability 9.0 only.
  if (major != 9 || minor != 0)
    throw error(status::wrong_target, "netra: device " + info.name + " is " + info.arch_name + "; netra's NVIDIA target is sm_90a");
  info.target = target_id::sm90a;
  return info;
}

/// A resolved kernel entry point.
struct kernel_function {
  backend_api api = backend_api::cuda;
  void* handle = nullptr;  // CUfunction / hipFunction_t
  const char* symbol = nullptr;
};

/// Records one launch on `stream`. `params` points at the kernel's params struct (its only
/// argument). Graph-capture safe: only the launch call itself reaches the driver.
inline void launch(const kernel_function& f, const launch_shape& s, stream_handle stream, void* params) {
  if (f.api == backend_api::cuda) {
    const auto& d = cuda::driver::get();
    void* args[] = {params};
    d.check(d.cuLaunchKernel(static_cast<CUfunction>(f.handle), s.grid[0], s.grid[1], s.grid[2], s.workgroup_size, 1, 1,
                             s.dynamic_lds_bytes, static_cast<CUstream>(stream), args, nullptr),
            f.symbol ? f.symbol : "cuLaunchKernel");
    return;
  }
  throw error(status::unavailable, "netra: the HIP backend is not available in this build");
}

/// A loaded code object. Move-only; unloads on destruction.
class module {
 public:
  /// Loads `image` on the current device after checking that it was built for `expected` and
  /// that the device is that target.
  static module load(std::span<const std::byte> image, target_id expected, const device_info& device) {
    const auto built_for = code_object_target(image);
    if (!built_for)
      throw error(status::wrong_target, "netra: the image is not a code object for a netra target (truncated or foreign ELF)");
    if (*built_for != expected)
      throw error(status::wrong_target, std::string("netra: code object built for ") + target_name(*built_for) + ", expected " +
                                            target_name(expected));
    if (device.target != expected)
      throw error(status::wrong_target, std::string("netra: code object for ") + target_name(expected) + " cannot run on " +
                                            device.arch_name + " (" + device.name + ")");
    module m;
    m.api_ = device.api;
    if (device.api == backend_api::cuda) {
      const auto& d = cuda::driver::get();
      CUmodule mod = nullptr;
      d.check(d.cuModuleLoadData(&mod, image.data()), "cuModuleLoadData");
      m.handle_ = mod;
      return m;
    }
    throw error(status::unavailable, "netra: the HIP backend is not available in this build");
  }

  static module load_file(const std::string& path, target_id expected, const device_info& device) {
    const auto bytes = read_file_bytes(path);
    return load(bytes, expected, device);
  }

  kernel_function function(const char* symbol) const {
    kernel_function f;
    f.api = api_;
    f.symbol = symbol;
    if (api_ == backend_api::cuda) {
      const auto& d = cuda::driver::get();
      CUfunction fn = nullptr;
      d.check(d.cuModuleGetFunction(&fn, static_cast<CUmodule>(handle_), symbol), symbol);
      f.handle = fn;
    }
    return f;
  }

  module() = default;
  module(module&& o) noexcept : api_(o.api_), handle_(o.handle_) { o.handle_ = nullptr; }
  module& operator=(module&& o) noexcept {
    std::swap(api_, o.api_);
    std::swap(handle_, o.handle_);
    return *this;
  }
  module(const module&) = delete;
  module& operator=(const module&) = delete;
  ~module() {
    if (handle_ && api_ == backend_api::cuda) cuda::driver::get().cuModuleUnload(static_cast<CUmodule>(handle_));
  }

 private:
  backend_api api_ = backend_api::cuda;
  void* handle_ = nullptr;
};

}  // namespace netra
