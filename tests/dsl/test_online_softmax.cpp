// dsl/online_softmax.hpp: the (m, l, o) rescale-merge. Its association order is bitwise the one
// the header states (written out here independently), empty states are exact identities, two merge
// orders give different bits (so a contract must name one), and every order agrees with the
// softmax in double precision within the bound of its roundings.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "netra/dsl/online_softmax.hpp"

using namespace netra;

namespace {
std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct state {
  float m, l, o;
};

/// The block of scores s[first, last) with values v as one state, taken against its own maximum:
/// weights and sums in index order.
state block_state(const std::vector<float>& s, const std::vector<float>& v, std::size_t first, std::size_t last) {
  float m = negative_infinity();
  for (std::size_t j = first; j < last; ++j) m = s[j] > m ? s[j] : m;
  float l = 0, o = 0;
  for (std::size_t j = first; j < last; ++j) {
    const float p = m == negative_infinity() ? 0.0f : exp_f32(s[j] - m);
    l = l + p;
    o = o + p * v[j];
  }
  return {m, l, o};
}

/// The merge as the header states it, spelled with plain operators (host: -ffp-contract=off).
state merge_spelled_out(state a, state b) {
  const float m = a.m < b.m ? b.m : a.m;
  const float alpha = a.m == negative_infinity() ? 0.0f : exp_f32(a.m - m);
  const float beta = b.m == negative_infinity() ? 0.0f : exp_f32(b.m - m);
  return {m, a.l * alpha + b.l * beta, a.o * alpha + b.o * beta};
}

state merge_dsl(state a, state b) {
  const softmax_merge_factors f = softmax_merge({a.m, a.l}, {b.m, b.l});
  return {f.merged.m, f.merged.l, softmax_merge_value(a.o, b.o, f)};
}

double softmax_fp64(const std::vector<float>& s, const std::vector<float>& v) {
  double m = -INFINITY;
  for (float x : s) m = std::fmax(m, x);
  double l = 0, o = 0;
  for (std::size_t j = 0; j < s.size(); ++j) {
    const double p = std::exp(static_cast<double>(s[j]) - m);
    l += p;
    o += p * v[j];
  }
  return o / l;
}

struct case_data {
  std::vector<float> s, v;
};
case_data random_case(std::mt19937& rng, std::size_t n, float spread) {
  std::normal_distribution<float> score(0.0f, spread), value(0.0f, 1.0f);
  case_data c;
  for (std::size_t j = 0; j < n; ++j) c.s.push_back(score(rng)), c.v.push_back(value(rng));
  return c;
}
}  // namespace

TEST_CASE("the merge is bitwise the order the header states") {
  std::mt19937 rng(26);
  int checked = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const case_data c = random_case(rng, 128, trial % 2 ? 8.0f : 1.0f);
    const state a = block_state(c.s, c.v, 0, 64), b = block_state(c.s, c.v, 64, 128);
    const state x = merge_dsl(a, b), y = merge_spelled_out(a, b);
    REQUIRE(bits(x.m) == bits(y.m));
    REQUIRE(bits(x.l) == bits(y.l));
    REQUIRE(bits(x.o) == bits(y.o));
    ++checked;
  }
  CHECK(checked == 2000);
}

TEST_CASE("empty states are exact identities of the merge; merging two empty states stays empty") {
  std::mt19937 rng(7);
  const state empty{negative_infinity(), 0.0f, 0.0f};
  for (int trial = 0; trial < 200; ++trial) {
    const case_data c = random_case(rng, 64, 4.0f);
    const state b = block_state(c.s, c.v, 0, 64);
    const state left = merge_dsl(empty, b), right = merge_dsl(b, empty);
    CHECK(bits(left.m) == bits(b.m));
    CHECK(bits(left.l) == bits(b.l));
    CHECK(bits(left.o) == bits(b.o + 0.0f));
    CHECK(bits(right.l) == bits(b.l));
    CHECK(bits(right.o) == bits(b.o + 0.0f));
  }
  const state both = merge_dsl(empty, empty);
  CHECK(both.m == negative_infinity());
  CHECK(bits(both.l) == 0u);
  CHECK(softmax_finish(both.o, both.l, 1.0f) == 0.0f);
  CHECK(softmax_weight(1.0f, negative_infinity()) == 0.0f);
  CHECK(softmax_weight(negative_infinity(), 3.0f) == 0.0f);
  CHECK(softmax_rescale(2.0f, 2.0f) == 1.0f);
}

