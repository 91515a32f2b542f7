// tests/runtime/signature_tensor.hpp — shape-only tensors for host dispatch tests: a contiguous
// tensor_arg of the given dtype and extents (row-major strides) on a device, pointing into a small
// arena that is never read (host tests only build signatures and ask the tactics about them).
#pragma once
#include <cstddef>
#include <initializer_list>

#include "netra/runtime/tensor.hpp"

namespace netra::testing {
inline constexpr device_ref cuda0{2, 0};
alignas(16) inline char signature_arena[64];

inline tensor_arg signature_tensor(dtype type, std::initializer_list<i64> shape, std::size_t offset = 0, device_ref d = cuda0) {
  tensor_arg a;
  a.data = signature_arena + offset;
  a.type = type;
  a.rank = static_cast<i32>(shape.size());
  a.device = d;
  i32 i = 0;
  for (i64 e : shape) a.shape[i++] = e;
  i64 stride = 1;
  for (i32 k = a.rank - 1; k >= 0; --k) a.strides[k] = stride, stride *= a.shape[k];
  return a;
}
}  // namespace netra::testing
