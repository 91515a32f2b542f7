// tests/oracles/attention_gqa4_extend.hpp on the host: netra's order (the bitwise oracle of the
// extend kernels, for each target's plan) meets the contract's bound against the FP64 semantics on
// random and adversarial calls (0 elements beyond the bound), is causal inside the extension,
// never lets the NaN of an unindexed or masked slot through, and depends on the split (so the GPU
// test's bitwise comparison catches a reordering).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "oracles/attention_gqa4_extend.hpp"

using namespace netra;
using namespace netra::oracles;
using sm90a_plan = attention_plan<mma_m16n8k16_bf16>;
using gfx950_plan = attention_plan<mfma_f32_16x16x32_bf16>;

namespace {
template <class Plan> void meets_bound(const extend_shape& shape, std::uint32_t seed, int slices, const char* what) {
  const extend_case c = make_case(shape, seed);
  const gqa8_summary s = compare(reference(c), netra_order<Plan>(c, slices), 0);
  INFO(what, ": ", s.checked, " outputs, max |err| ", s.max_err, ", beyond bound ", s.beyond, ", cosine ", s.cosine());
  CHECK(s.checked > 0);
  CHECK(s.beyond == 0);
  CHECK(s.nan == 0);
}
}  // namespace

TEST_CASE("extend: netra's order meets the bound (both plans, ragged prefixes and extensions, prefix 0 and 1)") {
  const extend_shape ragged{1, {0, 1, 63, 65, 200}, {1, 12, 5, 3, 7}, 0.8f, 1.3f, extend_fill::random, 0};
  meets_bound<sm90a_plan>(ragged, 1, 2, "sm90a 2 slices");
  meets_bound<sm90a_plan>(ragged, 2, 5, "sm90a 5 slices");
  meets_bound<gfx950_plan>(ragged, 3, 2, "gfx950 2 slices");
  meets_bound<sm90a_plan>({16, {0, 1, 17, 130}, {2, 12, 1, 4}, 1.0f, 1.0f, extend_fill::random, 0}, 4, 3, "page size 16");
}

TEST_CASE("extend: adversarial calls meet the bound") {
  meets_bound<sm90a_plan>({1, {130, 7}, {12, 4}, 1.0f, 1.0f, extend_fill::equal_scores, 0}, 5, 2, "equal scores");
  meets_bound<sm90a_plan>({1, {300, 65}, {6, 12}, 1.0f, 1.0f, extend_fill::spike, 0}, 6, 2, "spike");
  meets_bound<sm90a_plan>({1, {129}, {12}, 1.0f / 64, 1.0f, extend_fill::saturated, 0}, 7, 2, "+-448");
  meets_bound<sm90a_plan>({1, {129}, {12}, 1.0f, 1.0f, extend_fill::subnormal, 0}, 8, 2, "subnormal codes");
  meets_bound<sm90a_plan>({1, {100, 33}, {3, 12}, 1e-6f, 1e-6f, extend_fill::random, 0}, 9, 2, "scales << 1");
  meets_bound<sm90a_plan>({1, {100, 33}, {12, 2}, 40.0f, 1e4f, extend_fill::random, 0}, 10, 2, "scales >> 1");
  meets_bound<sm90a_plan>({1, {150, 90}, {12, 12}, 1.0f, 1.0f, extend_fill::random, 5}, 11, 2, "every 5th index outside the pool");
}

TEST_CASE("extend: causal inside the extension; a refused extent is not written; the order depends on the split") {
  // Prefix 0, all extension scores equal: token t's output is the mean of extension values 0..t.
  extend_case c = make_case({1, {0}, {12}, 1.0f, 1.0f, extend_fill::random, 0}, 12);
  for (auto& x : c.k_ext) x = 0;  // every score 0
  const gqa8_expected e = reference(c);
  const auto got = netra_order<sm90a_plan>(c, 2);
  for (int t = 0; t < 12; ++t) {
    double mean = 0;
    for (int j = 0; j <= t; ++j) mean += ext_at(c.v_ext, j, 1, 5);
    const std::size_t i = (static_cast<std::size_t>(t) * 32 + 4) * 128 + 5;  // head 4 reads KV head 1
    CHECK(e.out[i] == doctest::Approx(mean / (t + 1)).epsilon(1e-12));
    CHECK(std::fabs(f32_from_bf16(got[i]) - mean / (t + 1)) <= e.bound[i]);
  }
  extend_case r = make_case({1, {40, 40}, {3, 3}, 1.0f, 1.0f, extend_fill::random, 0}, 13);
  r.qo_indptr[2] = 16, r.q_tokens = 16;  // request 1 claims 13 tokens: not written
  r.q.resize(16 * 32 * 128), r.k_ext.resize(16 * 8 * 128), r.v_ext.resize(16 * 8 * 128);
  CHECK_FALSE(reference(r).written[3 * 32 * 128]);
  CHECK(reference(r).written[0]);
  extend_case s = make_case({1, {1000, 777}, {12, 5}, 1.0f, 1.0f, extend_fill::random, 0}, 14);
  const auto two = netra_order<sm90a_plan>(s, 2), many = netra_order<sm90a_plan>(s, 7);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < two.size(); ++i) differ += two[i] != many[i];
  MESSAGE(differ, " of ", two.size(), " outputs differ between 2 and 7 slices");
  CHECK(differ > 0);
}
