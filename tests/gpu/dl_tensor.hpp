// tests/gpu/dl_tensor.hpp — DLTensors over test buffers for the C ABI (netra/c/netra.h):
// dl_tensor owns its shape and strides arrays (not copyable: the DLTensor points into it); strides
// empty means NULL strides (compact row-major). Device: kDLCUDA 0 unless given.
#pragma once
#include <dlpack/dlpack.h>

#include <array>
#include <cstdint>
#include <initializer_list>

#include "netra/c/argmax.h"

namespace netra::testing {

inline constexpr DLDataType dl_f32{kDLFloat, 32, 1}, dl_f64{kDLFloat, 64, 1}, dl_f16{kDLFloat, 16, 1}, dl_bf16{kDLBfloat, 16, 1},
    dl_i32{kDLInt, 32, 1}, dl_i64{kDLInt, 64, 1}, dl_u8{kDLUInt, 8, 1}, dl_e4m3{10, 8, 1};  // 10: DLPack 1.x kDLFloat8_e4m3fn

struct dl_tensor {
  std::array<std::int64_t, 8> shape{}, strides{};
  DLTensor t{};
  dl_tensor(const void* data, DLDataType type, std::initializer_list<std::int64_t> extents, std::initializer_list<std::int64_t> strides_ = {},
            DLDevice device = {kDLCUDA, 0}) {
    t.data = const_cast<void*>(data);
    t.device = device;
    t.dtype = type;
    t.ndim = static_cast<std::int32_t>(extents.size());
    int i = 0;
    for (const auto e : extents) shape[static_cast<std::size_t>(i++)] = e;
    i = 0;
    for (const auto s : strides_) strides[static_cast<std::size_t>(i++)] = s;
    t.shape = shape.data();
    t.strides = strides_.size() ? strides.data() : nullptr;
  }
  dl_tensor(const dl_tensor&) = delete;
  dl_tensor& operator=(const dl_tensor&) = delete;
  const DLTensor* get() const { return &t; }
};

/// netra_argmax over FP32 rows (row r at logits + r * row_stride) into int64 out[rows].
inline netra_status argmax_rows(netra_argmax_handle* h, const float* logits, std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                                const std::int64_t* out, void* stream) {
  const dl_tensor l(logits, dl_f32, {rows, cols}, {row_stride, 1}), o(out, dl_i64, {rows});
  return netra_argmax(h, l.get(), o.get(), stream);
}
inline netra_status argmax_rows_explain(netra_argmax_handle* h, const float* logits, std::int64_t rows, std::int64_t cols,
                                        std::int64_t row_stride, const std::int64_t* out, char* text, size_t capacity, size_t* length) {
  const dl_tensor l(logits, dl_f32, {rows, cols}, {row_stride, 1}), o(out, dl_i64, {rows});
  return netra_argmax_explain(h, l.get(), o.get(), text, capacity, length);
}

}  // namespace netra::testing
