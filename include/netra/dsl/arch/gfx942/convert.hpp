// netra/dsl/arch/gfx942/convert.hpp — the gfx942 (CDNA3) FP8 conversion instruction, which writes
// E4M3FNUZ (bias 8, max 240, NaN 0x80), not gfx950's OCP E4M3FN.
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
}  // namespace netra::gfx942_isa