TEST_CASE("a left fold and a pairwise tree of the same blocks differ in bits, and both meet the FP64 bound") {
  std::mt19937 rng(2026);
  int differing = 0;
  double worst = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t blocks = 8;
    const case_data c = random_case(rng, 64 * blocks, 3.0f);
    std::vector<state> b;
    for (std::size_t k = 0; k < blocks; ++k) b.push_back(block_state(c.s, c.v, 64 * k, 64 * (k + 1)));
    state fold = b[0];
    for (std::size_t k = 1; k < blocks; ++k) fold = merge_dsl(fold, b[k]);
    std::vector<state> level = b;
    while (level.size() > 1) {
      std::vector<state> next;
      for (std::size_t k = 0; k < level.size(); k += 2) next.push_back(merge_dsl(level[k], level[k + 1]));
      level = next;
    }
    const state tree = level[0];
    differing += bits(fold.o) != bits(tree.o) || bits(fold.l) != bits(tree.l);
    // Bound: each weight carries exp_f32's error (< 1 ulp) and one rounding per product and
    // sum along its path (64 in a block, 3 per merge level, 8 levels at most): relative to
    // sum_j w_j |v_j| <= max |v|, (2 + 2 * (64 + 3 * 8)) * 2^-24 on o and on l, so on o / l
    // about 2 * 178 * 2^-24 * max |v|.
    double vmax = 0;
    for (float x : c.v) vmax = std::fmax(vmax, std::fabs(x));
    const double ref = softmax_fp64(c.s, c.v);
    const double bound = 2.0 * 178.0 * std::ldexp(1.0, -24) * vmax;
    for (const state& st : {fold, tree}) {
      const double got = static_cast<double>(st.o) / st.l;
      REQUIRE(std::fabs(got - ref) <= bound);
      worst = std::fmax(worst, std::fabs(got - ref) / vmax);
    }
  }
  MESSAGE(differing, " of 500 cases differ between the two orders; worst error / max|v| = ", worst);
  CHECK(differing > 0);
}

TEST_CASE("all-equal scores give weights of exactly 1; a spike dominates") {
  std::vector<float> s(64, 3.25f), v(64);
  for (std::size_t j = 0; j < 64; ++j) v[j] = static_cast<float>(j);
  const state a = block_state(s, v, 0, 64);
  CHECK(a.l == 64.0f);
  CHECK(a.o == 2016.0f);
  s[17] = 200.0f;  // e^(3.25 - 200) is below FLT_MIN: flushed to +0 by exp_f32
  const state b = block_state(s, v, 0, 64);
  CHECK(b.l == 1.0f);
  CHECK(b.o == 17.0f);
  const state merged = merge_dsl(a, b);  // a's weights all vanish against the spike
  CHECK(merged.l == 1.0f);
  CHECK(merged.o == 17.0f);
}

TEST_CASE("softmax_weight_of_max gives softmax_weight's bits wherever s <= m or either is NaN") {
  const float inf = bit_cast<float>(0x7F800000u), nan = bit_cast<float>(0x7FC00000u);
  // Every difference s - m such a pair forms is <= 0 or NaN: the exponentials agree on them (every
  // 61st bit pattern of the sign-set half, -0 .. -inf and the negative NaNs, then the positive NaNs).
  std::size_t checked = 0, differ = 0;
  for (std::uint64_t u = 0x80000000u; u <= 0xFFFFFFFFu; u += 61, ++checked) differ += bits(exp_f32_not_above_high(bit_cast<float>(static_cast<std::uint32_t>(u)))) != bits(exp_f32(bit_cast<float>(static_cast<std::uint32_t>(u))));
  for (std::uint32_t u = 0x7F800001u; u <= 0x7FFFFFFFu; u += 4099, ++checked) differ += bits(exp_f32_not_above_high(bit_cast<float>(u))) != bits(exp_f32(bit_cast<float>(u)));
  for (const float x : {0.0f, -0.0f, -inf, nan, math_constants::exp_low, std::nextafter(math_constants::exp_low, 0.0f), std::nextafter(math_constants::exp_low, -inf)})
    differ += bits(exp_f32_not_above_high(x)) != bits(exp_f32(x)), ++checked;
  MESSAGE(checked, " differences checked");
  CHECK(differ == 0);
  // The pairs a block step forms: scores against their maximum (finite, -inf for masked scores, an
  // empty row's -inf maximum, +inf scores, NaN), in both functions.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-100.0f, 100.0f);
  std::vector<std::pair<float, float>> pairs = {{-inf, -inf}, {-inf, 3.0f}, {inf, inf}, {3.0f, inf}, {nan, 2.0f}, {2.0f, nan}, {nan, -inf}, {0.0f, 0.0f},
                                                {-0.0f, 0.0f}, {-90.0f, 0.0f}, {-87.0f, 0.0f}};
  for (int i = 0; i < 100000; ++i) {
    const float a = d(rng), b = d(rng);
    pairs.push_back({std::min(a, b), std::max(a, b)});
  }
  std::size_t pair_differ = 0;
  for (const auto& [s, m] : pairs) pair_differ += bits(softmax_weight_of_max(s, m)) != bits(softmax_weight(s, m));
  CHECK(pair_differ == 0);
}
