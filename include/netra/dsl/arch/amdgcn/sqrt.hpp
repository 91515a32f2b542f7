// netra/dsl/arch/amdgcn/sqrt.hpp — correctly rounded FP32 square root on gfx9 CDNA.
// llvm.sqrt.f32 without !fpmath (HIP's default -fhip-fp32-correctly-rounded-divide-sqrt) is
// expanded by the backend to a correctly rounded sequence (v_sqrt_f32 with scaling and an fma
// refinement); netra never builds with fast-math.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::amdgcn_isa {
/// The correctly rounded f32 square root sequence.
NETRA_DEVICE float sqrt_f32(float a) {
#pragma clang fp contract(off)
  return __builtin_sqrtf(a);
}
}  // namespace netra::amdgcn_isa
