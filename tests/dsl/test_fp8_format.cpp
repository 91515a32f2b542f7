// The FP8 formats as types (dsl/fp8_format.hpp): E4M3FN and E4M3FNUZ decoding against the
// formats' definitions, encoding against a brute-force nearest-value search over all codes for
// every BF16 input and the FP32 edge cases, the 2x relation that makes a misread checkpoint wrong,
// and the software packing the targets without a matching instruction use.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <ios>
#include <limits>
#include <vector>

#include "netra/dsl/arch/software_convert.hpp"
#include "netra/dsl/fp8_format.hpp"

using namespace netra;

namespace {

std::uint32_t bits_of(float x) { return bit_cast<std::uint32_t>(x); }
float float_of(std::uint32_t b) { return bit_cast<float>(b); }

/// The format's definition, written independently of the header: NaN codes, then
/// (-1)^s * 2^(1 - bias) * m / 8 for exponent field 0, (-1)^s * 2^(e - bias) * (1 + m / 8) otherwise.
template <class F> bool is_nan_code(unsigned c) {
  if constexpr (F::signed_zero) return (c & 0x7Fu) == 0x7Fu;
  else return c == 0x80u;
}
template <class F> double value_of(unsigned c) {
  const unsigned e = (c >> 3) & 15u, m = c & 7u;
  const double mag = e == 0 ? std::ldexp(m / 8.0, 1 - static_cast<int>(F::bias)) : std::ldexp(1.0 + m / 8.0, static_cast<int>(e) - static_cast<int>(F::bias));
  return (c & 0x80u) ? -mag : mag;
}

/// Nearest code by exhaustive search (ties to the even code), saturating at ±max, NaN -> the
/// format's NaN, zero results signed only where the format has -0.
template <class F> unsigned oracle(float x) {
  if (std::isnan(x)) return F::nan_code;
  const bool neg = std::signbit(x);
  const double ax = std::fabs(static_cast<double>(x));
  const double max = value_of<F>(F::max_code);
  unsigned best = 0;
  if (ax >= max) best = F::max_code;
  else {
    double best_err = std::numeric_limits<double>::infinity();
    for (unsigned m = 0; m <= F::max_code; ++m) {
      if (is_nan_code<F>(m)) continue;
      const double err = std::fabs(ax - value_of<F>(m));
      if (err < best_err || (err == best_err && (m & 1u) == 0)) best = m, best_err = err;
    }
  }
  if (best == 0) return F::signed_zero && neg ? 0x80u : 0x00u;
  return neg ? (0x80u | best) : best;
}

/// Every FP32 value where the rounding could go wrong: zeros, subnormal and normal limits,
/// infinities, NaN payloads, and around the midpoint between each pair of adjacent magnitudes.
template <class F> std::vector<float> edge_inputs() {
  std::vector<float> v = {0.0f, -0.0f, float_of(1u), float_of(0x807FFFFFu), std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), float_of(0x7F800001u), float_of(0xFFC00000u), float_of(0x7FFFFFFFu),
                          float_of(0xFF800001u)};
  for (unsigned m = 0; m <= F::max_code; ++m) {
    if (is_nan_code<F>(m)) continue;
    const float here = static_cast<float>(value_of<F>(m));
    const float mid = m < F::max_code ? static_cast<float>((value_of<F>(m) + value_of<F>(m + 1)) / 2) : here * 1.03125f;
    for (const float c : {here, mid}) {
      for (const float s : {1.0f, -1.0f}) {
        const float y = s * c;
        v.push_back(y);
        v.push_back(std::nextafter(y, std::numeric_limits<float>::infinity()));
        v.push_back(std::nextafter(y, -std::numeric_limits<float>::infinity()));
      }
    }
  }
  return v;
}

template <class F> void check_decoding() {
  for (unsigned c = 0; c < 256; ++c) {
    INFO(F::name, " code ", c);
    const float got = f32_from_fp8<F>(static_cast<u8>(c));
    if (is_nan_code<F>(c)) CHECK(std::isnan(got));
    else CHECK(static_cast<double>(got) == value_of<F>(c));
  }
}

template <class F> void check_encoding(const std::vector<float>& inputs) {
  long bad = 0;
  for (const float x : inputs) {
    const unsigned want = oracle<F>(x), got = fp8_from_f32_reference<F>(x);
    if (want != got && ++bad <= 8) {
      INFO(F::name, " input bits 0x", std::hex, bits_of(x), " want 0x", want, " got 0x", got);
      CHECK(got == want);
    }
  }
  CHECK(bad == 0);
}

std::vector<float> every_bf16() {
  std::vector<float> v;
  for (std::uint32_t h = 0; h < 65536; ++h) v.push_back(float_of(h << 16));
  return v;
}

}  // namespace

TEST_CASE("fp8 formats: the named constants") {
  CHECK(fp8_max_v<fp8::e4m3fn> == 448.0f);
  CHECK(fp8_max_v<fp8::e4m3fnuz> == 240.0f);
  CHECK(value_of<fp8::e4m3fn>(fp8::e4m3fn::max_code) == 448.0);
  CHECK(value_of<fp8::e4m3fnuz>(fp8::e4m3fnuz::max_code) == 240.0);
  CHECK(fp8::e4m3fnuz::nan_code == 0x80);
  CHECK(same_v<native_fp8_t<gfx950>, fp8::e4m3fn>);
  CHECK(same_v<native_fp8_t<sm90a>, fp8::e4m3fn>);
  CHECK(same_v<native_fp8_t<gfx942>, fp8::e4m3fnuz>);
}

