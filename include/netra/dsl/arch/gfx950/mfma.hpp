// netra/dsl/arch/gfx950/mfma.hpp — FP8 matrix instructions of gfx950 (CDNA4), one raw wrapper per
// instruction, named after it. Every immediate field is a template parameter with a range check.
//
// Builtins, not inline asm: the hazard recognizer sees a builtin MFMA and pads the reads of its
// result (docs/target-notes.md §2, §6: s_nop 7 after 16x16x32, s_nop 11 after 16x16x128, s_nop 15 +
// s_nop 3 after 32x32x64); an MFMA inside asm gets none and reads stale accumulators.
//
// Operands (docs/target-notes.md §2; lane layouts: dsl/matrix_fragment.hpp, host models:
// tests/models/mfma.hpp):
//   v_mfma_f32_16x16x128_f8f6f4   A, B: 8 dwords per lane (32 FP8 values), C/D: 4 floats
//   v_mfma_f32_32x32x64_f8f6f4    A, B: 8 dwords per lane (32 FP8 values), C/D: 16 floats
//   v_mfma_f32_16x16x32_fp8_fp8   A, B: 2 dwords per lane (8 E4M3 values), C/D: 4 floats
//
// Format codes of the f8f6f4 family (cbsz = format of A, blgp = format of B): 0 E4M3 (OCP
// E4M3FN on gfx950), 1 E5M2, 2 E2M3, 3 E3M2, 4 E2M1. The builtins accept 5..7 silently and emit a
// meaningless encoding (docs/target-notes.md §2), hence the static_asserts. FP6/FP4 operands still take
// 8 dwords here; the upper dwords must be zero.
//
// The literal-scale-0 trap. The unscaled and scaled f8f6f4 instructions share one builtin: when
// both scale operands are the literal 0, LLVM emits the *unscaled* opcode (scale 1.0), while a
// run-time E8M0 byte 0 means 2^-127 and wipes the products out. netra therefore spells three
// distinct wrappers, each with one meaning:
//   v_mfma_f32_*_f8f6f4<FmtA, FmtB>(a, b, c)                     unscaled (passes literal 0s)
//   v_mfma_scale_f32_*_f8f6f4<FmtA, FmtB, OpselA, OpselB>(a, b, c, scale_a, scale_b)
//       run-time E8M0 scale words; the values are hidden from constant folding, so a scale that
//       happens to be a compile-time 0 keeps its hardware meaning (2^-127) instead of silently
//       selecting the unscaled opcode;
//   v_mfma_scale_f32_*_f8f6f4_imm<FmtA, FmtB, ScaleA, ScaleB>(a, b, c)
//       compile-time E8M0 bytes; 0 is refused (use 127 for 1.0 or the unscaled wrapper).
// Opsel (0..3) picks the byte of the 32-bit scale word that holds the E8M0 scale.
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4))
#define NETRA_HAS_GFX950_MFMA 1
#endif

namespace netra::gfx950_isa {

/// Format codes of the f8f6f4 MFMA family (the cbsz / blgp fields).
inline constexpr u32 f8f6f4_e4m3 = 0;
inline constexpr u32 f8f6f4_e5m2 = 1;
inline constexpr u32 f8f6f4_e2m3 = 2;
inline constexpr u32 f8f6f4_e3m2 = 3;
inline constexpr u32 f8f6f4_e2m1 = 4;
template <u32 Format> inline constexpr bool is_f8f6f4_format_v = Format <= f8f6f4_e2m1;

}  // namespace netra::gfx950_isa

#if defined(NETRA_HAS_GFX950_MFMA)
namespace netra::gfx950_isa {

typedef int v8i32 __attribute__((ext_vector_type(8)));
typedef int v2i32 __attribute__((ext_vector_type(2)));
typedef float v4f32 __attribute__((ext_vector_type(4)));
typedef float v16f32 __attribute__((ext_vector_type(16)));

namespace detail {
template <u32 FormatA, u32 FormatB> constexpr bool check_f8f6f4_formats() {
  static_assert(is_f8f6f4_format_v<FormatA>,
                "netra::gfx950_isa: cbsz (format of A) must be 0 E4M3, 1 E5M2, 2 E2M3, 3 E3M2 or 4 E2M1");
  static_assert(is_f8f6f4_format_v<FormatB>,
                "netra::gfx950_isa: blgp (format of B) must be 0 E4M3, 1 E5M2, 2 E2M3, 3 E3M2 or 4 E2M1");
  return true;
}
template <u32 OpselA, u32 OpselB> constexpr bool check_opsel() {
  static_assert(OpselA <= 3 && OpselB <= 3,
                "netra::gfx950_isa: opsel selects a byte (0..3) of the 32-bit scale word; 4 and above crash the backend");
  return true;
}
template <u32 ScaleA, u32 ScaleB> constexpr bool check_imm_scales() {
  static_assert(ScaleA <= 0xFF && ScaleB <= 0xFF, "netra::gfx950_isa: an E8M0 scale is one byte (0..255)");
  static_assert(ScaleA != 0 && ScaleB != 0,
                "netra::gfx950_isa: literal scale 0 trap: LLVM turns two literal 0 scales into the unscaled opcode (scale 1.0), "
                "while E8M0 0 means 2^-127; use 127 for 1.0, the unscaled wrapper, or the run-time form");
  return true;
}
/// Hides a value from constant folding (no instruction is emitted).
NETRA_DEVICE int opaque(u32 v) {
  int r = static_cast<int>(v);
  asm volatile("" : "+v"(r));
  return r;
}
}  // namespace detail

/// v_mfma_f32_16x16x128_f8f6f4, unscaled: D(16x16, f32) = A(16x128) * B(128x16) + C.
template <u32 FormatA, u32 FormatB> NETRA_DEVICE v4f32 v_mfma_f32_16x16x128_f8f6f4(v8i32 a, v8i32 b, v4f32 c) {
  static_assert(detail::check_f8f6f4_formats<FormatA, FormatB>());
  return __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a, b, c, FormatA, FormatB, 0, 0, 0, 0);
}

