// netra/dsl/math.hpp — FP32 arithmetic and transcendentals that give the same bits on the host,
// on gfx950 and on sm90a.
//
// Every function here is built only from IEEE operations with one rounding each (fma, add, sub,
// mul, div; round to nearest even, subnormals kept) and integer manipulation of exponents, in a
// fixed order. The *_rn operations are never contracted: on sm90a they are PTX ops with an
// explicit .rn modifier, on gfx9 operations under `#pragma clang fp contract(off)`, on hosts plain
// operators (host code must compile without FP contraction: -ffp-contract=off, which is GCC's
// default in ISO C++ mode and the flag of netra's host tests). So a host oracle that calls these
// functions reproduces the device bits exactly. Do not build with fast-math (division must stay
// IEEE: the default of nvcc, -prec-div=true, and of HIP, correctly rounded f32 division).
//
// exp_f32(x), the one exponential of netra (act_quant's SiLU, the router's softmax, the shared
// gate's sigmoid):
//   1. t = fma(x, log2(e), 1.5 * 2^23); n = t - 1.5 * 2^23 (n = k = round(x / ln 2), ties even).
//   2. r = fma(n, -ln2_hi, x) (exact: ln2_hi has 15 significant bits, Sterbenz), then
//      r = fma(n, -ln2_lo, r);  |r| <= 0.3466 for x in range.
//   3. p = ((((((c6 r + c5) r + c4) r + c3) r + c2) r + 1) r + 1), Horner with fma. c2..c6: a
//      relative-error minimax fit of e^r on [-0.3468, 0.3468] with c0 = c1 = 1 (Remez, rounded to
//      FP32; the rounded polynomial's own error is 3.6e-9 relative, 0.06 ulp).
//   4. result = p * 2^k by adding k to p's exponent field (integer add: exact, the result is
//      normal for x in [exp_low, exp_high]).
//   Range: x > 88.7228317 (the largest FP32 with e^x < FLT_MAX) gives +Inf; x < -87.3365402 (the
//   FP32 just above -126 ln 2) gives +0: results below 2^-126 are flushed to +0 (e^x there is
//   below FLT_MIN; no netra consumer can tell: 1 + e^x rounds to 1 and softmax sums start at 1).
//   exp(NaN) = the same NaN; exp(+Inf) = +Inf; exp(-Inf) = +0; exp(±0) = 1 exactly.
//   exp_f32_in_range(x) is steps 1-4 alone, without the range / NaN selects: exp_f32's bits for x
//   in [exp_low, exp_high], unspecified outside (for a caller that clamps its argument first).
//   Accuracy, measured on every FP32 input (tests/dsl/test_math.cpp repeats it on a 1/97 sweep and
//   on every BF16 input): max error 0.891 ulp against e^x in double precision, over all 2.24e9
//   inputs with a normal result; 0.470 % of them are not the correctly rounded FP32 (off by 1 ulp).
//
// sigmoid_f32(x) = 1 / (1 + exp(-x)); silu_f32(x) = x / (1 + exp(-x)) (one IEEE division each):
//   sigmoid(+Inf) = 1, sigmoid(-Inf) = +0, silu(+Inf) = +Inf, silu(-Inf) = NaN (-Inf / +Inf, as in
//   torch), NaN -> NaN (payload unspecified).
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/arith.hpp"
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
#include "netra/dsl/arch/amdgcn/arith.hpp"
#endif

namespace netra {

/// a * b + c with one rounding.
NETRA_HOST_DEVICE float fma_rn(float a, float b, float c) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  return sm90a_isa::fma_rn_f32(a, b, c);
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  return amdgcn_isa::v_fma_f32(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}
/// a * b, rounded once, never fused with a later addition.
NETRA_HOST_DEVICE float mul_rn(float a, float b) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  return sm90a_isa::mul_rn_f32(a, b);
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  return amdgcn_isa::v_mul_f32(a, b);
#else
  return a * b;
#endif
}
/// a + b, rounded once, never fused with an earlier multiplication.
NETRA_HOST_DEVICE float add_rn(float a, float b) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  return sm90a_isa::add_rn_f32(a, b);
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  return amdgcn_isa::v_add_f32(a, b);
#else
  return a + b;
#endif
}
/// a - b, rounded once, never fused.
NETRA_HOST_DEVICE float sub_rn(float a, float b) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  return sm90a_isa::sub_rn_f32(a, b);
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  return amdgcn_isa::v_sub_f32(a, b);
#else
  return a - b;
#endif
}
/// a / b, IEEE (correctly rounded to nearest even).
NETRA_HOST_DEVICE float div_rn(float a, float b) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  return sm90a_isa::div_rn_f32(a, b);
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  return amdgcn_isa::div_f32(a, b);
#else
  return a / b;
#endif
}

