// netra/dsl/arch/sm90a/convert_e4m3.hpp — E4M3 widening on sm_90a: two OCP E4M3 values to FP16
// (exact: every E4M3 value, subnormals and NaN included, is an FP16 value), FP16 to FP32.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::sm90a_isa {
/// cvt.rn.f16x2.e4m3x2: the E4M3 in bits 8..15 of `pair` to the high half, bits 0..7 to the low half.
NETRA_DEVICE u32 cvt_rn_f16x2_e4m3x2(u32 pair) {
  u32 r;
  const unsigned short in = static_cast<unsigned short>(pair);
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"(in));
  return r;
}
/// cvt.f32.f16: the FP16 in the low half of `half` (exact).
NETRA_DEVICE float cvt_f32_f16(u32 half) {
  float r;
  const unsigned short in = static_cast<unsigned short>(half);
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(in));
  return r;
}
}  // namespace netra::sm90a_isa
