// dsl/activation.hpp on the host: sqrt_rn is the IEEE square root, log1p_f32 and softplus_f32
// are accurate against double precision over sweeps, and the special values follow the header.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "netra/dsl/activation.hpp"

using namespace netra;

TEST_CASE("log1p_f32 on [0, 1] is within 2 ulp of log1p in double precision") {
  double worst = 0;
  for (std::uint32_t i = 0; i <= 1u << 20; ++i) {
    const float y = static_cast<float>(i) / static_cast<float>(1u << 20);
    const double want = std::log1p(static_cast<double>(y));
    const float got = log1p_f32(y);
    if (want == 0) {
      REQUIRE(got == 0.0f);
      continue;
    }
    const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
    worst = std::fmax(worst, std::fabs(static_cast<double>(got) - want) / ulp);
  }
  MESSAGE("log1p_f32 worst error ", worst, " ulp");
  CHECK(worst < 2.0);
  CHECK(log1p_f32(0.0f) == 0.0f);
}

TEST_CASE("softplus_f32 is within 3.5 ulp of softplus in double precision on [-80, 80] and has the stated special values") {
  double worst = 0;
  for (int i = -800000; i <= 800000; ++i) {
    const float x = static_cast<float>(i) * 1e-4f;
    const double xd = x;
    const double want = xd > 0 ? xd + std::log1p(std::exp(-xd)) : std::log1p(std::exp(xd));
    const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
    worst = std::fmax(worst, std::fabs(static_cast<double>(softplus_f32(x)) - want) / ulp);
  }
  MESSAGE("softplus_f32 worst error ", worst, " ulp");
  CHECK(worst < 3.5);
  CHECK(std::isnan(softplus_f32(NAN)));
  CHECK(softplus_f32(INFINITY) == INFINITY);
  CHECK(bit_cast<std::uint32_t>(softplus_f32(-INFINITY)) == 0u);
  CHECK(softplus_f32(100.0f) == 100.0f);
  CHECK(bit_cast<std::uint32_t>(softplus_f32(-100.0f)) == 0u);  // e^-100 flushed by exp_f32
  CHECK(softplus_f32(0.0f) == log1p_f32(1.0f));
}

TEST_CASE("sqrt_rn is the correctly rounded square root (squares and neighbours)") {
  for (std::uint32_t i = 1; i < 1u << 16; ++i) {
    const float r = static_cast<float>(i) * 0.0009765625f;
    REQUIRE(sqrt_rn(r * r) == std::sqrt(r * r));
    REQUIRE(sqrt_rn(std::nextafter(r, 10.0f)) == std::sqrt(std::nextafter(r, 10.0f)));
  }
  CHECK(sqrt_rn(0.0f) == 0.0f);
  CHECK(std::signbit(sqrt_rn(-0.0f)));
  CHECK(sqrt_rn(bit_cast<float>(1u)) == std::sqrt(bit_cast<float>(1u)));
}
