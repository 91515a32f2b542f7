// netra/dsl/arch/sm90a/ops.hpp — target_ops<sm90a>: the target-neutral operations spelled
// with sm_90a instructions. "Wave" means the 32-thread warp. Blocks are one-dimensional in x.
#pragma once
#include "netra/dsl/arch/sm90a/convert.hpp"
#include "netra/dsl/arch/sm90a/cross_lane.hpp"
#include "netra/dsl/arch/sm90a/ids.hpp"
#include "netra/dsl/arch/sm90a/memory.hpp"
#include "netra/dsl/arch/sm90a/sync.hpp"

namespace netra {
template <> struct target_ops<sm90a> {
  static constexpr u32 wave_size = sm90a::wave_size;

  static NETRA_DEVICE u32 thread_id() { return sm90a_isa::tid_x(); }
  static NETRA_DEVICE u32 lane_id() { return sm90a_isa::tid_x() & (wave_size - 1); }
  template <int Dim> static NETRA_DEVICE u32 workgroup_id() {
    static_assert(Dim >= 0 && Dim <= 2, "netra::target_ops<sm90a>::workgroup_id: Dim must be 0, 1 or 2");
    if constexpr (Dim == 0) return sm90a_isa::ctaid_x();
    else if constexpr (Dim == 1) return sm90a_isa::ctaid_y();
    else return sm90a_isa::ctaid_z();
  }

  static NETRA_DEVICE u32 xor_shuffle(u32 value, u32 lane_mask) { return sm90a_isa::shfl_sync_bfly_b32(value, lane_mask); }
  static NETRA_DEVICE u32 broadcast(u32 value, u32 source_lane) { return sm90a_isa::shfl_sync_idx_b32(value, source_lane); }

  template <cache_policy Policy> static NETRA_DEVICE u32x4 load_16B(const void* address) {
    return sm90a_isa::ld_global_nc_v4_b32<Policy>(address);
  }
  template <cache_policy Policy> static NETRA_DEVICE void store_16B(void* address, u32x4 value) {
    sm90a_isa::st_global_v4_b32<Policy>(address, value);
  }
  static NETRA_DEVICE void store_8B_streaming(void* address, u32 lo, u32 hi) { sm90a_isa::st_global_cs_v2_b32(address, lo, hi); }
  /// After fence_acquire(), a strong (relaxed, gpu-scope) load: L1 is not coherent on sm_90.
  static NETRA_DEVICE u32x4 load_16B_after_acquire(const void* address) { return sm90a_isa::ld_relaxed_gpu_v4_b32(address); }

  static NETRA_DEVICE void launch_dependents() { sm90a_isa::griddepcontrol_launch_dependents(); }
  static NETRA_DEVICE void wait_for_prerequisites() { sm90a_isa::griddepcontrol_wait(); }

  static NETRA_DEVICE void fence_release() { sm90a_isa::fence_acq_rel_gpu(); }
  static NETRA_DEVICE void fence_acquire() { sm90a_isa::fence_acq_rel_gpu(); }
  static NETRA_DEVICE u32 atomic_add_relaxed(u32* address, u32 value) { return sm90a_isa::atom_relaxed_gpu_add_u32(address, value); }

  /// IEEE maxNum (max.f32): if one operand is NaN, the other.
  static NETRA_DEVICE float max_num(float a, float b) { return sm90a_isa::max_f32(a, b); }

  /// The instruction already has netra's E4M3 semantics (RNE, satfinite, NaN -> 0x7F).
  static NETRA_DEVICE u32 pack_e4m3x2(float lo, float hi) { return sm90a_isa::cvt_rn_satfinite_e4m3x2_f32(lo, hi); }
  /// The instruction already has netra's BF16 semantics (RNE, NaN -> 0x7FFF).
  static NETRA_DEVICE u32 pack_bf16x2(float lo, float hi) { return sm90a_isa::cvt_rn_bf16x2_f32(lo, hi); }
};
}  // namespace netra
