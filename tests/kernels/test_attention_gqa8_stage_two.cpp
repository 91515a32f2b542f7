// kernels/attention/gqa8_stage_two.hpp: stage two's merge with its scalars taken apart (running
// maxima by one thread, every slice's factors at once, then each element's products and sums) gives
// the bits of merging the slices state by state with softmax_merge in slice order (the contract's
// order, tests/oracles/attention_gqa8.hpp) — m, l, o and the finished output — on random and
// adversarial statistics: empty slices first, last and between, equal and signed-zero maxima,
// rising and falling maxima, +inf and NaN maxima (NaN as a class), 2 to 512 slices (the decode
// SplitCapacity).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "netra/kernels/attention/gqa8_stage_two.hpp"

using namespace netra;

namespace {
/// The bits, every NaN as one (a NaN's sign and payload are not the contract's: IEEE leaves them open).
std::uint32_t bits(float f) {
  if (std::isnan(f)) return 0x7FC00000u;
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct slices_case {
  std::vector<float> m, l, o;
};
struct merged {
  float m, l, o;
};

/// The contract's order written state by state (the form stage two had before).
merged state_by_state(const slices_case& c) {
  softmax_stats st = {c.m[0], c.l[0]};
  float acc = c.o[0];
  for (std::size_t s = 1; s < c.m.size(); ++s) {
    const softmax_merge_factors f = softmax_merge(st, {c.m[s], c.l[s]});
    acc = softmax_merge_value(acc, c.o[s], f);
    st = f.merged;
  }
  return {st.m, st.l, acc};
}

/// Stage two's phases as its threads run them: thread 0's running maxima, thread s's factors,
/// then one element's chain (kernels::attention_gqa8_stage_two::run).
merged taken_apart(const slices_case& c) {
  const u32 n = static_cast<u32>(c.m.size());
  std::vector<float> running(n), alpha(n), beta(n);
  kernels::gqa8_running_max(c.m.data(), running.data(), n);
  for (u32 s = n; s-- > 1;) kernels::gqa8_slice_factors(c.m.data(), running.data(), alpha.data(), beta.data(), s);
  float acc = c.o[0], sum = c.l[0];
  for (u32 s = 1; s < n; ++s) acc = kernels::gqa8_merge_step(acc, c.o[s], alpha[s], beta[s]), sum = kernels::gqa8_merge_step(sum, c.l[s], alpha[s], beta[s]);
  return {running[n - 1], sum, acc};
}

void same_bits(const slices_case& c) {
  const merged a = state_by_state(c), b = taken_apart(c);
  CHECK(bits(a.m) == bits(b.m));
  CHECK(bits(a.l) == bits(b.l));
  CHECK(bits(a.o) == bits(b.o));
  CHECK(bits(softmax_finish(a.o, a.l, 0.37f)) == bits(softmax_finish(b.o, b.l, 0.37f)));
}

slices_case random_case(std::mt19937& g, u32 n, float spread) {
  std::uniform_real_distribution<float> mu(-spread, spread), lu(0.5f, 64.0f), ou(-40.0f, 40.0f);
  slices_case c;
  for (u32 s = 0; s < n; ++s) c.m.push_back(mu(g)), c.l.push_back(lu(g)), c.o.push_back(ou(g));
  return c;
}
void make_empty(slices_case& c, std::size_t s) { c.m[s] = negative_infinity(), c.l[s] = 0.0f, c.o[s] = 0.0f; }
}  // namespace

TEST_CASE("stage two's taken-apart merge has the bits of the state-by-state merge on random slices") {
  std::mt19937 g(26);
  for (u32 n : {2u, 3u, 16u, 17u, 32u, 33u, 64u, 66u, 65u, 132u, 200u, 512u})
    for (float spread : {0.25f, 4.0f, 60.0f})
      for (int rep = 0; rep < 8; ++rep) same_bits(random_case(g, n, spread));
}

TEST_CASE("stage two's taken-apart merge: empty slices first, last, between and all") {
  std::mt19937 g(7);
  for (u32 n : {2u, 5u, 66u, 512u}) {
    slices_case c = random_case(g, n, 8.0f);
    make_empty(c, 0);
    same_bits(c);
    make_empty(c, n - 1);
    same_bits(c);
    for (u32 s = 0; s < n; s += 3) make_empty(c, s);
    same_bits(c);
    for (u32 s = 0; s < n; ++s) make_empty(c, s);
    same_bits(c);
    CHECK(softmax_finish(taken_apart(c).o, taken_apart(c).l, 1.0f) == 0.0f);
  }
}

TEST_CASE("stage two's taken-apart merge: equal, signed-zero, monotone, infinite and NaN maxima") {
  std::mt19937 g(11);
  for (u32 n : {4u, 66u, 129u}) {
    slices_case c = random_case(g, n, 1.0f);
    for (u32 s = 0; s < n; ++s) c.m[s] = 3.5f;
    same_bits(c);
    for (u32 s = 0; s < n; ++s) c.m[s] = s % 2 == 0 ? 0.0f : -0.0f;
    same_bits(c);
    for (u32 s = 0; s < n; ++s) c.m[s] = -20.0f + 0.3f * static_cast<float>(s);  // every merge rescales the running side
    same_bits(c);
    for (u32 s = 0; s < n; ++s) c.m[s] = 20.0f - 0.3f * static_cast<float>(s);  // every merge rescales the slice
    same_bits(c);
    c.m[n / 2] = std::numeric_limits<float>::infinity();
    same_bits(c);
    c.m[n / 3] = std::numeric_limits<float>::quiet_NaN();  // max_of keeps NaN only from its first operand: the fold's order
    same_bits(c);
    c.m[0] = std::numeric_limits<float>::quiet_NaN();
    same_bits(c);
  }
}

TEST_CASE("the check can fail: factors against the final maximum instead of the running one differ") {
  std::mt19937 g(3);
  slices_case c = random_case(g, 66, 30.0f);
  const u32 n = 66;
  std::vector<float> running(n), alpha(n), beta(n), final_max(n);
  kernels::gqa8_running_max(c.m.data(), running.data(), n);
  for (u32 s = 0; s < n; ++s) final_max[s] = running[n - 1];
  for (u32 s = 1; s < n; ++s) kernels::gqa8_slice_factors(c.m.data(), final_max.data(), alpha.data(), beta.data(), s);
  float acc = c.o[0];
  for (u32 s = 1; s < n; ++s) acc = kernels::gqa8_merge_step(acc, c.o[s], alpha[s], beta[s]);
  CHECK(bits(acc) != bits(state_by_state(c).o));
}
