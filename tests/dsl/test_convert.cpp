// Exact conversions: the bit-level reference against the H200 measurements in docs/target-notes.md,
// exhaustive round trips, and an independent nearest-value search for E4M3.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "netra/dsl/convert.hpp"
#include "oracles/argmax_rows.hpp"

using netra::bf16_from_f32_reference;
using netra::e4m3_from_f32_reference;

namespace {
float from_bits(std::uint32_t b) { return __builtin_bit_cast(float, b); }
const float inf = std::numeric_limits<float>::infinity();
const float qnan = std::numeric_limits<float>::quiet_NaN();

// Independent E4M3 oracle: the nearest of the 254 finite codes by exhaustive search, ties to the
// even code, |x| > 448 saturated, zero keeps the sign.
std::uint8_t e4m3_by_search(float x) {
  if (std::isnan(x)) return 0x7F;
  const bool neg = std::signbit(x);
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 448.0) return neg ? 0xFE : 0x7E;
  int best = 0;
  double best_err = a;
  for (int c = 1; c <= 0x7E; ++c) {
    const double v = netra::f32_from_e4m3(static_cast<std::uint8_t>(c));
    const double err = std::fabs(v - a);
    if (err < best_err || (err == best_err && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      best_err = err;
    }
  }
  return static_cast<std::uint8_t>(best | (neg ? 0x80 : 0));
}
}  // namespace

TEST_CASE("bf16 reference matches the H200 cvt.rn.bf16x2.f32 measurements") {
  CHECK(bf16_from_f32_reference(inf) == 0x7F80);
  CHECK(bf16_from_f32_reference(-inf) == 0xFF80);
  CHECK(bf16_from_f32_reference(qnan) == 0x7FFF);
  CHECK(bf16_from_f32_reference(-qnan) == 0x7FFF);
  CHECK(bf16_from_f32_reference(from_bits(0x7F800001u)) == 0x7FFF);  // signalling NaN with payload
  CHECK(bf16_from_f32_reference(from_bits(0x3F808000u)) == 0x3F80);  // tie -> even
  CHECK(bf16_from_f32_reference(from_bits(0x3F818000u)) == 0x3F82);  // tie -> even (up)
  CHECK(bf16_from_f32_reference(std::numeric_limits<float>::max()) == 0x7F80);
  CHECK(bf16_from_f32_reference(1e-40f) == 0x0001);  // subnormal kept
  CHECK(bf16_from_f32_reference(-0.0f) == 0x8000);
}

TEST_CASE("bf16 reference round-trips every non-NaN bf16 and rounds to nearest even") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = netra::f32_from_bf16(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    REQUIRE(bf16_from_f32_reference(f) == h);
  }
  netra::oracles::xorshift r{7};
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t b = static_cast<std::uint32_t>(r.next());
    const float x = from_bits(b);
    if (std::isnan(x) || std::isinf(x)) continue;
    const std::uint16_t h = bf16_from_f32_reference(x);
    const float lo = netra::f32_from_bf16(h);
    if (std::isinf(lo)) {  // overflow: only values beyond the largest bf16's rounding boundary
      REQUIRE(std::fabs(static_cast<double>(x)) >= 3.3961775292304887e38);  // (2 - 2^-8) * 2^127
      continue;
    }
    // No bf16 is strictly closer than the result (neighbours at +-1 ulp of the result).
    for (int d : {-1, 1}) {
      const float other = netra::f32_from_bf16(static_cast<std::uint16_t>(h + d));
      if (std::isnan(other) || std::isinf(other)) continue;
      REQUIRE(std::fabs(static_cast<double>(other) - x) >= std::fabs(static_cast<double>(lo) - x));
    }
  }
}

TEST_CASE("e4m3 reference matches the H200 cvt.rn.satfinite.e4m3x2.f32 measurements") {
  CHECK(e4m3_from_f32_reference(456.0f) == 0x7E);  // tie at the top saturates
  CHECK(e4m3_from_f32_reference(464.0f) == 0x7E);
  CHECK(e4m3_from_f32_reference(1e6f) == 0x7E);
  CHECK(e4m3_from_f32_reference(inf) == 0x7E);
  CHECK(e4m3_from_f32_reference(-inf) == 0xFE);
  CHECK(e4m3_from_f32_reference(qnan) == 0x7F);
  CHECK(e4m3_from_f32_reference(-qnan) == 0x7F);
  CHECK(e4m3_from_f32_reference(1.0625f) == 0x38);  // tie -> even
  CHECK(e4m3_from_f32_reference(1.1875f) == 0x3A);  // tie -> even (up)
  CHECK(e4m3_from_f32_reference(std::ldexp(1.0f, -10)) == 0x00);  // half the smallest subnormal: tie -> 0
  CHECK(e4m3_from_f32_reference(std::numeric_limits<float>::max()) == 0x7E);
  CHECK(e4m3_from_f32_reference(448.0f) == 0x7E);
  CHECK(e4m3_from_f32_reference(-448.0f) == 0xFE);
  CHECK(e4m3_from_f32_reference(std::ldexp(1.0f, -9)) == 0x01);  // smallest subnormal
  CHECK(e4m3_from_f32_reference(std::ldexp(1.0f, -6)) == 0x08);  // smallest normal
  CHECK(e4m3_from_f32_reference(-0.0f) == 0x80);
  CHECK(e4m3_from_f32_reference(1e-30f) == 0x00);
}

TEST_CASE("e4m3 reference round-trips all 254 finite codes") {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;  // the two NaN codes
    const float f = netra::f32_from_e4m3(static_cast<std::uint8_t>(c));
    REQUIRE(e4m3_from_f32_reference(f) == c);
  }
  CHECK(std::isnan(netra::f32_from_e4m3(0x7F)));
  CHECK(std::isnan(netra::f32_from_e4m3(0xFF)));
}

TEST_CASE("e4m3 reference equals an exhaustive nearest-code search") {
  netra::oracles::xorshift r{11};
  for (int i = 0; i < 100000; ++i) {
    // Exponents spread over the E4M3 range and beyond (2^-14 .. 2^10), both signs.
    const float x = std::ldexp(r.uniform(), static_cast<int>(r.below(25)) - 14);
    REQUIRE(e4m3_from_f32_reference(x) == e4m3_by_search(x));
  }
  // Every midpoint between neighbouring codes is a tie and must go to the even code.
  for (int c = 0; c < 0x7E; ++c) {
    const double lo = netra::f32_from_e4m3(static_cast<std::uint8_t>(c));
    const double hi = netra::f32_from_e4m3(static_cast<std::uint8_t>(c + 1));
    const float mid = static_cast<float>((lo + hi) / 2);
    REQUIRE(e4m3_from_f32_reference(mid) == ((c & 1) ? c + 1 : c));
    REQUIRE(e4m3_from_f32_reference(-mid) == (((c & 1) ? c + 1 : c) | 0x80));
  }
}
