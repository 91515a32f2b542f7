// netra/dsl/arch/gfx1151/wmma.hpp — raw wrapper of the RDNA 3 / 3.5 matrix instruction at wave32
// (gfx1151 has WMMA, no MFMA, no AGPRs: the accumulator lives in ordinary VGPRs).
//   v_wmma_f32_16x16x16_bf16   A, B: 8 dwords per lane (16 BF16 values, lanes 16..31 repeating
//                              lanes 0..15), C/D: 8 floats
// Lane layout: dsl/matrix_fragment_targets.hpp (wmma_f32_16x16x16_bf16_w32).
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32))
#define NETRA_HAS_GFX1151_WMMA 1
namespace netra::gfx1151_isa {
typedef float v8f32 __attribute__((ext_vector_type(8)));
typedef short v16i16 __attribute__((ext_vector_type(16)));

/// v_wmma_f32_16x16x16_bf16 (wave32): D(16x16) = A(16x16) * B(16x16) + C, BF16 inputs as 16-bit
/// integers (the builtin's operand type on gfx11), FP32 accumulation.
NETRA_DEVICE v8f32 v_wmma_f32_16x16x16_bf16(v16i16 a, v16i16 b, v8f32 c) { return __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, c); }
}  // namespace netra::gfx1151_isa
#endif
