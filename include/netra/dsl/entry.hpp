// netra/dsl/entry.hpp — kernel entry points and launch shapes.
//
// A netra kernel is a struct template over its contract with:
//   symbol          the extern "C" name its entry point gets in the code object;
//   workgroup_size  threads per workgroup (a multiple of the target's wave size);
//   params          a trivially copyable struct, the only kernel argument (passed by value);
//   shape(...)      the launch shape for a call (host and device);
//   run(params)     the device body.
// NETRA_ENTRY(symbol, Kernel) emits the entry point with the workgroup size as a launch bound.
// One code object holds the kernels of one contract instance, so symbols are fixed per family.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra {
/// Grid (in workgroups, x/y/z) and workgroup size (threads, x) of one launch.
struct launch_shape {
  u32 grid[3];
  u32 workgroup_size;
  u32 dynamic_lds_bytes;
};
}  // namespace netra

namespace netra::kernels {
/// kernels_of<Contract>::type lists the kernels (in launch order) that implement a contract;
/// each kernel family specialises it next to its kernels.
template <class Contract> struct kernels_of {
  static_assert(dependent_false_v<Contract>, "netra::kernels::kernels_of: no kernel family implements this contract");
};
}  // namespace netra::kernels

#if defined(NETRA_COMPILER_HIP)
#define NETRA_LAUNCH_BOUNDS(N) __attribute__((amdgpu_flat_work_group_size(N, N)))
#elif defined(NETRA_COMPILER_CUDA)
#define NETRA_LAUNCH_BOUNDS(N) __launch_bounds__(N)
#else
#define NETRA_LAUNCH_BOUNDS(N)
#endif

/// Launch bounds with a minimum of M resident workgroups per SM (CUDA: the register allocator
/// keeps the kernel within 65536 / (M * N) registers per thread). HIP: as NETRA_LAUNCH_BOUNDS.
#if defined(NETRA_COMPILER_HIP)
#define NETRA_LAUNCH_BOUNDS_MIN(N, M) __attribute__((amdgpu_flat_work_group_size(N, N)))
#elif defined(NETRA_COMPILER_CUDA)
#define NETRA_LAUNCH_BOUNDS_MIN(N, M) __launch_bounds__(N, M)
#else
#define NETRA_LAUNCH_BOUNDS_MIN(N, M)
#endif

/// NETRA_ENTRY for a kernel that also declares `min_workgroups_per_processor`.
#define NETRA_ENTRY_MIN_WORKGROUPS(SYMBOL, ...)                                                                     \
  extern "C" NETRA_GLOBAL void NETRA_LAUNCH_BOUNDS_MIN(__VA_ARGS__::workgroup_size, __VA_ARGS__::min_workgroups_per_processor) \
      SYMBOL(typename __VA_ARGS__::params p) {                                                                   \
    __VA_ARGS__::run(p);                                                                                          \
  }

#define NETRA_ENTRY(SYMBOL, ...)                                                                            \
  extern "C" NETRA_GLOBAL void NETRA_LAUNCH_BOUNDS(__VA_ARGS__::workgroup_size) SYMBOL(typename __VA_ARGS__::params p) { \
    __VA_ARGS__::run(p);                                                                                    \
  }
