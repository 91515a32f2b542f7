// The norm oracle on the contract's adversarial rows gives the results contracts/norm/norm.hpp
// states (w = 1, eps = 1e-6): all zeros (eps path), one huge value (overflowing and finite),
// subnormals, ±Inf, NaN; FP8 groups; the gated norm's z = -Inf; zero-centred w = 0 equals plain
// w = 1; the residual add writes the rounded sum back.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "oracles/norm.hpp"

using namespace netra;

namespace {
struct result {
  std::vector<std::uint16_t> y;
  std::vector<std::uint8_t> q;
  std::vector<float> s;
};
result run(std::vector<std::uint16_t> x, norm_kind kind = norm_kind::rms, bool fp8 = false, norm_weight form = norm_weight::plain,
           std::vector<std::uint16_t> z = {}) {
  oracles::norm_call c;
  c.kind = kind;
  c.weight_form = form;
  c.fp8_out = fp8;
  c.tokens = 1;
  c.x = x.data();
  c.x_stride = c.cols();
  c.gate = z.data();
  c.gate_stride = c.cols();
  std::vector<std::uint16_t> w(static_cast<std::size_t>(c.n()), form == norm_weight::plain ? 0x3F80 : 0x0000);
  c.weight = w.data();
  result r;
  oracles::norm_reference(c, r.y, r.q, r.s);
  return r;
}
float value(std::uint16_t h) { return f32_from_bf16(h); }
}  // namespace

TEST_CASE("all zeros: the eps path, signed zeros; FP8 scale +0") {
  std::vector<std::uint16_t> x(2048, 0);
  for (int i = 0; i < 2048; i += 3) x[static_cast<std::size_t>(i)] = 0x8000;
  const result r = run(x, norm_kind::rms, true);
  for (int i = 0; i < 2048; ++i) CHECK(run(x).y[static_cast<std::size_t>(i)] == x[static_cast<std::size_t>(i)]);
  for (float s : r.s) CHECK(oracles::norm_bits(s) == 0u);
  for (int i = 0; i < 2048; ++i) CHECK(r.q[static_cast<std::size_t>(i)] == (x[static_cast<std::size_t>(i)] ? 0x80 : 0x00));
}

TEST_CASE("one huge value: 2^64 overflows the sum (every y ±0); 2^60 gives sqrt(N)") {
  std::vector<std::uint16_t> x(2048);
  oracles::fill_norm_row(x.data(), 2048, oracles::norm_row::random, 5);
  x[700] = 0x5F80;
  for (std::uint16_t y : run(x).y) CHECK((y & 0x7FFF) == 0);
  x[700] = 0x5D80;
  const result r = run(x, norm_kind::rms, true);
  CHECK(value(r.y[700]) == 45.25f);
  for (int i = 0; i < 2048; ++i)
    if (i != 700) CHECK(std::fabs(value(r.y[static_cast<std::size_t>(i)])) < 1e-15f);
  CHECK(r.s[700 / 128] == 45.25f / 448.0f);
  CHECK(r.q[700] == 0x7E);  // 448
}

TEST_CASE("subnormals are kept: y = x * rsqrt(eps), normal") {
  std::vector<std::uint16_t> x(2048);
  oracles::fill_norm_row(x.data(), 2048, oracles::norm_row::subnormal, 9);
  const result r = run(x);
  const float rs = rsqrt_f32(1e-6f);
  for (int i = 0; i < 2048; ++i) {
    const std::uint16_t xi = x[static_cast<std::size_t>(i)];
    CHECK(r.y[static_cast<std::size_t>(i)] == bf16_from_f32_reference(value(xi) * rs));
    CHECK((r.y[static_cast<std::size_t>(i)] & 0x7F80) != 0);  // normal
  }
}

TEST_CASE("±Inf: the infinite value becomes NaN, the others ±0; FP8 poisons that group only") {
  for (std::uint16_t inf : {std::uint16_t{0x7F80}, std::uint16_t{0xFF80}}) {
    std::vector<std::uint16_t> x(2048);
    oracles::fill_norm_row(x.data(), 2048, oracles::norm_row::random, 3);
    x[300] = inf;
    const result r = run(x, norm_kind::rms, true);
    const result b = run(x);
    for (int i = 0; i < 2048; ++i) CHECK((i == 300 ? b.y[300] == 0x7FFF : (b.y[static_cast<std::size_t>(i)] & 0x7FFF) == 0));
    for (int g = 0; g < 16; ++g) CHECK(oracles::norm_bits(r.s[static_cast<std::size_t>(g)]) == (g == 300 / 128 ? 0x7FC00000u : 0u));
    for (int i = 256; i < 384; ++i) CHECK(r.q[static_cast<std::size_t>(i)] == 0x7F);
  }
}

TEST_CASE("NaN: every y of the row NaN; every FP8 group poisoned") {
  std::vector<std::uint16_t> x(2048);
  oracles::fill_norm_row(x.data(), 2048, oracles::norm_row::nan, 4);
  for (std::uint16_t y : run(x).y) CHECK(y == 0x7FFF);
  const result r = run(x, norm_kind::rms, true);
  for (float s : r.s) CHECK(oracles::norm_bits(s) == 0x7FC00000u);
  for (std::uint8_t q : r.q) CHECK(q == 0x7F);
}

TEST_CASE("zero-centred w = 0 equals plain w = 1; gated z = -Inf gives NaN, z = 0 gives ±0") {
  std::vector<std::uint16_t> x(2048);
  oracles::fill_norm_row(x.data(), 2048, oracles::norm_row::random, 11);
  CHECK(run(x).y == run(x, norm_kind::rms, false, norm_weight::zero_centred).y);
  std::vector<std::uint16_t> o(4096), z(4096, 0);
  oracles::fill_norm_row(o.data(), 4096, oracles::norm_row::random, 12);
  z[5] = 0xFF80;
  const result g = run(o, norm_kind::gated, false, norm_weight::plain, z);
  CHECK(g.y[5] == 0x7FFF);
  for (int i = 6; i < 4096; ++i) CHECK((g.y[static_cast<std::size_t>(i)] & 0x7FFF) == 0);
}

TEST_CASE("add_rms writes r' = bf16(x + r) back and normalizes r'") {
  std::vector<std::uint16_t> x(2048), r(2048);
  oracles::fill_norm_row(x.data(), 2048, oracles::norm_row::random, 21);
  oracles::fill_norm_row(r.data(), 2048, oracles::norm_row::random, 22);
  std::vector<std::uint16_t> r_new = r;
  oracles::norm_call c;
  c.kind = norm_kind::add_rms;
  c.tokens = 1;
  c.x = x.data();
  c.x_stride = 2048;
  c.residual = r_new.data();
  c.residual_stride = 2048;
  std::vector<std::uint16_t> w(2048, 0x3F80);
  c.weight = w.data();
  result out;
  oracles::norm_reference(c, out.y, out.q, out.s);
  std::vector<std::uint16_t> sum(2048);
  for (int i = 0; i < 2048; ++i) sum[static_cast<std::size_t>(i)] = bf16_from_f32_reference(value(x[static_cast<std::size_t>(i)]) + value(r[static_cast<std::size_t>(i)]));
  CHECK(r_new == sum);
  CHECK(out.y == run(sum).y);
}
