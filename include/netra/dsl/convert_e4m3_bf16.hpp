// netra/dsl/convert_e4m3_bf16.hpp — four OCP E4M3 values (one 32-bit word, byte i = value i) to
// four BF16 values (two words: value 0 in bits 0..15 of the first, value 1 in bits 16..31, values
// 2, 3 likewise in the second). Exact: every E4M3 value (±448, subnormals m * 2^-9, ±0) is a BF16
// value; E4M3 NaN (S.1111.111) becomes the BF16 NaN 0x7FFF (netra's canonical NaN).
//   host:   e4m3x4_to_bf16x4_reference = fp8x4_to_bf16x4_reference<fp8::e4m3fn> (f32_from_fp8, then
//           bf16_from_f32_reference)
//   sm90a:  cvt.rn.f16x2.e4m3x2 (exact), cvt.f32.f16 (exact), cvt.rn.bf16x2.f32 (exact here)
//   gfx950: v_cvt_pk_f32_fp8 (exact), v_cvt_pk_bf16_f32 (exact here; NaN canonicalised)
#pragma once
#include "netra/dsl/convert.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/convert_e4m3.hpp"
#endif
#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_cvt_pk_f32_fp8))
#include "netra/dsl/arch/gfx950/convert_e4m3.hpp"
#endif

namespace netra {

struct bf16x4 {
  u32 lo;  // values 0 (bits 0..15) and 1 (bits 16..31)
  u32 hi;  // values 2 and 3
};

/// Four values of FP8 format F widened on the host (dsl/convert_fp8_bf16.hpp serves every format).
template <fp8_format F> NETRA_HOST_DEVICE constexpr bf16x4 fp8x4_to_bf16x4_reference(u32 word) {
  u32 w[2] = {0, 0};
  for (u32 i = 0; i < 4; ++i) w[i / 2] |= static_cast<u32>(bf16_from_f32_reference(f32_from_fp8<F>(static_cast<u8>(word >> (8 * i))))) << (16 * (i % 2));
  return {w[0], w[1]};
}
NETRA_HOST_DEVICE constexpr bf16x4 e4m3x4_to_bf16x4_reference(u32 word) { return fp8x4_to_bf16x4_reference<fp8::e4m3fn>(word); }

template <class Target> struct e4m3_widen_ops {
  static_assert(dependent_false_v<Target>, "netra::e4m3_widen_ops: this compiler cannot generate code for the target");
};
#if defined(NETRA_COMPILER_CUDA)
template <> struct e4m3_widen_ops<sm90a> {
  static NETRA_DEVICE bf16x4 run(u32 word) {
    const u32 h01 = sm90a_isa::cvt_rn_f16x2_e4m3x2(word), h23 = sm90a_isa::cvt_rn_f16x2_e4m3x2(word >> 16);
    return {pack_bf16x2<sm90a>(sm90a_isa::cvt_f32_f16(h01), sm90a_isa::cvt_f32_f16(h01 >> 16)),
            pack_bf16x2<sm90a>(sm90a_isa::cvt_f32_f16(h23), sm90a_isa::cvt_f32_f16(h23 >> 16))};
  }
};
#endif
#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_permlane16_swap))  // gfx950 only (target_ops<gfx950>)
template <> struct e4m3_widen_ops<gfx950> {
  static NETRA_DEVICE bf16x4 run(u32 word) {
    float v0, v1, v2, v3;
    gfx950_isa::v_cvt_pk_f32_fp8<false>(word, v0, v1);
    gfx950_isa::v_cvt_pk_f32_fp8<true>(word, v2, v3);
    return {pack_bf16x2<gfx950>(v0, v1), pack_bf16x2<gfx950>(v2, v3)};
  }
};
#endif

/// The device form of e4m3x4_to_bf16x4_reference (the same bits).
template <class Target> NETRA_DEVICE bf16x4 e4m3x4_to_bf16x4(u32 word) { return e4m3_widen_ops<Target>::run(word); }

}  // namespace netra
