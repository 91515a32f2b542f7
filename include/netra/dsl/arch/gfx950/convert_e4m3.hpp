// netra/dsl/arch/gfx950/convert_e4m3.hpp — E4M3 widening on gfx950 (OCP E4M3FN): two values of a
// word to FP32 (exact).
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::gfx950_isa {
/// v_cvt_pk_f32_fp8: bytes 0, 1 (High = false) or 2, 3 (High = true) of `word` to two FP32.
template <bool High> NETRA_DEVICE void v_cvt_pk_f32_fp8(u32 word, float& lo, float& hi) {
  typedef float v2f32_e4m3 __attribute__((ext_vector_type(2)));
  const v2f32_e4m3 v = __builtin_amdgcn_cvt_pk_f32_fp8(static_cast<int>(word), High);
  const float a = v.x, b = v.y;  // element copies (clang: bit_cast of a vector element reads element 0)
  lo = a, hi = b;
}
}  // namespace netra::gfx950_isa
