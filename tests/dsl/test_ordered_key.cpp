// The ordered argmax key orders values exactly as float comparison does, with NaN on top and
// +0 == -0, and the complemented index breaks ties toward the lowest index.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "netra/dsl/ordered_key.hpp"
#include "oracles/argmax_rows.hpp"

using netra::argmax_key;
using netra::argmax_order;

namespace {
std::uint32_t bits(float f) { return __builtin_bit_cast(std::uint32_t, f); }
}

TEST_CASE("argmax_order is monotone in float order and equal exactly when floats compare equal") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {-inf, -std::numeric_limits<float>::max(), -1.0f, -1e-40f, -0.0f, 0.0f, 1e-45f, 1e-40f, 1.0f,
                          std::numeric_limits<float>::max(), inf};
  netra::oracles::xorshift r{3};
  for (int i = 0; i < 2000; ++i) {
    v.push_back(std::ldexp(r.uniform(), static_cast<int>(r.below(300)) - 150));
    v.push_back(__builtin_bit_cast(float, static_cast<std::uint32_t>(r.next())));
  }
  for (float a : v)
    for (float b : v) {
      if (std::isnan(a) || std::isnan(b)) continue;
      REQUIRE((a > b) == (argmax_order(bits(a)) > argmax_order(bits(b))));
      REQUIRE((a == b) == (argmax_order(bits(a)) == argmax_order(bits(b))));
    }
}

TEST_CASE("NaN is one class above every number; the key identity is below every key") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(argmax_order(bits(std::numeric_limits<float>::quiet_NaN())) == 0xFFFFFFFFu);
  CHECK(argmax_order(0xFFC00001u) == 0xFFFFFFFFu);  // negative NaN with payload
  CHECK(argmax_order(0x7F800001u) == 0xFFFFFFFFu);  // signalling NaN
  CHECK(argmax_order(bits(inf)) == 0xFF800000u);
  CHECK(argmax_order(bits(-inf)) == 0x00800000u);
  CHECK(argmax_order(bits(0.0f)) == argmax_order(bits(-0.0f)));
  CHECK(argmax_key(argmax_order(bits(-inf)), 0x7FFFFFFFu) > netra::argmax_key_identity);
}

TEST_CASE("the complemented index makes the lowest index win among equal values") {
  const std::uint32_t o = argmax_order(bits(1.0f));
  CHECK(argmax_key(o, 3) > argmax_key(o, 4));
  CHECK(argmax_key(o, 0) > argmax_key(o, 248319));
  CHECK(netra::argmax_key_index(argmax_key(o, 12345)) == 12345u);
  CHECK(argmax_key(argmax_order(bits(2.0f)), 900) > argmax_key(o, 0));
}
