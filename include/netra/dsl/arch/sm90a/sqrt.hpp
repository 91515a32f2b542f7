// netra/dsl/arch/sm90a/sqrt.hpp — correctly rounded FP32 square root on sm_90a.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::sm90a_isa {
/// sqrt.rn.f32: IEEE square root, round to nearest even, subnormals kept (no .ftz).
NETRA_DEVICE float sqrt_rn_f32(float a) {
  float r;
  asm("sqrt.rn.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}
}  // namespace netra::sm90a_isa
