// netra/dsl/rsqrt.hpp — 1 / sqrt(v) in FP32 from IEEE operations in a fixed order, so that the
// host, gfx950 and sm90a give the same bits (no rsq / MUFU.RSQ approximation instruction, whose
// results differ between targets).
//
// rsqrt_f32(v), v > 0 finite:
//   1. s = v, or v * 2^64 when v < 2^-126 (exact: positive subnormals and +0 scaled into range).
//   2. y0 = bits(0x5F375A86 - (bits(s) >> 1)) (the integer seed, relative error < 3.5e-2).
//   3. three Newton steps y <- fma(y * 0.5, fma(-(s * y), y, 1), y), each y * 0.5 and s * y rounded
//      once (no contraction: fma_rn / mul_rn of dsl/math.hpp).
//   4. y * 2^32 when s was scaled (exact).
// Specials: rsqrt(+Inf) = +0, rsqrt(±0) = +Inf, rsqrt(NaN) = NaN, rsqrt(v < 0) = NaN (0x7FC00000).
// Accuracy (tests/kernels/test_norm_rsqrt.cpp, every 61st FP32 in [2^-149, 2^128) against 1 / sqrt in
// double): below 1 ulp (measured maximum 0.996 ulp; 13 % of results are not the correctly rounded
// FP32, off by 1 ulp).
#pragma once
#include "netra/dsl/math.hpp"

namespace netra {

NETRA_HOST_DEVICE float rsqrt_f32(float v) {
  const u32 b = bit_cast<u32>(v);
  const bool tiny = b < 0x00800000u;  // +0 or a positive subnormal
  const float s = tiny ? mul_rn(v, 0x1p64f) : v;
  float y = bit_cast<float>(0x5F375A86u - (bit_cast<u32>(s) >> 1));
NETRA_UNROLL
  for (int step = 0; step < 3; ++step) y = fma_rn(mul_rn(y, 0.5f), fma_rn(-mul_rn(s, y), y, 1.0f), y);
  const float scaled = tiny ? mul_rn(y, 0x1p32f) : y;
  const float inf_case = b == 0x7F800000u ? 0.0f : scaled;
  const float zero_case = (b & 0x7FFFFFFFu) == 0 ? bit_cast<float>(0x7F800000u) : inf_case;
  return v >= 0.0f ? zero_case : bit_cast<float>(0x7FC00000u);  // NaN and negatives: NaN
}

}  // namespace netra
