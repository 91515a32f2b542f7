// netra/runtime/kernel_traits.hpp — what the host needs to know about a kernel beyond its launch
// shape: optional members a kernel struct may declare (dsl/entry.hpp lists the required ones).
//   prefers_max_lds    true: its residency is bound by LDS / shared memory (CUDA: the largest
//                      shared-memory carve-out is requested when it is loaded)
//   dynamic_lds_bytes  the dynamic LDS its launches ask for (CUDA: allowed past 48 KiB at load;
//                      the audit adds it to the object's static LDS)
//   cluster_size       workgroups per cluster along x (CUDA: launched with that cluster shape;
//                      above 8 the non-portable size is allowed when it is loaded); HIP: 1 only
#pragma once
#include "netra/dsl/config.hpp"

namespace netra {
template <class Kernel> constexpr bool prefers_max_lds() {
  if constexpr (requires { Kernel::prefers_max_lds; }) return Kernel::prefers_max_lds;
  else return false;
}
template <class Kernel> constexpr u32 dynamic_lds_bytes_of() {
  if constexpr (requires { Kernel::dynamic_lds_bytes; }) return Kernel::dynamic_lds_bytes;
  else return 0;
}
template <class Kernel> constexpr u32 cluster_size_of() {
  if constexpr (requires { Kernel::cluster_size; }) return Kernel::cluster_size;
  else return 1;
}
}  // namespace netra
