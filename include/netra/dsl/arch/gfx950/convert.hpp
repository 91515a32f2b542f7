// netra/dsl/arch/gfx950/convert.hpp — conversion and clamp instructions on gfx950.
// Packing order (docs/target-notes.md §8): the first operand goes to the LOW byte/half.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::gfx950_isa {
/// v_med3_f32: the median of three values.
NETRA_DEVICE float v_med3_f32(float a, float b, float c) { return __builtin_amdgcn_fmed3f(a, b, c); }

/// v_cvt_pk_fp8_f32: OCP E4M3 of `lo` into byte 0 and of `hi` into byte 1 (WordSel=false) or
/// bytes 2,3 (WordSel=true, the other half of `old` kept). Round to nearest even; no
/// saturation (callers clamp first).
template <bool WordSel> NETRA_DEVICE u32 v_cvt_pk_fp8_f32(float lo, float hi, u32 old) {
  return static_cast<u32>(__builtin_amdgcn_cvt_pk_fp8_f32(lo, hi, static_cast<int>(old), WordSel));
}

/// v_cvt_pk_bf16_f32: bf16(lo) in bits 0..15, bf16(hi) in bits 16..31, round to nearest even.
NETRA_DEVICE u32 v_cvt_pk_bf16_f32(float lo, float hi) {
  typedef __bf16 v2bf16 __attribute__((ext_vector_type(2)));
  v2bf16 v = {static_cast<__bf16>(lo), static_cast<__bf16>(hi)};
  return __builtin_bit_cast(u32, v);
}
}  // namespace netra::gfx950_isa
