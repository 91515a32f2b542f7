// netra/dsl/convert_e4m3_bf16_truncate.hpp — four OCP E4M3 values (one word) to four BF16 values
// (bf16x4) for use as operands of arithmetic: each value widened exactly to FP32 by the target's
// instruction, then its high 16 bits taken. Exact for every finite value (an E4M3 value has 3
// mantissa bits: its FP32 form's low 16 bits are 0), so finite results are
// e4m3x4_to_bf16x4_reference's bits; a NaN stays a NaN, not necessarily 0x7FFF (only what an
// arithmetic instruction makes of it is defined). The truncation is a byte permute, not a
// conversion instruction:
//   sm90a:  cvt.rn.f16x2.e4m3x2 (exact), cvt.f32.f16 (exact), a permute of the high halves
//   gfx950: v_cvt_pk_f32_fp8 (exact), a permute of the high halves
#pragma once
#include "netra/dsl/convert_e4m3_bf16.hpp"

namespace netra {

/// The high halves of two FP32 values as one BF16 pair word (lo in bits 0..15).
NETRA_HOST_DEVICE constexpr u32 bf16x2_truncated(float lo, float hi) { return (bit_cast<u32>(lo) >> 16) | (bit_cast<u32>(hi) & 0xFFFF0000u); }

template <class Target> struct e4m3_widen_f32_ops {
  static_assert(dependent_false_v<Target>, "netra::e4m3_widen_f32_ops: this compiler cannot generate code for the target");
};
#if defined(NETRA_COMPILER_CUDA)
template <> struct e4m3_widen_f32_ops<sm90a> {
  static NETRA_DEVICE void run(u32 word, float (&v)[4]) {
    const u32 h01 = sm90a_isa::cvt_rn_f16x2_e4m3x2(word), h23 = sm90a_isa::cvt_rn_f16x2_e4m3x2(word >> 16);
    v[0] = sm90a_isa::cvt_f32_f16(h01), v[1] = sm90a_isa::cvt_f32_f16(h01 >> 16);
    v[2] = sm90a_isa::cvt_f32_f16(h23), v[3] = sm90a_isa::cvt_f32_f16(h23 >> 16);
  }
};
#endif
#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_permlane16_swap))  // gfx950 only
template <> struct e4m3_widen_f32_ops<gfx950> {
  static NETRA_DEVICE void run(u32 word, float (&v)[4]) {
    gfx950_isa::v_cvt_pk_f32_fp8<false>(word, v[0], v[1]);
    gfx950_isa::v_cvt_pk_f32_fp8<true>(word, v[2], v[3]);
  }
};
#endif

#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
/// The four values of `word` as BF16 operands (finite values: e4m3x4_to_bf16x4's bits).
template <class Target> NETRA_DEVICE bf16x4 e4m3x4_to_bf16x4_truncated(u32 word) {
  float v[4];
  e4m3_widen_f32_ops<Target>::run(word, v);
  return {bf16x2_truncated(v[0], v[1]), bf16x2_truncated(v[2], v[3])};
}
#endif

}  // namespace netra
