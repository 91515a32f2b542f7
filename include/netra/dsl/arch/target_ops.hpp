// netra/dsl/arch/target_ops.hpp — the seam between target-neutral primitives and the
// per-target instruction wrappers.
//
// `target_ops<T>` is specialised once per target in dsl/arch/<target>/ops.hpp on top of that
// target's raw wrappers. A compiler pass sees only the wrappers it can compile: nvcc/NVRTC see
// sm90a, clang-HIP/hipRTC see the AMD targets. Instantiating a kernel for a target the current compiler
// cannot generate stops at the static_assert below, with the reason.
#pragma once
#include "netra/dsl/target.hpp"
#include "netra/dsl/vector_types.hpp"

namespace netra {
template <class Target> struct target_ops {
  static_assert(dependent_false_v<Target>,
                "netra::target_ops: this compiler cannot generate code for the contract's target "
                "(gfx950 kernels build with clang -x hip --offload-arch=gfx950 or hipRTC; sm90a kernels "
                "with nvcc -gencode=arch=compute_90a,code=sm_90a or NVRTC)");
};
}  // namespace netra

#if defined(NETRA_COMPILER_HIP)
#include "netra/dsl/arch/gfx90a/ops.hpp"
// gfx950's wrappers are seen by host passes and by device passes whose target has gfx950's
// instructions: a gfx90a pass of hipRTC 5.2 cannot even parse them (no __bf16 on that target).
#if !defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_permlane16_swap)
#include "netra/dsl/arch/gfx950/ops.hpp"
#endif
// gfx942 and gfx1151: seen by host passes and by device passes of targets with their instructions
// (the CDNA3 FP8 MFMA; RDNA 3 WMMA).
#if !defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8)
#include "netra/dsl/arch/gfx942/ops.hpp"
#endif
#if !defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_wmma_f32_16x16x16_f16_w32)
#include "netra/dsl/arch/gfx1151/ops.hpp"
#endif
#endif
#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/ops.hpp"
#endif