/// An approximate 1 / d for a normal d whose reciprocal is normal: the target's reciprocal
/// instruction (sm90a rcp.approx.ftz.f32, gfx9 v_rcp_f32; each documented within 1 ulp), on the
/// host RN(1 / d). A seed only: no result of netra depends on its bits (each caller corrects it
/// and its proof holds for every seed within 16 ulp of RN(1 / d)).
NETRA_HOST_DEVICE float approx_reciprocal_f32(float d) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  return sm90a_isa::rcp_approx_ftz_f32(d);
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  return amdgcn_isa::v_rcp_f32(d);
#else
  return div_rn(1.0f, d);
#endif
}

/// The unsigned maximum of each 16-bit half of two words (integer: the same on every target).
NETRA_HOST_DEVICE u32 max_u16x2(u32 a, u32 b) {
#if defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_CUDA)
  return sm90a_isa::max_u16x2(a, b);
#elif defined(NETRA_DEVICE_PASS) && defined(NETRA_COMPILER_HIP)
  return amdgcn_isa::v_pk_max_u16(a, b);
#else
  const u32 lo = max_of(a & 0xFFFFu, b & 0xFFFFu), hi = max_of(a >> 16, b >> 16);
  return lo | (hi << 16);
#endif
}

namespace math_constants {
inline constexpr float exp_high = 0x1.62e42ep+6f;   // 88.7228317: the largest x with e^x < FLT_MAX
inline constexpr float exp_low = -0x1.5d589ep+6f;   // -87.3365402: the FP32 just above -126 ln 2
inline constexpr float log2e = 0x1.715476p+0f;    // log2(e) rounded to FP32
inline constexpr float round_magic = 0x1.8p+23f;  // 1.5 * 2^23: fma(x, c, magic) - magic rounds x * c to an integer
inline constexpr float ln2_hi = 0x1.62e4p-1f;     // 15 significant bits: n * ln2_hi is exact for |n| <= 512
inline constexpr float ln2_lo = 0x1.7f7d1cp-20f;  // ln 2 - ln2_hi rounded to FP32
inline constexpr float exp_c2 = 0x1.fffffcp-2f;
inline constexpr float exp_c3 = 0x1.555492p-3f;
inline constexpr float exp_c4 = 0x1.5558f2p-5f;
inline constexpr float exp_c5 = 0x1.123a2p-7f;
inline constexpr float exp_c6 = 0x1.6a23dp-10f;
}  // namespace math_constants

/// e^x for x in [exp_low, exp_high] (exp_f32's steps 1-4, no selects); unspecified outside.
NETRA_HOST_DEVICE float exp_f32_in_range(float x) {
  using namespace math_constants;
  const float t = fma_rn(x, log2e, round_magic);
  const float n = sub_rn(t, round_magic);
  float r = fma_rn(n, -ln2_hi, x);
  r = fma_rn(n, -ln2_lo, r);
  float p = fma_rn(exp_c6, r, exp_c5);
  p = fma_rn(p, r, exp_c4);
  p = fma_rn(p, r, exp_c3);
  p = fma_rn(p, r, exp_c2);
  p = fma_rn(p, r, 1.0f);
  p = fma_rn(p, r, 1.0f);
  // bits(t) = bits(1.5 * 2^23) + k and bits(1.5 * 2^23) << 23 wraps to 0, so bits(t) << 23 is
  // k << 23: adding it to p's exponent multiplies by 2^k exactly (a normal result for x in range).
  return bit_cast<float>(bit_cast<u32>(p) + (bit_cast<u32>(t) << 23));
}

/// exp_f32(x) for x <= exp_high or NaN (every x <= 0: an online softmax's s - m): the same bits
/// without the overflow select.
NETRA_HOST_DEVICE float exp_f32_not_above_high(float x) {
  using namespace math_constants;
  const float scaled = exp_f32_in_range(x);
  // Range and NaN by selects, not branches (the same bits as early returns; no control flow, so
  // a kernel can interleave many independent exponentials).
  const float in_range = x == x ? scaled : x;
  return x < exp_low ? 0.0f : in_range;
}

/// e^x in FP32 from IEEE-exact operations in a fixed order (see the file comment).
NETRA_HOST_DEVICE float exp_f32(float x) {
  using namespace math_constants;
  const float below = exp_f32_not_above_high(x);
  return x > exp_high ? bit_cast<float>(0x7F800000u) : below;
}

/// 1 / (1 + e^-x).
NETRA_HOST_DEVICE float sigmoid_f32(float x) { return div_rn(1.0f, add_rn(1.0f, exp_f32(-x))); }

/// 1 + e^-x, the divisor of silu_f32.
NETRA_HOST_DEVICE float silu_divisor_f32(float x) { return add_rn(1.0f, exp_f32(-x)); }

/// x / (1 + e^-x).
NETRA_HOST_DEVICE float silu_f32(float x) { return div_rn(x, silu_divisor_f32(x)); }

}  // namespace netra