/// v_mfma_scale_f32_16x16x128_f8f6f4 with run-time E8M0 scale words (byte OpselA of scale_a,
/// byte OpselB of scale_b).
template <u32 FormatA, u32 FormatB, u32 OpselA, u32 OpselB>
NETRA_DEVICE v4f32 v_mfma_scale_f32_16x16x128_f8f6f4(v8i32 a, v8i32 b, v4f32 c, u32 scale_a, u32 scale_b) {
  static_assert(detail::check_f8f6f4_formats<FormatA, FormatB>() && detail::check_opsel<OpselA, OpselB>());
  return __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a, b, c, FormatA, FormatB, OpselA, detail::opaque(scale_a), OpselB,
                                                         detail::opaque(scale_b));
}

/// v_mfma_scale_f32_16x16x128_f8f6f4 with compile-time E8M0 scale bytes (never 0).
template <u32 FormatA, u32 FormatB, u32 ScaleA, u32 ScaleB>
NETRA_DEVICE v4f32 v_mfma_scale_f32_16x16x128_f8f6f4_imm(v8i32 a, v8i32 b, v4f32 c) {
  static_assert(detail::check_f8f6f4_formats<FormatA, FormatB>() && detail::check_imm_scales<ScaleA, ScaleB>());
  return __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a, b, c, FormatA, FormatB, 0, ScaleA, 0, ScaleB);
}

/// v_mfma_f32_32x32x64_f8f6f4, unscaled: D(32x32, f32) = A(32x64) * B(64x32) + C.
template <u32 FormatA, u32 FormatB> NETRA_DEVICE v16f32 v_mfma_f32_32x32x64_f8f6f4(v8i32 a, v8i32 b, v16f32 c) {
  static_assert(detail::check_f8f6f4_formats<FormatA, FormatB>());
  return __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a, b, c, FormatA, FormatB, 0, 0, 0, 0);
}

/// v_mfma_scale_f32_32x32x64_f8f6f4 with run-time E8M0 scale words.
template <u32 FormatA, u32 FormatB, u32 OpselA, u32 OpselB>
NETRA_DEVICE v16f32 v_mfma_scale_f32_32x32x64_f8f6f4(v8i32 a, v8i32 b, v16f32 c, u32 scale_a, u32 scale_b) {
  static_assert(detail::check_f8f6f4_formats<FormatA, FormatB>() && detail::check_opsel<OpselA, OpselB>());
  return __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a, b, c, FormatA, FormatB, OpselA, detail::opaque(scale_a), OpselB,
                                                        detail::opaque(scale_b));
}

/// v_mfma_scale_f32_32x32x64_f8f6f4 with compile-time E8M0 scale bytes (never 0).
template <u32 FormatA, u32 FormatB, u32 ScaleA, u32 ScaleB>
NETRA_DEVICE v16f32 v_mfma_scale_f32_32x32x64_f8f6f4_imm(v8i32 a, v8i32 b, v16f32 c) {
  static_assert(detail::check_f8f6f4_formats<FormatA, FormatB>() && detail::check_imm_scales<ScaleA, ScaleB>());
  return __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a, b, c, FormatA, FormatB, 0, ScaleA, 0, ScaleB);
}

/// v_mfma_f32_16x16x32_fp8_fp8 (E4M3 x E4M3, also on gfx940+): D(16x16) = A(16x32) * B(32x16) + C.
/// Cbsz/Abid (broadcast of A across blocks) and Blgp (lane-group pattern of B) are the encoding's
/// 3-, 4- and 3-bit fields. This is a single-block instruction, so only Cbsz = Abid = 0 means
/// anything; netra's fragment traits model Blgp = 0 only.
template <u32 Cbsz = 0, u32 Abid = 0, u32 Blgp = 0> NETRA_DEVICE v4f32 v_mfma_f32_16x16x32_fp8_fp8(v2i32 a, v2i32 b, v4f32 c) {
  static_assert(Cbsz == 0 && Abid == 0,
                "netra::gfx950_isa::v_mfma_f32_16x16x32_fp8_fp8: single-block instruction: cbsz and abid (A broadcast) must be 0");
  static_assert(Blgp <= 7, "netra::gfx950_isa::v_mfma_f32_16x16x32_fp8_fp8: blgp is a 3-bit field (0..7)");
  const long la = __builtin_bit_cast(long, a), lb = __builtin_bit_cast(long, b);
  return __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(la, lb, c, Cbsz, Abid, Blgp);
}

}  // namespace netra::gfx950_isa
#endif  // NETRA_HAS_GFX950_MFMA
