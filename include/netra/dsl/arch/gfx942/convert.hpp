// netra/dsl/arch/gfx942/convert.hpp — the gfx942 (CDNA3) FP8 conversion instructions, which write
// and read E4M3FNUZ (bias 8, max 240, NaN 0x80), not gfx950's OCP E4M3FN.
// Packing order as on gfx950 (docs/target-notes.md §8): the first operand goes to the LOW byte.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::gfx942_isa {
/// v_med3_f32: the median of three values.
NETRA_DEVICE float v_med3_f32(float a, float b, float c) { return __builtin_amdgcn_fmed3f(a, b, c); }

/// v_cvt_pk_fp8_f32 on gfx942: E4M3FNUZ of `lo` into byte 0 and of `hi` into byte 1
/// (WordSel = false) or bytes 2, 3 (WordSel = true, the other half of `old` kept). Round to
/// nearest even [S: CDNA3 ISA]; no saturation switch (callers clamp first).
template <bool WordSel> NETRA_DEVICE u32 v_cvt_pk_fp8_f32(float lo, float hi, u32 old) {
  return static_cast<u32>(__builtin_amdgcn_cvt_pk_fp8_f32(lo, hi, static_cast<int>(old), WordSel));
}

/// v_cvt_pk_f32_fp8 on gfx942: the E4M3FNUZ bytes 0, 1 (High = false) or 2, 3 (High = true) of
/// `word` to two FP32 (exact; 0x80 -> NaN) [S: CDNA3 ISA, VOP1 FP8 conversions].
template <bool High> NETRA_DEVICE void v_cvt_pk_f32_fp8(u32 word, float& lo, float& hi) {
  typedef float v2f32_fnuz __attribute__((ext_vector_type(2)));
  const v2f32_fnuz v = __builtin_amdgcn_cvt_pk_f32_fp8(static_cast<int>(word), High);
  const float a = v.x, b = v.y;  // element copies (clang: bit_cast of a vector element reads element 0)
  lo = a, hi = b;
}
}  // namespace netra::gfx942_isa
