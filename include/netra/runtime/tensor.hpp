// netra/runtime/tensor.hpp — the typed tensor boundary (host only): a DLPack DLTensor (Debian's
// libdlpack-dev, DLPack 0.6) becomes the tensor_arg a contract's signature holds (no backend
// headers: host tests use it without a GPU stack).
//
//   tensor_of(const DLTensor*)   data + byte_offset, dtype, rank, extents, strides in elements
//                                (NULL strides: compact row-major), device. NULL: a missing
//                                tensor (rank -1), which every contract refuses. Nothing is
//                                validated here: the contract refuses, with the typed value.
//   device_of(device_info)       (runtime/backend.hpp) {kDLCUDA or kDLROCM, ordinal}.
//   strided_tensor(...)          a tensor_arg from a raw pointer and extents, for the C++ entry
//                                points that take pointers (ops::argmax(h, stream, logits, ...)).
//
// Element types: DLPack's float / bfloat / int / uint / bool codes by bits; DLPack 0.6 has no
// FP8 codes, so the DLPack 1.x numbers are read as well: 10 (kDLFloat8_e4m3fn) is e4m3 and
// 12 (kDLFloat8_e5m2) e5m2, 11 (kDLFloat8_e4m3fnuz) e4m3fnuz. A uint8 tensor is uint8; a contract that reads E4M3 bytes accepts it
// (dtype_accepts in contracts/common.hpp). Vector types (lanes != 1) are `other`.
#pragma once
#include <dlpack/dlpack.h>

#include <initializer_list>

#include "netra/contracts/common.hpp"

namespace netra {

/// DLPack 1.x type codes DLPack 0.6's header does not have.
inline constexpr u8 dlpack_float8_e4m3fn = 10;
inline constexpr u8 dlpack_float8_e5m2 = 12;
inline constexpr u8 dlpack_float8_e4m3fnuz = 11;

inline dtype dtype_of(DLDataType t) {
  if (t.lanes != 1) return dtype::other;
  switch (t.code) {
    case kDLFloat: return t.bits == 32 ? dtype::f32 : t.bits == 16 ? dtype::f16 : t.bits == 64 ? dtype::f64 : dtype::other;
    case kDLBfloat: return t.bits == 16 ? dtype::bf16 : dtype::other;
    case kDLInt:
      return t.bits == 8 ? dtype::i8 : t.bits == 16 ? dtype::i16 : t.bits == 32 ? dtype::i32 : t.bits == 64 ? dtype::i64 : dtype::other;
    case kDLUInt:
      return t.bits == 8 ? dtype::u8 : t.bits == 16 ? dtype::u16 : t.bits == 32 ? dtype::u32 : t.bits == 64 ? dtype::u64 : dtype::other;
    case dlpack_float8_e4m3fn: return t.bits == 8 ? dtype::e4m3 : dtype::other;
    case dlpack_float8_e5m2: return t.bits == 8 ? dtype::e5m2 : dtype::other;
    case dlpack_float8_e4m3fnuz: return t.bits == 8 ? dtype::e4m3fnuz : dtype::other;
    case 6: return t.bits == 8 ? dtype::boolean : dtype::other;  // kDLBool (DLPack >= 0.8)
    default: return dtype::other;
  }
}

inline tensor_arg tensor_of(const DLTensor* t) {
  tensor_arg a;
  if (t == nullptr) return a;
  a.data = t->data == nullptr ? nullptr : static_cast<const char*>(t->data) + t->byte_offset;
  a.type = dtype_of(t->dtype);
  a.dlpack_dtype = static_cast<u32>(t->dtype.code) | static_cast<u32>(t->dtype.bits) << 8 | static_cast<u32>(t->dtype.lanes) << 16;
  a.rank = t->ndim < 0 ? 0 : t->ndim;
  a.device = {static_cast<i32>(t->device.device_type), t->device.device_id};
  const i32 kept = a.rank < max_tensor_rank ? a.rank : max_tensor_rank;
  if (t->shape == nullptr && a.rank > 0) {
    a.rank = 0;  // no extents to read: refused at its shape
    return a;
  }
  for (i32 i = 0; i < kept; ++i) a.shape[i] = t->shape[i];
  if (a.rank > max_tensor_rank) return a;  // refused at its shape; its strides are not read
  i64 compact = 1;
  for (i32 i = a.rank - 1; i >= 0; --i) {
    a.strides[i] = t->strides != nullptr ? t->strides[i] : compact;
    compact *= t->shape[i];
  }
  return a;
}

/// A tensor_arg of `extents` at `data` on `device` with the given strides in elements (empty:
/// compact row-major).
inline tensor_arg strided_tensor(const void* data, dtype type, device_ref device, std::initializer_list<i64> extents,
                                 std::initializer_list<i64> strides = {}) {
  tensor_arg a;
  a.data = data;
  a.type = type;
  a.device = device;
  a.rank = static_cast<i32>(extents.size() < max_tensor_rank ? extents.size() : max_tensor_rank);
  i32 i = 0;
  for (const i64 e : extents)
    if (i < a.rank) a.shape[i++] = e;
  i64 compact = 1;
  for (i = a.rank - 1; i >= 0; --i) {
    a.strides[i] = compact;
    compact *= a.shape[i];
  }
  i = 0;
  for (const i64 s : strides)
    if (i < a.rank) a.strides[i++] = s;
  return a;
}

}  // namespace netra
