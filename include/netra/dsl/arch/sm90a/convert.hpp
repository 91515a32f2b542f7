// netra/dsl/arch/sm90a/convert.hpp — conversions on sm_90a.
// Packing order (docs/target-notes.md §7, checked on the H200): operand `a` goes to the HIGH byte/half.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::sm90a_isa {
/// cvt.rn.satfinite.e4m3x2.f32: e4m3(hi) in bits 8..15, e4m3(lo) in bits 0..7 (16 bits used).
/// Round to nearest even, finite overflow and ±Inf saturate to ±448, NaN gives 0x7F.
NETRA_DEVICE u32 cvt_rn_satfinite_e4m3x2_f32(float lo, float hi) {
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

/// cvt.rn.bf16x2.f32: bf16(hi) in bits 16..31, bf16(lo) in bits 0..15. Round to nearest even,
/// NaN gives the canonical 0x7FFF, overflow gives ±Inf, subnormals are kept.
NETRA_DEVICE u32 cvt_rn_bf16x2_f32(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
}  // namespace netra::sm90a_isa
