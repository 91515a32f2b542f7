// netra/runtime/backend.hpp — one thin mapping over the GPU APIs a kernel can be launched with.
//
//   device          the current device of the calling thread (CUDA: the current context, or the
//                   primary context of device 0; HIP: the current device), with the attributes
//                   dispatch needs: target, compute units, LDS/shared bytes, arch name.
//   module          a code object loaded from memory or from a file; refuses an object whose
//                   target differs from the device's before anything is launched.
//   kernel_function a resolved entry point; launch() records it on the caller's stream and does
//                   nothing else: no allocation, no lookup, no host synchronisation.
// NVIDIA goes through the CUDA driver API (cuda_driver.hpp), AMD through the HIP runtime
// (hip_runtime.hpp); both are loaded at run time. Streams are the caller's (CUstream /
// hipStream_t) passed as void*.
#pragma once
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "netra/contracts/common.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/runtime/code_object.hpp"
#include "netra/runtime/cuda_driver.hpp"
#include "netra/runtime/error.hpp"
#include "netra/runtime/hip_runtime.hpp"

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

/// The device as DLPack names it (runtime/tensor.hpp): {kDLCUDA = 2 or kDLROCM = 10, ordinal}.
inline device_ref device_of(const device_info& d) { return {d.api == backend_api::hip ? 10 : 2, d.ordinal}; }

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

/// The netra target of an AMD arch name as HIP reports it ("gfx950:sramecc+:xnack-"), or
/// nullopt for an arch netra has no target for.
inline std::optional<target_id> amd_target_of(std::string_view arch_name) {
  const std::string_view processor = arch_name.substr(0, arch_name.find(':'));
  for (const target_id t : {target_id::gfx90a, target_id::gfx942, target_id::gfx950, target_id::gfx1151})
    if (processor == target_name(t)) return t;
  return std::nullopt;
}

/// Attributes of the calling thread's current HIP device. Throws status::unavailable without
/// the HIP runtime or an AMD GPU, status::wrong_target for an arch netra has no target for.
inline device_info current_hip_device() {
  const auto& r = hip::runtime::get();
  int dev = 0;
  r.check(r.hipGetDevice(&dev), "hipGetDevice");
  device_info info;
  info.api = backend_api::hip;
  info.ordinal = dev;
  char name[256] = {};
  r.check(r.hipDeviceGetName(name, sizeof name, dev), "hipDeviceGetName");
  info.name = name;
  alignas(16) char properties[hip::device_properties_bytes] = {};
  r.check(r.get_device_properties(properties, dev), "hipGetDeviceProperties");
  info.arch_name = std::string(properties + r.arch_name_offset, strnlen(properties + r.arch_name_offset, 256));
  int cus = 0, lds = 0;
  r.check(r.hipDeviceGetAttribute(&cus, hip::attribute_compute_units, dev), "hipDeviceGetAttribute");
  r.check(r.hipDeviceGetAttribute(&lds, hip::attribute_shared_bytes_per_block, dev), "hipDeviceGetAttribute");
  info.compute_units = cus;
  info.lds_bytes_per_workgroup = static_cast<std::size_t>(lds);
  const auto target = amd_target_of(info.arch_name);
  if (!target) throw error(status::wrong_target, "netra: device " + info.name + " is " + info.arch_name + ", which is not a netra target");
  info.target = *target;
  return info;
}

/// The calling thread's current device: the CUDA one if the CUDA driver sees a device, else the
/// HIP one. Throws status::unavailable with both reasons when neither API has a device.
inline device_info current_device() {
  std::string cuda_reason;
  try {
    return current_cuda_device();
  } catch (const error& e) {
    if (e.code() != status::unavailable) throw;
    cuda_reason = e.what();
  }
  try {
    return current_hip_device();
  } catch (const error& e) {
    if (e.code() != status::unavailable) throw;
    throw error(status::unavailable, "netra: no GPU (CUDA: " + cuda_reason + "; HIP: " + e.what() + ")");
  }
}

