// dsl/rsqrt.hpp: accuracy against 1 / sqrt in double on every 61st positive FP32 (normal and
// subnormal), the specials, and the values the norm contract quotes (rsqrt(1e-6) ~ 1000).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "netra/dsl/rsqrt.hpp"

using namespace netra;

TEST_CASE("rsqrt_f32 is within 1 ulp of 1 / sqrt(v) on a sweep of every 61st positive FP32") {
  double worst = 0.0;
  long not_rounded = 0, checked = 0;
  for (std::uint64_t b = 1; b < 0x7F800000ull; b += 61) {
    const float v = bit_cast<float>(static_cast<std::uint32_t>(b));
    const float r = rsqrt_f32(v);
    const double ref = 1.0 / std::sqrt(static_cast<double>(v));
    const float nearest = static_cast<float>(ref);
    const double ulp = std::ldexp(1.0, std::ilogb(nearest) - 23);
    worst = std::fmax(worst, std::fabs(static_cast<double>(r) - ref) / ulp);
    not_rounded += r != nearest;
    ++checked;
  }
  MESSAGE("max error ", worst, " ulp; ", not_rounded, " of ", checked, " not the correctly rounded FP32");
  CHECK(worst < 1.0);
  CHECK(not_rounded < checked / 5);
}

TEST_CASE("rsqrt_f32 specials") {
  CHECK(bit_cast<std::uint32_t>(rsqrt_f32(INFINITY)) == 0u);
  CHECK(rsqrt_f32(0.0f) == INFINITY);
  CHECK(rsqrt_f32(-0.0f) == INFINITY);
  CHECK(std::isnan(rsqrt_f32(NAN)));
  CHECK(bit_cast<std::uint32_t>(rsqrt_f32(-1.0f)) == 0x7FC00000u);
  CHECK(rsqrt_f32(4.0f) == 0.5f);
  CHECK(rsqrt_f32(0x1p-148f) == 0x1p74f);  // a subnormal: scaled into range and back, exactly
  CHECK(std::fabs(rsqrt_f32(1e-6f) - 1000.0f) < 1e-3f);
}
