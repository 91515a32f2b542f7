// netra/contracts/common.hpp — vocabulary shared by every contract: element types, run-time
// decisions (admit / refuse with the first refusing field) and per-target resource budgets.
// Device-light: no standard library, usable from kernels, hosts and RTC compilers.
#pragma once
#include "netra/dsl/target.hpp"

namespace netra {

enum class dtype : u8 { f32, bf16, f16, e4m3, e5m2, i32, i64, u64 };

NETRA_HOST_DEVICE constexpr const char* dtype_name(dtype t) {
  switch (t) {
    case dtype::f32: return "f32";
    case dtype::bf16: return "bf16";
    case dtype::f16: return "f16";
    case dtype::e4m3: return "e4m3";
    case dtype::e5m2: return "e5m2";
    case dtype::i32: return "i32";
    case dtype::i64: return "i64";
    case dtype::u64: return "u64";
  }
  return "unknown";
}

/// Where a call happens relative to graph capture. A contract that is only valid (or only
/// promoted) inside captured graphs admits `captured` alone.
enum class graph_phase : u8 { eager, captured };

/// How a refused value reads: a number, a target or an element type.
enum class value_kind : u8 { number, target, dtype };

/// The result of admits(signature): admitted, or the first field that refused, what the
/// contract requires of it, and the value the call had.
struct decision {
  const char* field = nullptr;
  const char* requirement = nullptr;
  i64 value = 0;
  value_kind kind = value_kind::number;
  NETRA_HOST_DEVICE constexpr bool admitted() const { return field == nullptr; }
};
NETRA_HOST_DEVICE constexpr decision admit() { return decision{}; }
NETRA_HOST_DEVICE constexpr decision refuse(const char* field, const char* requirement, i64 value) {
  return decision{field, requirement, value, value_kind::number};
}
NETRA_HOST_DEVICE constexpr decision refuse(const char* field, const char* requirement, target_id value) {
  return decision{field, requirement, static_cast<i64>(value), value_kind::target};
}
NETRA_HOST_DEVICE constexpr decision refuse(const char* field, const char* requirement, dtype value) {
  return decision{field, requirement, static_cast<i64>(value), value_kind::dtype};
}

/// Per-kernel resource ceilings the audit enforces for one target. Fields that do not apply to
/// a target are left at their defaults and not checked there (AMD: VGPR/AGPR/SGPR; NVIDIA:
/// registers). Scratch covers AMD private segment and NVIDIA stack frame; spills cover VGPR/SGPR
/// spill counts on AMD and spill-store bytes on NVIDIA.
struct resource_budget {
  u32 max_vgprs = 0;
  u32 max_agprs = 0;
  u32 max_sgprs = 0;
  u32 max_registers = 0;
  u32 max_lds_bytes = 0;
  u32 max_scratch_bytes = 0;
  u32 max_spills = 0;
  u32 max_code_bytes = 0;
};

NETRA_HOST_DEVICE bool aligned_to(const void* p, u64 bytes) {
  return (__builtin_bit_cast(u64, p) % bytes) == 0;
}

/// What a pointer field of a signature must be: non-null and Alignment-byte aligned.
template <u64 Alignment> struct pointer_requirement {
  static_assert(Alignment == 4 || Alignment == 8 || Alignment == 16, "netra::pointer_requirement: alignment 4, 8 or 16");
  static constexpr const char* text =
      Alignment == 4 ? "non-null and 4-byte aligned" : Alignment == 8 ? "non-null and 8-byte aligned" : "non-null and 16-byte aligned";
};
/// admit() when `p` is non-null and Alignment-byte aligned, else the refusal of `field` (its
/// value: the address).
template <u64 Alignment> NETRA_HOST_DEVICE decision require_pointer(const char* field, const void* p) {
  if (p == nullptr || !aligned_to(p, Alignment)) return refuse(field, pointer_requirement<Alignment>::text, static_cast<i64>(__builtin_bit_cast(u64, p)));
  return admit();
}

}  // namespace netra
