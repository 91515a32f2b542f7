// netra/dsl/fp8_pack.hpp — two FP32 values to two FP8 bytes of a named format on the device
// (`lo` in bits 0..7, `hi` in bits 8..15), with dsl/fp8_format.hpp's semantics:
//   E4M3FN:   target_ops<Target>::pack_e4m3x2 (the instruction on gfx950 and sm90a, the reference
//             on the bits on gfx942 and gfx1151: docs/target-notes.md, gfx942 / gfx1151).
//   E4M3FNUZ: on gfx942 v_cvt_pk_fp8_f32 (which writes FNUZ, rounding to nearest even [S: CDNA3
//             ISA]) after a v_med3 clamp to ±240, with NaN -> 0x80 and a zero result -> 0x00 set
//             after it (the instruction's NaN and signed-zero outputs are not relied on); on every
//             other target the reference on the bits.
#pragma once
#include "netra/dsl/convert.hpp"

#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8))
#include "netra/dsl/arch/gfx942/convert.hpp"
#define NETRA_HAS_GFX942_FP8_CONVERT 1
#endif

namespace netra {
template <fp8_format F, class Target> struct fp8_pack_ops {  // the reference on the bits
  static NETRA_DEVICE u32 run(float lo, float hi) {
    return static_cast<u32>(fp8_from_f32_reference<F>(lo)) | (static_cast<u32>(fp8_from_f32_reference<F>(hi)) << 8);
  }
};
template <class Target> struct fp8_pack_ops<fp8::e4m3fn, Target> {
  static NETRA_DEVICE u32 run(float lo, float hi) { return pack_e4m3x2<Target>(lo, hi); }
};
#if defined(NETRA_HAS_GFX942_FP8_CONVERT)
template <> struct fp8_pack_ops<fp8::e4m3fnuz, gfx942> {
  static NETRA_DEVICE u32 run(float lo, float hi) {
    const float cl = gfx942_isa::v_med3_f32(lo, 240.0f, -240.0f), ch = gfx942_isa::v_med3_f32(hi, 240.0f, -240.0f);
    u32 b0 = gfx942_isa::v_cvt_pk_fp8_f32<false>(cl, ch, 0u) & 0xFFu, b1 = (gfx942_isa::v_cvt_pk_fp8_f32<false>(cl, ch, 0u) >> 8) & 0xFFu;
    b0 = lo != lo ? 0x80u : (b0 & 0x7Fu) == 0 ? 0u : b0;
    b1 = hi != hi ? 0x80u : (b1 & 0x7Fu) == 0 ? 0u : b1;
    return b0 | (b1 << 8);
  }
};
#endif

/// Two values of format F packed as `lo` in bits 0..7, `hi` in bits 8..15 (memory order lo, hi).
template <fp8_format F, class Target> NETRA_DEVICE u32 pack_fp8x2(float lo, float hi) { return fp8_pack_ops<F, Target>::run(lo, hi); }
}  // namespace netra
