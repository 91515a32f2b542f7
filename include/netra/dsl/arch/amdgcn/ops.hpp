// netra/dsl/arch/amdgcn/ops.hpp — the target-neutral operations every gfx9 CDNA target
// (gfx90a, gfx942, gfx950) and the RDNA target gfx1151 (at its wave32) spell the same way.
// Workgroups are one-dimensional in x. target_ops<gfx9xx> derives from this and adds what differs (conversions, matrix units).
#pragma once
#include "netra/dsl/arch/amdgcn/cross_lane.hpp"
#include "netra/dsl/arch/amdgcn/ids.hpp"
#include "netra/dsl/arch/amdgcn/memory.hpp"
#include "netra/dsl/arch/amdgcn/sync.hpp"
#include "netra/dsl/target.hpp"

namespace netra {
template <class Target> struct amdgcn_ops {
  static_assert(Target::wave_size == 64 || Target::wave_size == 32,
                "netra::amdgcn_ops: gfx9 CDNA targets run wave64, RDNA targets (gfx1151) wave32");
  static constexpr u32 wave_size = Target::wave_size;

  static NETRA_DEVICE u32 thread_id() { return amdgcn_isa::workitem_id_x(); }
  static NETRA_DEVICE u32 lane_id() { return amdgcn_isa::workitem_id_x() & (wave_size - 1); }
  template <int Dim> static NETRA_DEVICE u32 workgroup_id() {
    static_assert(Dim >= 0 && Dim <= 2, "netra::amdgcn_ops::workgroup_id: Dim must be 0, 1 or 2");
    if constexpr (Dim == 0) return amdgcn_isa::workgroup_id_x();
    else if constexpr (Dim == 1) return amdgcn_isa::workgroup_id_y();
    else return amdgcn_isa::workgroup_id_z();
  }

  /// Lane i receives `value` of lane i ^ lane_mask (one ds_bpermute_b32).
  static NETRA_DEVICE u32 xor_shuffle(u32 value, u32 lane_mask) {
    return amdgcn_isa::ds_bpermute_b32((lane_id() ^ lane_mask) << 2, value);
  }
  /// Every lane receives `value` of lane `source_lane`.
  static NETRA_DEVICE u32 broadcast(u32 value, u32 source_lane) { return amdgcn_isa::ds_bpermute_b32(source_lane << 2, value); }

  template <cache_policy Policy> static NETRA_DEVICE u32x4 load_16B(const void* address) {
    return amdgcn_isa::global_load_dwordx4<Policy>(address);
  }
  template <cache_policy Policy> static NETRA_DEVICE void store_16B(void* address, u32x4 value) {
    amdgcn_isa::global_store_dwordx4<Policy>(address, value);
  }
  static NETRA_DEVICE void store_8B_streaming(void* address, u32 lo, u32 hi) { amdgcn_isa::global_store_dwordx2_nt(address, lo, hi); }
  /// After fence_acquire() an ordinary load observes released data (the fence invalidated L1).
  static NETRA_DEVICE u32x4 load_16B_after_acquire(const void* address) { return amdgcn_isa::global_load_dwordx4(address); }

  /// No programmatic dependent launch on gfx9: dependent kernels start after the kernel boundary.
  static NETRA_DEVICE void launch_dependents() {}
  static NETRA_DEVICE void wait_for_prerequisites() {}

  static NETRA_DEVICE void fence_release() { amdgcn_isa::fence_release_agent(); }
  static NETRA_DEVICE void fence_acquire() { amdgcn_isa::fence_acquire_agent(); }
  static NETRA_DEVICE u32 atomic_add_relaxed(u32* address, u32 value) { return amdgcn_isa::global_atomic_add_u32(address, value); }

  /// IEEE maxNum (v_max_f32): if one operand is NaN, the other.
  static NETRA_DEVICE float max_num(float a, float b) { return __builtin_fmaxf(a, b); }
};
}  // namespace netra
