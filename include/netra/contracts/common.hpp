// netra/contracts/common.hpp — vocabulary shared by every contract: element types, run-time
// decisions (admit / refuse with the first refusing field and its typed value), tensor arguments
// and the rule each is checked against, and per-target resource budgets.
// Device-light: no standard library, usable from kernels, hosts and RTC compilers.
#pragma once
#include "netra/dsl/fp8_format.hpp"
#include "netra/dsl/target.hpp"

namespace netra {

/// Element types as netra names them (DLPack's codes map onto them in runtime/tensor.hpp; a
/// DLPack type netra has no name for is `other`). Names follow torch ("float32", "bfloat16").
/// e4m3 is OCP E4M3FN, e4m3fnuz AMD CDNA3's E4M3FNUZ (dsl/fp8_format.hpp): distinct types, so a
/// contract that reads one refuses the other (appended last: the numbers of the others stay).
enum class dtype : u8 { f32, bf16, f16, e4m3, e5m2, i32, i64, u64, f64, i8, i16, u8, u16, u32, boolean, other, e4m3fnuz };

NETRA_HOST_DEVICE constexpr const char* dtype_name(dtype t) {
  switch (t) {
    case dtype::f32: return "float32";
    case dtype::bf16: return "bfloat16";
    case dtype::f16: return "float16";
    case dtype::e4m3: return "float8_e4m3fn";
    case dtype::e5m2: return "float8_e5m2";
    case dtype::i32: return "int32";
    case dtype::i64: return "int64";
    case dtype::u64: return "uint64";
    case dtype::f64: return "float64";
    case dtype::i8: return "int8";
    case dtype::i16: return "int16";
    case dtype::u8: return "uint8";
    case dtype::u16: return "uint16";
    case dtype::u32: return "uint32";
    case dtype::boolean: return "bool";
    case dtype::other: return "other";
    case dtype::e4m3fnuz: return "float8_e4m3fnuz";
  }
  return "other";
}

/// The element type of a tensor in FP8 format F (a contract names the format of each FP8 tensor).
template <fp8_format F> inline constexpr dtype fp8_dtype_v = same_v<F, fp8::e4m3fnuz> ? dtype::e4m3fnuz : dtype::e4m3;

/// Where a call happens relative to graph capture. A contract that is only valid (or only
/// promoted) inside captured graphs admits `captured` alone.
enum class graph_phase : u8 { eager, captured };

/// Where a tensor lives, numbered as DLPack numbers it (DLDeviceType: 1 cpu, 2 cuda, 10 rocm, ...;
/// id: the device ordinal).
struct device_ref {
  i32 type = 0;
  i32 id = 0;
};
NETRA_HOST_DEVICE constexpr bool operator==(device_ref a, device_ref b) { return a.type == b.type && a.id == b.id; }

/// The most dimensions a contract's tensor argument has (a tensor of more is refused at its shape).
inline constexpr i32 max_tensor_rank = 4;

/// One tensor argument of a call as a signature holds it (built from a DLTensor by
/// runtime/tensor.hpp): the first element's address, element type, extents and strides in
/// elements (compact row-major when the DLTensor had none), device.
struct tensor_arg {
  const void* data = nullptr;     // DLTensor data + byte_offset
  dtype type = dtype::other;
  u32 dlpack_dtype = 0;           // code | bits << 8 | lanes << 16, as passed (the text of `other`)
  i32 rank = -1;                  // -1: no tensor (a NULL DLTensor)
  i64 shape[max_tensor_rank] = {};
  i64 strides[max_tensor_rank] = {};
  device_ref device;
  /// Extent of dimension d (0 past the rank).
  NETRA_HOST_DEVICE constexpr i64 extent(i32 d) const { return d >= 0 && d < rank && d < max_tensor_rank ? shape[d] : 0; }
};

/// How a refused value reads: a number, an address, a target, an element type, a shape, strides,
/// a device, a missing tensor, or a named value (an enumerator of a contract field: the value and
/// the name it reads as, in `value_name`).
enum class value_kind : u8 { number, address, target, dtype, shape, strides, device, missing, named };

/// The result of admits(signature): admitted, or the first field that refused, what the
/// contract requires of it, and the value the call had — one number (values[0]), or `count`
/// extents / strides / {device type, id}. `expected` (expected_count entries, -1: any) is the
/// value the contract wanted, where it is one.
struct decision {
  const char* field = nullptr;
  const char* requirement = nullptr;
  value_kind kind = value_kind::number;
  i32 count = 1;
  i64 values[max_tensor_rank] = {};
  i32 expected_count = 0;
  i64 expected[max_tensor_rank] = {};
  const char* value_name = nullptr;  // value_kind::named: the value's name
  NETRA_HOST_DEVICE constexpr bool admitted() const { return field == nullptr; }
  NETRA_HOST_DEVICE constexpr i64 value() const { return values[0]; }
};
NETRA_HOST_DEVICE constexpr decision admit() { return decision{}; }
NETRA_HOST_DEVICE constexpr decision refuse(const char* field, const char* requirement, i64 value, value_kind kind = value_kind::number) {
  decision d{};
  d.field = field;
  d.requirement = requirement;
  d.kind = kind;
  d.values[0] = value;
  return d;
}
NETRA_HOST_DEVICE constexpr decision refuse(const char* field, const char* requirement, target_id value) {
  return refuse(field, requirement, static_cast<i64>(value), value_kind::target);
}
NETRA_HOST_DEVICE constexpr decision refuse(const char* field, const char* requirement, dtype value) {
  return refuse(field, requirement, static_cast<i64>(value), value_kind::dtype);
}
/// The refusal of a field whose values have names (a phase, a mode): the value as its enumerator's
/// number and as the name it reads as.
NETRA_HOST_DEVICE constexpr decision refuse_named(const char* field, const char* requirement, i64 value, const char* name) {
  decision d = refuse(field, requirement, value, value_kind::named);
  d.value_name = name;
  return d;
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
  static_assert(Alignment == 1 || Alignment == 2 || Alignment == 4 || Alignment == 8 || Alignment == 16,
                "netra::pointer_requirement: alignment 1, 2, 4, 8 or 16");
  static constexpr const char* text = Alignment == 1   ? "non-null data"
                                      : Alignment == 2 ? "non-null and 2-byte aligned data"
                                      : Alignment == 4 ? "non-null and 4-byte aligned data"
                                      : Alignment == 8 ? "non-null and 8-byte aligned data"
                                                       : "non-null and 16-byte aligned data";
};
/// admit() when `p` is non-null and Alignment-byte aligned, else the refusal of `field` (its
/// value: the address).
template <u64 Alignment> NETRA_HOST_DEVICE decision require_pointer(const char* field, const void* p) {
  if (p == nullptr || !aligned_to(p, Alignment))
    return refuse(field, pointer_requirement<Alignment>::text, static_cast<i64>(__builtin_bit_cast(u64, p)), value_kind::address);
  return admit();
}

/// A caller-owned workspace (`s.workspace`, `s.workspace_bytes`): 16-byte aligned and at least
/// `bytes` (the contract's workspace_bytes), else the refusal naming the field.
template <class Signature> NETRA_HOST_DEVICE decision require_workspace(const Signature& s, u64 bytes) {
  if (const decision d = require_pointer<16>("workspace", s.workspace); !d.admitted()) return d;
  if (s.workspace_bytes < bytes) return refuse("workspace_bytes", ">= the contract's workspace_bytes", static_cast<i64>(s.workspace_bytes));
  return admit();
}

/// How a tensor argument's elements must lie: compact row-major (strides of extent-1 dimensions
/// do not matter), or `rows`: the last dimension contiguous and the others any stride (the
/// contract checks those itself).
enum class layout : u8 { compact, rows };

/// What one tensor argument of a contract must be: element type (e4m3 also takes uint8 tensors
/// holding E4M3 bytes), rank and extents (-1: any; the contract checks those itself),
/// `shape_text` naming them ("[rows, N]"), layout and the alignment of its first element.
struct tensor_rule {
  const char* field;
  dtype type;
  i32 rank;
  i64 shape[max_tensor_rank];
  const char* shape_text;
  layout order;
  u64 alignment;
};

/// An FP8 format also takes uint8 tensors holding its bytes (raw bytes name no format: the caller
/// vouches for it); the two E4M3 formats never take each other.
NETRA_HOST_DEVICE constexpr bool dtype_accepts(dtype wanted, dtype got) {
  return got == wanted || ((wanted == dtype::e4m3 || wanted == dtype::e4m3fnuz) && got == dtype::u8);
}

/// The requirement texts of require_tensor (a rule's own shape text goes with its shape refusal).
struct tensor_requirement {
  static constexpr const char* present = "a tensor";
  static constexpr const char* device = "the handle's device";
  static constexpr const char* compact = "compact row-major strides";
  static constexpr const char* rows = "contiguous rows (last stride 1)";
};

/// admit() when `t` is on `device` with the rule's element type, rank, extents, layout and
/// alignment; else the refusal of the rule's field, in that order.
NETRA_HOST_DEVICE decision require_tensor(const tensor_arg& t, const tensor_rule& r, device_ref device) {
  if (t.rank < 0) return refuse(r.field, tensor_requirement::present, 0, value_kind::missing);
  if (!(t.device == device)) {
    decision d = refuse(r.field, tensor_requirement::device, t.device.type, value_kind::device);
    d.count = 2;
    d.values[1] = t.device.id;
    d.expected_count = 2;
    d.expected[0] = device.type;
    d.expected[1] = device.id;
    return d;
  }
  if (!dtype_accepts(r.type, t.type)) {
    decision d = refuse(r.field, dtype_name(r.type), t.type);
    d.count = 2;
    d.values[1] = t.dlpack_dtype;
    return d;
  }
  bool shape_ok = t.rank == r.rank;
  for (i32 i = 0; shape_ok && i < r.rank; ++i) shape_ok = r.shape[i] < 0 || t.shape[i] == r.shape[i];
  if (!shape_ok) {
    decision d = refuse(r.field, r.shape_text, 0, value_kind::shape);
    d.count = t.rank < max_tensor_rank ? t.rank : max_tensor_rank;
    for (i32 i = 0; i < d.count; ++i) d.values[i] = t.shape[i];
    d.expected_count = r.rank;
    for (i32 i = 0; i < r.rank; ++i) d.expected[i] = r.shape[i];
    return d;
  }
  bool strides_ok = true;
  i64 compact = 1;
  for (i32 i = r.rank - 1; i >= 0; --i) {
    const bool checked = r.order == layout::compact || i == r.rank - 1;
    if (checked && t.shape[i] > 1 && t.strides[i] != compact) strides_ok = false;
    compact *= t.shape[i];
  }
  if (!strides_ok) {
    decision d = refuse(r.field, r.order == layout::compact ? tensor_requirement::compact : tensor_requirement::rows, 0, value_kind::strides);
    d.count = r.rank;
    for (i32 i = 0; i < r.rank; ++i) d.values[i] = t.strides[i];
    return d;
  }
  // A tensor without elements is never dereferenced: its address is not checked (an empty
  // DLPack or torch tensor may carry a null data pointer).
  i64 elements = 1;
  for (i32 i = 0; i < r.rank; ++i) elements *= t.shape[i];
  if (elements == 0) return admit();
  if (t.data == nullptr || !aligned_to(t.data, r.alignment)) {
    const char* text = r.alignment >= 16 ? pointer_requirement<16>::text
                       : r.alignment >= 8 ? pointer_requirement<8>::text
                       : r.alignment >= 4 ? pointer_requirement<4>::text
                       : r.alignment >= 2 ? pointer_requirement<2>::text
                                          : pointer_requirement<1>::text;
    return refuse(r.field, text, static_cast<i64>(__builtin_bit_cast(u64, t.data)), value_kind::address);
  }
  return admit();
}

}  // namespace netra
