// Host models of the cross-lane instructions composed into the DSL's wave reductions.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "models/cross_lane.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;

TEST_CASE_TEMPLATE("xor_shuffle moves lane i ^ mask to lane i", Target, gfx950, sm90a) {
  constexpr unsigned W = Target::wave_size;
  models::lanes<W> v{};
  std::iota(v.begin(), v.end(), 100u);
  for (std::uint32_t mask = 1; mask < W; mask <<= 1) {
    const auto s = models::xor_shuffle<Target>(v, mask);
    for (unsigned i = 0; i < W; ++i) REQUIRE(s[i] == 100u + (i ^ mask));
  }
}

TEST_CASE_TEMPLATE("wave_max_u64 gives every lane the maximum", Target, gfx950, sm90a) {
  constexpr unsigned W = Target::wave_size;
  oracles::xorshift r{5};
  for (int trial = 0; trial < 200; ++trial) {
    std::array<std::uint64_t, W> v{};
    for (auto& x : v) x = r.next() >> (r.next() % 64);
    const auto expect = *std::max_element(v.begin(), v.end());
    const auto out = models::wave_max_u64<Target>(v);
    for (unsigned i = 0; i < W; ++i) REQUIRE(out[i] == expect);
  }
}

TEST_CASE_TEMPLATE("wave_sum_f32 follows the documented pairwise tree, identical in every lane", Target, gfx950, sm90a) {
  constexpr unsigned W = Target::wave_size;
  oracles::xorshift r{9};
  std::array<float, W> v{};
  for (auto& x : v) x = std::ldexp(r.uniform(), static_cast<int>(r.below(40)) - 20);
  // Documented tree: stage s adds lanes at xor distance 2^s, so lane 0 ends with the balanced
  // pairwise sum ((v0 + v1) + (v2 + v3)) + ... in index order.
  std::array<float, W> tree = v;
  for (unsigned width = 1; width < W; width <<= 1)
    for (unsigned i = 0; i < W; i += 2 * width) tree[i] = tree[i] + tree[i + width];
  const auto out = models::wave_sum_f32<Target>(v);
  for (unsigned i = 0; i < W; ++i) REQUIRE(__builtin_bit_cast(std::uint32_t, out[i]) == __builtin_bit_cast(std::uint32_t, tree[0]));
}
