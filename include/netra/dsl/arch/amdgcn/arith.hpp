// netra/dsl/arch/amdgcn/arith.hpp — FP32 arithmetic on gfx9 CDNA with one rounding per operation.
// HIP compiles with -ffp-contract=fast-honor-pragmas: the pragma below removes the `contract` flag
// from these operations, so the backend never fuses a v_mul_f32 into a following v_add_f32.
// The division is the compiler's correctly rounded f32 sequence (v_div_scale / v_rcp / v_fma /
// v_div_fmas / v_div_fixup): HIP's default -fhip-fp32-correctly-rounded-divide-sqrt; netra never
// builds with fast-math. Subnormals are kept (the default f32 denormal mode is IEEE).
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::amdgcn_isa {
/// v_fma_f32: a * b + c with one rounding.
NETRA_DEVICE float v_fma_f32(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
/// v_mul_f32, never contracted.
NETRA_DEVICE float v_mul_f32(float a, float b) {
#pragma clang fp contract(off)
  return a * b;
}
/// v_add_f32, never contracted.
NETRA_DEVICE float v_add_f32(float a, float b) {
#pragma clang fp contract(off)
  return a + b;
}
/// v_sub_f32, never contracted.
NETRA_DEVICE float v_sub_f32(float a, float b) {
#pragma clang fp contract(off)
  return a - b;
}
/// The correctly rounded f32 division sequence.
NETRA_DEVICE float div_f32(float a, float b) {
#pragma clang fp contract(off)
  return a / b;
}
/// v_rcp_f32: an approximate 1 / d (the ISA: 1 ulp). Only a seed: callers correct it and prove the result.
NETRA_DEVICE float v_rcp_f32(float d) { return __builtin_amdgcn_rcpf(d); }
/// v_pk_max_u16: the unsigned maximum of each 16-bit half.
NETRA_DEVICE u32 v_pk_max_u16(u32 a, u32 b) {
  typedef unsigned short v2u16 __attribute__((ext_vector_type(2)));
  return __builtin_bit_cast(u32, __builtin_elementwise_max(__builtin_bit_cast(v2u16, a), __builtin_bit_cast(v2u16, b)));
}
}  // namespace netra::amdgcn_isa