/// A resolved kernel entry point.
struct kernel_function {
  backend_api api = backend_api::cuda;
  void* handle = nullptr;  // CUfunction / hipFunction_t
  const char* symbol = nullptr;
};

/// A CUDA launch configuration (cuLaunchKernelEx, cuOccupancyMaxActiveClusters) for shape `s` on
/// `stream`, with programmatic stream serialisation if asked and clusters of `cluster_size`
/// workgroups along x when it is above 1. `config` points into the object: neither copied nor moved.
struct cuda_launch_config {
  CUlaunchAttribute attributes[2]{};
  CUlaunchConfig config{};
  cuda_launch_config(const launch_shape& s, stream_handle stream, bool programmatic_dependent, u32 cluster_size) {
    unsigned count = 0;
    if (programmatic_dependent) {
      attributes[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attributes[count++].value.programmaticStreamSerializationAllowed = 1;
    }
    if (cluster_size > 1) {
      attributes[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attributes[count].value.clusterDim.x = cluster_size;
      attributes[count].value.clusterDim.y = 1;
      attributes[count++].value.clusterDim.z = 1;
    }
    config.gridDimX = s.grid[0];
    config.gridDimY = s.grid[1];
    config.gridDimZ = s.grid[2];
    config.blockDimX = s.workgroup_size;
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.sharedMemBytes = s.dynamic_lds_bytes;
    config.hStream = static_cast<CUstream>(stream);
    config.attrs = attributes;
    config.numAttrs = count;
  }
  cuda_launch_config(const cuda_launch_config&) = delete;
  cuda_launch_config& operator=(const cuda_launch_config&) = delete;
};

/// Records one launch on `stream`. `params` points at the kernel's params struct (its only
/// argument). Graph-capture safe: only the launch call itself reaches the driver.
/// `programmatic_dependent`: (CUDA) launch with programmatic stream serialisation, so the kernel
/// may start while its predecessor on the stream drains; it must griddepcontrol.wait before
/// reading what the predecessor writes. Captured into graphs as a programmatic edge. Ignored on HIP.
/// `cluster_size`: (CUDA) workgroups per cluster along x (the grid's x a multiple of it); HIP: 1.
inline void launch(const kernel_function& f, const launch_shape& s, stream_handle stream, void* params,
                   bool programmatic_dependent = false, u32 cluster_size = 1) {
  if (f.api == backend_api::cuda) {
    const auto& d = cuda::driver::get();
    void* args[] = {params};
    if (programmatic_dependent || cluster_size > 1) {
      const cuda_launch_config c(s, stream, programmatic_dependent, cluster_size);
      d.check(d.cuLaunchKernelEx(&c.config, static_cast<CUfunction>(f.handle), args, nullptr), f.symbol ? f.symbol : "cuLaunchKernelEx");
      return;
    }
    d.check(d.cuLaunchKernel(static_cast<CUfunction>(f.handle), s.grid[0], s.grid[1], s.grid[2], s.workgroup_size, 1, 1,
                             s.dynamic_lds_bytes, static_cast<CUstream>(stream), args, nullptr),
            f.symbol ? f.symbol : "cuLaunchKernel");
    return;
  }
  if (cluster_size != 1) throw error(status::not_supported, std::string("netra: ") + (f.symbol ? f.symbol : "kernel") + ": workgroup clusters need CUDA");
  const auto& r = hip::runtime::get();
  void* args[] = {params};
  r.check(r.hipModuleLaunchKernel(static_cast<hip::hipFunction_t>(f.handle), s.grid[0], s.grid[1], s.grid[2], s.workgroup_size, 1, 1,
                                  s.dynamic_lds_bytes, static_cast<hip::hipStream_t>(stream), args, nullptr),
          f.symbol ? f.symbol : "hipModuleLaunchKernel");
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
    const auto& r = hip::runtime::get();
    hip::hipModule_t mod = nullptr;
    r.check(r.hipModuleLoadData(&mod, image.data()), "hipModuleLoadData");
    m.handle_ = mod;
    return m;
  }

  static module load_file(const std::string& path, target_id expected, const device_info& device) {
    const auto bytes = read_file_bytes(path);
    return load(bytes, expected, device);
  }

  /// Resolves `symbol`. `max_shared_memory`: (CUDA) the kernel prefers the SM's largest shared
  /// memory carve-out over L1 (its residency is bound by shared memory; the driver's default
  /// choice may leave fewer workgroups per SM). `dynamic_lds_bytes`: (CUDA) the dynamic shared
  /// memory its launches ask for, allowed past the 48 KiB default (static + dynamic). Both ignored on HIP (LDS is
  /// not carved out of a cache; the launch's size is enough). `cluster_size` > 1: (CUDA) the
  /// non-portable size is allowed past 8, and a device that cannot hold one cluster of
  /// `workgroup_size`-thread workgroups is refused here (status::not_supported), not at a launch;
  /// HIP refuses clusters.
  kernel_function function(const char* symbol, bool max_shared_memory = false, u32 dynamic_lds_bytes = 0, u32 cluster_size = 1,
                           u32 workgroup_size = 0) const {
    kernel_function f;
    f.api = api_;
    f.symbol = symbol;
    if (api_ == backend_api::cuda) {
      const auto& d = cuda::driver::get();
      CUfunction fn = nullptr;
      d.check(d.cuModuleGetFunction(&fn, static_cast<CUmodule>(handle_), symbol), symbol);
      if (max_shared_memory)
        d.check(d.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, CU_SHAREDMEM_CARVEOUT_MAX_SHARED), symbol);
      if (dynamic_lds_bytes > 0) {  // the opt-in is needed once static + dynamic pass 48 KiB
        int static_bytes = 0;
        d.check(d.cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn), symbol);
        if (static_cast<u64>(static_bytes) + dynamic_lds_bytes > 48u * 1024u)
          d.check(d.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(dynamic_lds_bytes)), symbol);
      }
      if (cluster_size > 8) d.check(d.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), symbol);
      if (cluster_size > 1) require_one_cluster(fn, symbol, cluster_size, workgroup_size, dynamic_lds_bytes);
      f.handle = fn;
      return f;
    }
    if (cluster_size != 1) throw error(status::not_supported, std::string("netra: ") + symbol + ": workgroup clusters need CUDA");
    const auto& r = hip::runtime::get();
    hip::hipFunction_t fn = nullptr;
    r.check(r.hipModuleGetFunction(&fn, static_cast<hip::hipModule_t>(handle_), symbol), symbol);
    f.handle = fn;
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
    if (!handle_) return;
    if (api_ == backend_api::cuda) cuda::driver::get().cuModuleUnload(static_cast<CUmodule>(handle_));
    else hip::runtime::get().hipModuleUnload(static_cast<hip::hipModule_t>(handle_));
  }

 private:
  /// Throws unless the device can hold at least one cluster of `cluster_size` workgroups.
  static void require_one_cluster(CUfunction fn, const char* symbol, u32 cluster_size, u32 workgroup_size, u32 dynamic_lds_bytes) {
    const auto& d = cuda::driver::get();
    const cuda_launch_config c({{cluster_size, 1, 1}, workgroup_size, dynamic_lds_bytes}, nullptr, false, cluster_size);
    int clusters = 0;
    d.check(d.cuOccupancyMaxActiveClusters(&clusters, fn, &c.config), symbol);
    if (clusters < 1)
      throw error(status::not_supported, std::string("netra: ") + symbol + ": this device cannot hold one cluster of " + std::to_string(cluster_size) +
                                             " workgroups of " + std::to_string(workgroup_size) + " threads");
  }

  backend_api api_ = backend_api::cuda;
  void* handle_ = nullptr;
};

}  // namespace netra
