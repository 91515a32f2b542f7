// dsl/math.hpp: exp_f32 accuracy against the double-precision exponential (the figures the header
// states), its range and special values, and sigmoid/silu at the edges. The host functions are the
// oracle of every device use, so what is measured here is what the kernels compute.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "netra/dsl/convert.hpp"
#include "netra/dsl/math.hpp"

using namespace netra;

namespace {
float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
std::uint32_t to_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct accuracy {
  double max_ulp = 0;
  float worst = 0;
  long normal = 0, not_correctly_rounded = 0, range_failures = 0;
  void add(float x) {
    const float r = exp_f32(x);
    if (std::isnan(x)) {
      range_failures += !std::isnan(r);
      return;
    }
    if (x < math_constants::exp_low) {
      range_failures += !(r == 0.0f && !std::signbit(r));
      return;
    }
    if (x > math_constants::exp_high) {
      range_failures += !(std::isinf(r) && r > 0);
      return;
    }
    if (!(r >= 0x1p-126f) || std::isinf(r)) {  // every in-range result is a normal number
      ++range_failures;
      return;
    }
    const double ref = std::exp(static_cast<double>(x));
    int e;
    std::frexp(ref, &e);
    const double ulp = std::ldexp(1.0, e - 24);
    const double err = std::fabs(static_cast<double>(r) - ref) / ulp;
    ++normal;
    not_correctly_rounded += r != static_cast<float>(ref);
    if (err > max_ulp) {
      max_ulp = err;
      worst = x;
    }
  }
};
}  // namespace

TEST_CASE("exp_f32: within 0.9 ulp of e^x on a sweep of FP32 inputs (every 97th bit pattern)") {
  accuracy a;
  for (std::uint64_t b = 0; b < (1ull << 32); b += 97) a.add(from_bits(static_cast<std::uint32_t>(b)));
  MESSAGE("normal results: ", a.normal, ", max error ", a.max_ulp, " ulp at ", a.worst, ", not correctly rounded: ",
          a.not_correctly_rounded, " (", 100.0 * a.not_correctly_rounded / a.normal, " %)");
  CHECK(a.normal > 20000000);
  CHECK(a.range_failures == 0);
  CHECK(a.max_ulp <= 0.8912);  // the exhaustive figure over all 2.24e9 inputs (header comment)
  CHECK(a.not_correctly_rounded < a.normal / 200);
}

TEST_CASE("exp_f32: every BF16 input (what SiLU sees) and the range edges") {
  accuracy a;
  for (std::uint32_t h = 0; h < 0x10000u; ++h) a.add(f32_from_bf16(static_cast<u16>(h)));
  for (std::uint32_t u = to_bits(88.0f); u <= to_bits(89.0f); ++u) a.add(from_bits(u));
  for (std::uint32_t u = to_bits(-87.0f); u <= to_bits(-88.0f); ++u) a.add(from_bits(u));
  MESSAGE("max error ", a.max_ulp, " ulp at ", a.worst);
  CHECK(a.range_failures == 0);
  CHECK(a.max_ulp <= 0.8912);
}

TEST_CASE("exp_f32: special values") {
  CHECK(to_bits(exp_f32(0.0f)) == to_bits(1.0f));
  CHECK(to_bits(exp_f32(-0.0f)) == to_bits(1.0f));
  CHECK(to_bits(exp_f32(INFINITY)) == 0x7F800000u);
  CHECK(to_bits(exp_f32(-INFINITY)) == 0u);
  CHECK(std::isnan(exp_f32(NAN)));
  CHECK(exp_f32(math_constants::exp_high) < INFINITY);
  CHECK(std::isinf(exp_f32(std::nextafter(math_constants::exp_high, INFINITY))));
  CHECK(exp_f32(math_constants::exp_low) >= 0x1p-126f);
  CHECK(exp_f32(std::nextafter(math_constants::exp_low, -INFINITY)) == 0.0f);
  CHECK(exp_f32(1.0f) == doctest::Approx(2.718281828).epsilon(1e-7));
  // the constants are what the comments say
  CHECK(static_cast<double>(math_constants::exp_high) < std::log(static_cast<double>(FLT_MAX)));
  CHECK(static_cast<double>(std::nextafter(math_constants::exp_high, INFINITY)) > std::log(static_cast<double>(FLT_MAX)));
  CHECK(static_cast<double>(math_constants::exp_low) > -126.0 * std::log(2.0));
  CHECK(static_cast<double>(std::nextafter(math_constants::exp_low, -INFINITY)) < -126.0 * std::log(2.0));
  // ln2_lo is ln 2 - ln2_hi rounded to FP32: the pair is ln 2 within half an ulp of ln2_lo (2^-44)
  CHECK(std::fabs(static_cast<double>(math_constants::ln2_hi) + static_cast<double>(math_constants::ln2_lo) - std::log(2.0)) <= 0x1p-44);
}

TEST_CASE("sigmoid_f32 and silu_f32 at the edges") {
  CHECK(sigmoid_f32(0.0f) == 0.5f);
  CHECK(sigmoid_f32(INFINITY) == 1.0f);
  CHECK(to_bits(sigmoid_f32(-INFINITY)) == 0u);
  CHECK(sigmoid_f32(100.0f) == 1.0f);
  CHECK(sigmoid_f32(-100.0f) == 0.0f);  // 1 / (1 + Inf)
  CHECK(std::isnan(sigmoid_f32(NAN)));
  CHECK(silu_f32(0.0f) == 0.0f);
  CHECK(std::signbit(silu_f32(-0.0f)));
  CHECK(silu_f32(INFINITY) == INFINITY);
  CHECK(std::isnan(silu_f32(-INFINITY)));  // -Inf / +Inf, as torch
  CHECK(std::isnan(silu_f32(NAN)));
  CHECK(silu_f32(100.0f) == 100.0f);
  CHECK(silu_f32(1.0f) == doctest::Approx(0.7310585786).epsilon(1e-7));
  CHECK(silu_f32(-1.0f) == doctest::Approx(-0.2689414214).epsilon(1e-7));
  // silu agrees with the double-precision function to a few ulps on every BF16 input
  double worst = 0;
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float x = f32_from_bf16(static_cast<u16>(h));
    if (!std::isfinite(x) || std::fabs(x) > 80.0f || std::fabs(x) < 0x1p-100f) continue;
    const double ref = static_cast<double>(x) / (1.0 + std::exp(-static_cast<double>(x)));
    const double err = std::fabs(static_cast<double>(silu_f32(x)) - ref) / std::fabs(ref);
    if (err > worst) worst = err;
  }
  MESSAGE("silu max relative error on BF16 inputs: ", worst);
  CHECK(worst < 4e-7);
}