TEST_CASE("fp8 formats: decoding of all 256 codes matches each format's definition") {
  check_decoding<fp8::e4m3fn>();
  check_decoding<fp8::e4m3fnuz>();
  CHECK(f32_from_fp8<fp8::e4m3fnuz>(0x01) == std::ldexp(1.0f, -10));  // smallest subnormal
  CHECK(f32_from_fp8<fp8::e4m3fnuz>(0x08) == std::ldexp(1.0f, -7));   // smallest normal
  CHECK(f32_from_fp8<fp8::e4m3fnuz>(0xFF) == -240.0f);
  CHECK(f32_from_fp8<fp8::e4m3fnuz>(0x00) == 0.0f);
  CHECK(std::isnan(f32_from_fp8<fp8::e4m3fnuz>(0x80)));
  CHECK(f32_from_fp8<fp8::e4m3fnuz>(0x7F) == 240.0f);
  CHECK(std::isnan(f32_from_fp8<fp8::e4m3fn>(0x7F)));
  CHECK(std::isnan(f32_from_fp8<fp8::e4m3fn>(0xFF)));
  CHECK(std::signbit(f32_from_fp8<fp8::e4m3fn>(0x80)));
}

TEST_CASE("fp8 formats: the same byte is half the value in E4M3FNUZ (a misread checkpoint is off by 2x)") {
  for (unsigned c = 0; c < 256; ++c) {
    if (is_nan_code<fp8::e4m3fn>(c) || is_nan_code<fp8::e4m3fnuz>(c) || (c & 0x7Fu) == 0) continue;
    INFO("code ", c);
    CHECK(2.0 * static_cast<double>(f32_from_fp8<fp8::e4m3fnuz>(static_cast<u8>(c))) ==
          static_cast<double>(f32_from_fp8<fp8::e4m3fn>(static_cast<u8>(c))));
  }
}

TEST_CASE("fp8 formats: encoding of every BF16 input equals the nearest-code search") {
  const auto inputs = every_bf16();
  check_encoding<fp8::e4m3fn>(inputs);
  check_encoding<fp8::e4m3fnuz>(inputs);
}

TEST_CASE("fp8 formats: encoding of the FP32 edge cases equals the nearest-code search") {
  check_encoding<fp8::e4m3fn>(edge_inputs<fp8::e4m3fn>());
  check_encoding<fp8::e4m3fnuz>(edge_inputs<fp8::e4m3fnuz>());
  // The rules, spelled out: saturation, NaN, no negative zero in FNUZ, ties to even.
  CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(1e30f) == 0x7F);
  CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(-std::numeric_limits<float>::infinity()) == 0xFF);
  CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(-std::nanf("")) == 0x80);
  CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(-0.0f) == 0x00);
  CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(-1e-30f) == 0x00);
  CHECK(fp8_from_f32_reference<fp8::e4m3fn>(-1e-30f) == 0x80);
  CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(232.0f) == 0x7E);           // tie between 224 and 240: even
  CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(std::nextafter(232.0f, 1e9f)) == 0x7F);
  CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(std::ldexp(1.0f, -11)) == 0x00);  // half the smallest subnormal: even (0)
  CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(std::ldexp(3.0f, -11)) == 0x02);  // 1.5 ulp: even (2)
  CHECK(fp8_from_f32_reference<fp8::e4m3fn>(std::nanf("")) == 0x7F);
}

TEST_CASE("fp8 formats: every code re-encodes to itself") {
  for (unsigned c = 0; c < 256; ++c) {
    INFO("code ", c);
    if (!is_nan_code<fp8::e4m3fn>(c)) CHECK(fp8_from_f32_reference<fp8::e4m3fn>(f32_from_fp8<fp8::e4m3fn>(static_cast<u8>(c))) == c);
    if (!is_nan_code<fp8::e4m3fnuz>(c))
      CHECK(fp8_from_f32_reference<fp8::e4m3fnuz>(f32_from_fp8<fp8::e4m3fnuz>(static_cast<u8>(c))) == c);
  }
}

TEST_CASE("software packing (gfx942, gfx1151): the reference bits in memory order lo, hi") {
  const float xs[] = {0.0f, -0.0f, 1.0f, -3.25f, 448.0f, 1e9f, std::nanf(""), 1e-3f, -std::numeric_limits<float>::infinity(), 0x1.010p0f};
  for (const float lo : xs)
    for (const float hi : xs) {
      const u32 e = software_convert_ops::pack_e4m3x2(lo, hi);
      CHECK(e == (static_cast<u32>(fp8_from_f32_reference<fp8::e4m3fn>(lo)) | static_cast<u32>(fp8_from_f32_reference<fp8::e4m3fn>(hi)) << 8));
      const u32 b = software_convert_ops::pack_bf16x2(lo, hi);
      CHECK(b == (static_cast<u32>(bf16_from_f32_reference(lo)) | static_cast<u32>(bf16_from_f32_reference(hi)) << 16));
    }
}
