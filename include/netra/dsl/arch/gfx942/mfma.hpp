// netra/dsl/arch/gfx942/mfma.hpp — raw wrappers of the gfx942 (CDNA3) matrix instructions netra
// uses: the FP8 one, whose operands are E4M3FNUZ there (gfx950's instruction of the same name reads
// OCP E4M3FN; gfx942 has none of gfx950's f8f6f4 / scaled forms), and the BF16 one. Builtins, so
// the compiler's hazard recognizer puts the wait states before a VALU reads the result
// (docs/target-notes.md §6).
//   v_mfma_f32_16x16x32_fp8_fp8   A, B: 2 dwords per lane (8 E4M3FNUZ values), C/D: 4 floats
//   v_mfma_f32_16x16x16_bf16      A, B: 2 dwords per lane (4 BF16 values),     C/D: 4 floats
// Lane layouts: dsl/matrix_fragment_targets.hpp (mfma_f32_16x16x32_fnuz, mfma_f32_16x16x16_bf16).
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8))
#define NETRA_HAS_GFX942_MFMA 1
namespace netra::gfx942_isa {
typedef float v4f32 __attribute__((ext_vector_type(4)));
typedef int v2i32 __attribute__((ext_vector_type(2)));

/// v_mfma_f32_16x16x32_fp8_fp8 (E4M3FNUZ x E4M3FNUZ): D(16x16) = A(16x32) * B(32x16) + C.
/// cbsz, abid (A broadcast) and blgp (B lane-group pattern) are 0: the plain single-block form.
NETRA_DEVICE v4f32 v_mfma_f32_16x16x32_fp8_fp8(v2i32 a, v2i32 b, v4f32 c) {
  const long la = __builtin_bit_cast(long, a), lb = __builtin_bit_cast(long, b);
  return __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(la, lb, c, 0, 0, 0);
}

typedef short v4i16 __attribute__((ext_vector_type(4)));
/// v_mfma_f32_16x16x16_bf16 (clang: the gfx90a name mfma_f32_16x16x16bf16_1k), cbsz = abid = blgp = 0.
NETRA_DEVICE v4f32 v_mfma_f32_16x16x16_bf16(v2i32 a, v2i32 b, v4f32 c) {
  return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(v4i16, a), __builtin_bit_cast(v4i16, b), c, 0, 0, 0);
}
}  // namespace netra::gfx942_isa
#endif
