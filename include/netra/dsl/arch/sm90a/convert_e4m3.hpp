// netra/dsl/arch/sm90a/convert_e4m3.hpp — E4M3 widening on sm_90a: two OCP E4M3 values to FP16
// (exact: every E4M3 value, subnormals and NaN included, is an FP16 value), FP16 to FP32; and two
// E4M3 values to BF16 by integer operations and one FMA (exact, no conversion instruction).
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
/// The BF16 pair of the E4M3 bytes 2 Pair, 2 Pair + 1 of `word` without a conversion instruction
/// (cvt runs on sm_90's narrow conversion pipe; this form runs on the integer pipe and one bf16x2
/// FMA, so a widening can split its words between the two). `marks` = (word & 0x7F7F7F7F) +
/// 0x01010101: bit 7 of a byte is set exactly where its magnitude is 0x7F (E4M3 NaN). Steps: x = the
/// two bytes in the low byte of each half; the sign moves from bit 7 to bit 11 (x + 15 (x & 0x80));
/// << 4 puts sign, exponent and mantissa where BF16 has them, i.e. the BF16 of value * 2^-120
/// (E4M3 subnormals become BF16 subnormals); fma by 2^120 (0x7B80) is exact, its addend -0 leaves
/// every value (and -0) unchanged, and the addend NaN (0x7FFF) where the mark is set gives NaN.
template <u32 Pair> NETRA_DEVICE u32 widen_e4m3x2_bf16x2_integer(u32 word, u32 marks) {
  static_assert(Pair < 2, "netra::sm90a_isa::widen_e4m3x2_bf16x2_integer: a word holds two pairs");
  constexpr u32 pick = Pair == 0 ? 0x4140u : 0x4342u, spread = Pair == 0 ? 0x9988u : 0xBBAAu;
  u32 r;
  asm("{\n\t.reg .b32 x, s, c, k, z;\n\t"
      "mov.b32 z, 0;\n\t"
      "prmt.b32 x, %1, z, %3;\n\t"
      "and.b32 s, x, 0x00800080;\n\t"
      "mad.lo.u32 x, s, 15, x;\n\t"
      "shl.b32 x, x, 4;\n\t"
      "prmt.b32 c, %2, z, %4;\n\t"
      "xor.b32 c, c, 0x80008000;\n\t"
      "mov.b32 k, 0x7B807B80;\n\t"
      "fma.rn.bf16x2 %0, x, k, c;\n\t}"
      : "=r"(r)
      : "r"(word), "r"(marks), "n"(pick), "n"(spread));
  return r;
}
}  // namespace netra::sm90a_isa
