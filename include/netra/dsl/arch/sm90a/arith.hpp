// netra/dsl/arch/sm90a/arith.hpp — FP32 arithmetic with an explicit rounding modifier on sm_90a.
// PTX: an add/mul *with* a rounding modifier is never fused into an fma by the optimizer, so these
// give the IEEE result of the one operation whatever the -fmad setting. Subnormals are kept (no .ftz).
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::sm90a_isa {
/// fma.rn.f32: a * b + c with one rounding (to nearest even).
NETRA_DEVICE float fma_rn_f32(float a, float b, float c) {
  float r;
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c));
  return r;
}
/// mul.rn.f32: never contracted.
NETRA_DEVICE float mul_rn_f32(float a, float b) {
  float r;
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
/// add.rn.f32: never contracted.
NETRA_DEVICE float add_rn_f32(float a, float b) {
  float r;
  asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
/// sub.rn.f32: never contracted.
NETRA_DEVICE float sub_rn_f32(float a, float b) {
  float r;
  asm("sub.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
/// div.rn.f32: IEEE division, round to nearest even (whatever -prec-div says).
NETRA_DEVICE float div_rn_f32(float a, float b) {
  float r;
  asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
/// rcp.approx.ftz.f32: an approximate 1 / d (MUFU.RCP; PTX: at most 1 ulp of error, subnormal
/// inputs and results flushed to zero). Only a seed: callers correct it and prove the result.
NETRA_DEVICE float rcp_approx_ftz_f32(float d) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
}
/// max.u16x2: the unsigned maximum of each 16-bit half (one VIMNMX.U16x2).
NETRA_DEVICE u32 max_u16x2(u32 a, u32 b) {
  u32 r;
  asm("max.u16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
}  // namespace netra::sm90a_isa
