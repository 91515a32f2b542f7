// netra/dsl/convert_fp8_bf16.hpp — four FP8 values of a named format (one 32-bit word, byte i =
// value i) to four BF16 values (bf16x4 of dsl/convert_e4m3_bf16.hpp), in the FP8 format of the
// target's conversion instruction (native_fp8_t<Target>, dsl/fp8_format.hpp). Exact in both
// formats (every E4M3FN and E4M3FNUZ value is a BF16 value); NaN becomes the BF16 NaN 0x7FFF.
//   host:   fp8x4_to_bf16x4_reference<F> (dsl/convert_e4m3_bf16.hpp)
//   E4M3FN (gfx950, sm90a): e4m3x4_to_bf16x4<Target> (its instructions).
//   E4M3FNUZ (gfx942): v_cvt_pk_f32_fp8 (exact [S: CDNA3 ISA]), then the software BF16 pack
//     (gfx942 has no BF16 conversion); the NaN byte 0x80 is set to 0x7FFF after it, so the
//     instruction's NaN output is not relied on (as in dsl/fp8_pack.hpp).
#pragma once
#include "netra/dsl/convert_e4m3_bf16.hpp"
#include "netra/dsl/fp8_pack.hpp"

namespace netra {

template <class Target, class Format = native_fp8_t<Target>> struct fp8_widen_ops {
  static_assert(dependent_false_v<Target>, "netra::fp8_widen_ops: no FP8 widening for this target and format");
};
#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
template <class Target> struct fp8_widen_ops<Target, fp8::e4m3fn> {
  static NETRA_DEVICE bf16x4 run(u32 word) { return e4m3x4_to_bf16x4<Target>(word); }
};
#endif
#if defined(NETRA_HAS_GFX942_FP8_CONVERT)
template <> struct fp8_widen_ops<gfx942, fp8::e4m3fnuz> {
  /// BF16 pair word of bytes 2h, 2h + 1 (High = h), NaN bytes 0x80 set to 0x7FFF.
  template <bool High> static NETRA_DEVICE u32 pair(u32 word) {
    float lo, hi;
    gfx942_isa::v_cvt_pk_f32_fp8<High>(word, lo, hi);
    const u32 p = pack_bf16x2<gfx942>(lo, hi), b0 = (word >> (High ? 16 : 0)) & 0xFFu, b1 = (word >> (High ? 24 : 8)) & 0xFFu;
    return (b0 == 0x80u ? 0x7FFFu : p & 0xFFFFu) | (b1 == 0x80u ? 0x7FFF0000u : p & 0xFFFF0000u);
  }
  static NETRA_DEVICE bf16x4 run(u32 word) { return {pair<false>(word), pair<true>(word)}; }
};
#endif

/// The device form of fp8x4_to_bf16x4_reference<native_fp8_t<Target>> (the same bits).
template <class Target> NETRA_DEVICE bf16x4 fp8x4_to_bf16x4(u32 word) { return fp8_widen_ops<Target>::run(word); }

}  // namespace netra
