// netra/dsl/warpgroup_mma.hpp — BF16 matrix products issued by a warpgroup (4 warps, 128 threads)
// with B (and optionally A) read from LDS through matrix descriptors, asynchronously; targets with
// Target::has_warpgroup_mma (sm90a: wgmma.mma_async; AMD's MFMA is issued per wave, so a contract
// that maps its products to warpgroups admits sm90a only and says so).
//   lds_operand_descriptor<T>(lds, k_step_bytes, row_group_bytes): a K-major operand of core
//     matrices (8 rows x 16 bytes, each 128 contiguous bytes) k_step_bytes apart in K and
//     row_group_bytes apart in M / N; no swizzle.
//   warpgroup_mma_bf16_m64n64_lds<T>(d, a, b, accumulate): d(64 x 64) (+)= A(64 x 16) B(16 x 64).
//   warpgroup_mma_bf16_m64n256_regs<T>(d, a, b, accumulate): d(64 x 256) (+)= A(64 x 16) B(16 x 256),
//     A from registers (each warp its 16 rows in the mma.sync m16n8k16 A layout); _m64n128_regs the
//     same with N = 128.
//   D item i of thread (warp w of the warpgroup, lane l): row 16 w + (l >> 2) + 8 ((i >> 1) & 1),
//   column 8 (i >> 2) + 2 (l & 3) + (i & 1).
// Order of use: LDS written by ordinary stores is made visible with lds_visible_to_matrix_unit<T>()
// in every writing thread, then a workgroup barrier; warpgroup_mma_fence<T>() before the first
// product that reads or accumulates registers written since; the products; warpgroup_mma_commit<T>()
// and warpgroup_mma_wait<T, 0>() before D (or A's registers) are touched again.
#pragma once
#include "netra/dsl/config.hpp"
#include "netra/dsl/target.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/mma.hpp"
#include "netra/dsl/arch/sm90a/sync.hpp"
#include "netra/dsl/arch/sm90a/wgmma_bf16.hpp"
#endif

namespace netra {
template <class Target> struct warpgroup_mma_ops {
  static_assert(dependent_false_v<Target>, "netra::warpgroup_mma_ops: the target has no warpgroup matrix instructions (Target::has_warpgroup_mma)");
};
#if defined(NETRA_COMPILER_CUDA)
template <> struct warpgroup_mma_ops<sm90a> {
  static NETRA_DEVICE u64 descriptor(const void* lds, u32 k_step_bytes, u32 row_group_bytes) {
    return sm90a_isa::wgmma_descriptor_no_swizzle(sm90a_isa::shared_address_of(lds), k_step_bytes, row_group_bytes);
  }
  static NETRA_DEVICE void m64n64_lds(float (&d)[32], u64 a, u64 b, bool accumulate) {
    sm90a_isa::wgmma_mma_async_sync_aligned_m64n64k16_f32_bf16_bf16_ss(d, a, b, accumulate);
  }
  static NETRA_DEVICE void m64n256_regs(float (&d)[128], const u32 (&a)[4], u64 b, bool accumulate) {
    sm90a_isa::wgmma_mma_async_sync_aligned_m64n256k16_f32_bf16_bf16_rs(d, a, b, accumulate);
  }
  static NETRA_DEVICE void m64n128_regs(float (&d)[64], const u32 (&a)[4], u64 b, bool accumulate) {
    sm90a_isa::wgmma_mma_async_sync_aligned_m64n128k16_f32_bf16_bf16_rs(d, a, b, accumulate);
  }
  static NETRA_DEVICE void fence() { sm90a_isa::wgmma_fence_sync_aligned(); }
  static NETRA_DEVICE void commit() { sm90a_isa::wgmma_commit_group_sync_aligned(); }
  template <u32 N> static NETRA_DEVICE void wait() { sm90a_isa::wgmma_wait_group_sync_aligned<N>(); }
  static NETRA_DEVICE void lds_visible() { sm90a_isa::fence_proxy_async_shared_cta(); }
};
#endif

template <class Target> NETRA_DEVICE u64 lds_operand_descriptor(const void* lds, u32 k_step_bytes, u32 row_group_bytes) {
  return warpgroup_mma_ops<Target>::descriptor(lds, k_step_bytes, row_group_bytes);
}
template <class Target> NETRA_DEVICE void warpgroup_mma_bf16_m64n64_lds(float (&d)[32], u64 a, u64 b, bool accumulate) {
  warpgroup_mma_ops<Target>::m64n64_lds(d, a, b, accumulate);
}
template <class Target> NETRA_DEVICE void warpgroup_mma_bf16_m64n256_regs(float (&d)[128], const u32 (&a)[4], u64 b, bool accumulate) {
  warpgroup_mma_ops<Target>::m64n256_regs(d, a, b, accumulate);
}
template <class Target> NETRA_DEVICE void warpgroup_mma_bf16_m64n128_regs(float (&d)[64], const u32 (&a)[4], u64 b, bool accumulate) {
  warpgroup_mma_ops<Target>::m64n128_regs(d, a, b, accumulate);
}
template <class Target> NETRA_DEVICE void warpgroup_mma_fence() { warpgroup_mma_ops<Target>::fence(); }
template <class Target> NETRA_DEVICE void warpgroup_mma_commit() { warpgroup_mma_ops<Target>::commit(); }
template <class Target, u32 Pending> NETRA_DEVICE void warpgroup_mma_wait() { warpgroup_mma_ops<Target>::template wait<Pending>(); }
template <class Target> NETRA_DEVICE void lds_visible_to_matrix_unit() { warpgroup_mma_ops<Target>::lds_visible(); }
}  // namespace netra
