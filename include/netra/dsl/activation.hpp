// netra/dsl/activation.hpp — reproducible FP32 square root, log1p and softplus: the same bits on
// the host, on gfx950 and on sm90a (built like dsl/math.hpp: IEEE operations with one rounding
// each, in a fixed order, no transcendental instruction).
//
// sqrt_rn(x): IEEE square root (sqrt.rn.f32 on sm90a, the backend's correctly rounded sequence on
//   gfx9, sqrtf on hosts).
// log1p_f32(y), for y in [0, 1] (the only range its callers use):
//   s = y / (2 + y) (two roundings: add, then IEEE division), z = s * s, then
//   log1p(y) = 2 atanh(s) = s * (2 + z * P(z)), P(z) = 2/3 + z (2/5 + z (2/7 + ... + z 2/17)),
//   Horner with fma from the innermost coefficient; s <= 1/3, so the truncated series (through
//   s^17) is below 2^-28 relative. log1p(0) = +0, log1p(NaN) = NaN.
// softplus_f32(x) = max(x, 0) + log1p(exp_f32(-|x|)) (torch's softplus, beta 1: its threshold-20
//   branch returns x, which this form also gives for x > 17 since log1p(e^-x) < ulp(x) / 2 there;
//   exp_f32 flushes e^-|x| below 2^-126 to 0, so softplus(x) = max(x, 0) for |x| > 87.34).
//   softplus(NaN) = NaN, softplus(+Inf) = +Inf, softplus(-Inf) = +0.
//   Measured against double precision (tests/kernels/test_gdn_math.cpp): log1p_f32 1.95 ulp at worst
//   on a 2^-20 grid of [0, 1], softplus_f32 3.26 ulp on a 1e-4 grid of [-80, 80].
// Hazards: nothing here issues v_exp_f32 / v_log_f32 / v_rcp_f32 directly; the division and the
// square root are the compilers' sequences, whose wait states the compilers insert (the gdn audit
// test checks the gfx950 objects for a transcendental result read by the next instruction).
#pragma once
#include "netra/dsl/math.hpp"

#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/sqrt.hpp"
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
#include "netra/dsl/arch/amdgcn/sqrt.hpp"
#endif

namespace netra {

/// IEEE square root, round to nearest even.
NETRA_HOST_DEVICE float sqrt_rn(float x) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  return sm90a_isa::sqrt_rn_f32(x);
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  return amdgcn_isa::sqrt_f32(x);
#else
  return __builtin_sqrtf(x);
#endif
}

namespace activation_constants {
// 2 / (2n + 1) rounded to FP32, n = 1 .. 8.
inline constexpr float atanh_c1 = 0x1.555556p-1f;   // 2/3
inline constexpr float atanh_c2 = 0x1.99999ap-2f;   // 2/5
inline constexpr float atanh_c3 = 0x1.24924ap-2f;   // 2/7
inline constexpr float atanh_c4 = 0x1.c71c72p-3f;   // 2/9
inline constexpr float atanh_c5 = 0x1.745d18p-3f;   // 2/11
inline constexpr float atanh_c6 = 0x1.3b13b2p-3f;   // 2/13
inline constexpr float atanh_c7 = 0x1.111112p-3f;   // 2/15
inline constexpr float atanh_c8 = 0x1.e1e1e2p-4f;   // 2/17
}  // namespace activation_constants

/// log(1 + y) for y in [0, 1] (see the file comment for the exact sequence).
NETRA_HOST_DEVICE float log1p_f32(float y) {
  using namespace activation_constants;
  const float s = div_rn(y, add_rn(2.0f, y));
  const float z = mul_rn(s, s);
  float p = fma_rn(atanh_c8, z, atanh_c7);
  p = fma_rn(p, z, atanh_c6);
  p = fma_rn(p, z, atanh_c5);
  p = fma_rn(p, z, atanh_c4);
  p = fma_rn(p, z, atanh_c3);
  p = fma_rn(p, z, atanh_c2);
  p = fma_rn(p, z, atanh_c1);
  return mul_rn(s, fma_rn(z, p, 2.0f));
}

/// max(x, 0) + log1p(e^-|x|).
NETRA_HOST_DEVICE float softplus_f32(float x) {
  const float magnitude = bit_cast<float>(bit_cast<u32>(x) & 0x7FFFFFFFu);
  const float positive = x > 0.0f ? x : 0.0f;
  return add_rn(positive, log1p_f32(exp_f32(-magnitude)));
}

}  // namespace netra
