// netra/dsl/arch/gfx950/ops.hpp — target_ops<gfx950>: the common gfx9 operations plus the
// gfx950 conversion instructions.
#pragma once
#include "netra/dsl/arch/amdgcn/ops.hpp"
#include "netra/dsl/arch/gfx950/convert.hpp"

namespace netra {
template <> struct target_ops<gfx950> : amdgcn_ops<gfx950> {
  /// Two E4M3 values, `lo` in bits 0..7 and `hi` in bits 8..15: round to nearest even,
  /// saturate finite overflow and ±Inf to ±448, NaN -> 0x7F. The instruction does not
  /// saturate, so finite values and Inf are clamped with v_med3 first; NaN is selected after.
  static NETRA_DEVICE u32 pack_e4m3x2(float lo, float hi) {
    const float cl = gfx950_isa::v_med3_f32(lo, 448.0f, -448.0f);
    const float ch = gfx950_isa::v_med3_f32(hi, 448.0f, -448.0f);
    u32 packed = gfx950_isa::v_cvt_pk_fp8_f32<false>(cl, ch, 0u) & 0xFFFFu;
    if (lo != lo) packed = (packed & 0xFF00u) | 0x7Fu;
    if (hi != hi) packed = (packed & 0x00FFu) | 0x7F00u;
    return packed;
  }

  /// Two BF16 values, `lo` in bits 0..15, `hi` in bits 16..31: round to nearest even, NaN ->
  /// the canonical 0x7FFF (the instruction's NaN payload is not relied on).
  static NETRA_DEVICE u32 pack_bf16x2(float lo, float hi) {
    u32 packed = gfx950_isa::v_cvt_pk_bf16_f32(lo, hi);
    if (lo != lo) packed = (packed & 0xFFFF0000u) | 0x7FFFu;
    if (hi != hi) packed = (packed & 0x0000FFFFu) | 0x7FFF0000u;
    return packed;
  }
};
}  // namespace netra
