// tests/oracles/attention_gqa8.hpp on the host: netra's association order (the bitwise oracle of
// the kernels, for each target's plan) meets the contract's bound against the FP64 semantics on
// random and adversarial calls (0 elements beyond the bound), writes zeros where a row sees no
// position, never lets the NaN of an unindexed or masked slot through, and depends on the split
// (so the GPU test's bitwise comparison catches a reordering).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "oracles/attention_gqa8_inputs.hpp"

using namespace netra;
using namespace netra::oracles;
using sm90a_plan = attention_plan<mma_m16n8k16_bf16>;
using gfx950_plan = attention_plan<mfma_f32_16x16x32_bf16>;

namespace {
template <class Plan> void meets_bound(const gqa8_shape& shape, std::uint32_t seed, int slices, int block_warps, const char* what) {
  const gqa8_case c = make_case(shape, seed);
  const gqa8_summary s = compare(reference(c), netra_order<Plan>(c, slices, block_warps), 0);
  INFO(what, ": ", s.checked, " outputs, max |err| ", s.max_err, ", beyond bound ", s.beyond, ", cosine ", s.cosine());
  CHECK(s.checked > 0);
  CHECK(s.beyond == 0);
  CHECK(s.nan == 0);
}
}  // namespace

TEST_CASE("netra's order meets the contract's bound (decode, sm90a and gfx950 plans, split and unsplit)") {
  const gqa8_shape ragged{1, 1, {0, 1, 63, 64, 65, 200}, 0.8f, 1.3f, gqa8_fill::random, 0};
  meets_bound<sm90a_plan>(ragged, 1, 1, 4, "sm90a 1 slice");
  meets_bound<sm90a_plan>(ragged, 2, 3, 4, "sm90a 3 slices");
  meets_bound<gfx950_plan>(ragged, 3, 1, 2, "gfx950 1 slice");
  meets_bound<gfx950_plan>(ragged, 4, 5, 2, "gfx950 5 slices");
}

TEST_CASE("adversarial calls meet the bound: equal scores, a spike, +-448, subnormal codes, extreme scales, masked indices") {
  meets_bound<sm90a_plan>({1, 1, {130, 7}, 1.0f, 1.0f, gqa8_fill::equal_scores, 0}, 5, 2, 4, "equal scores");
  meets_bound<sm90a_plan>({1, 1, {300, 65}, 1.0f, 1.0f, gqa8_fill::spike, 0}, 6, 2, 4, "spike");
  meets_bound<sm90a_plan>({1, 1, {129}, 1.0f / 64, 1.0f, gqa8_fill::saturated, 0}, 7, 1, 4, "+-448");
  meets_bound<sm90a_plan>({1, 1, {129}, 1.0f, 1.0f, gqa8_fill::subnormal, 0}, 8, 1, 4, "subnormal codes");
  meets_bound<sm90a_plan>({1, 1, {100, 33}, 1e-6f, 1e-6f, gqa8_fill::random, 0}, 9, 1, 4, "scales << 1");
  meets_bound<sm90a_plan>({1, 1, {100, 33}, 40.0f, 1e4f, gqa8_fill::random, 0}, 10, 2, 4, "scales >> 1");
  meets_bound<sm90a_plan>({1, 1, {150, 90}, 1.0f, 1.0f, gqa8_fill::random, 5}, 11, 2, 4, "every 5th index outside the pool");
  meets_bound<sm90a_plan>({1, 16, {0, 1, 17, 200}, 1.0f, 1.0f, gqa8_fill::random, 0}, 12, 2, 4, "page size 16");
}

TEST_CASE("verification: Tq = 12, causal inside the verify block, split") {
  meets_bound<sm90a_plan>({12, 1, {12, 13, 140, 400}, 0.9f, 1.1f, gqa8_fill::random, 0}, 13, 1, 1, "verify 1 slice");
  meets_bound<sm90a_plan>({12, 1, {140, 400}, 0.9f, 1.1f, gqa8_fill::random, 0}, 14, 6, 1, "verify 6 slices");
  meets_bound<gfx950_plan>({12, 1, {5, 140}, 0.9f, 1.1f, gqa8_fill::random, 0}, 15, 4, 1, "verify gfx950, a request shorter than Tq");
  // Causality: token t of a request whose whole KV is the verify block sees t + 1 positions; with
  // all scores equal its output is the mean of the first t + 1 value rows.
  gqa8_case c = make_case({12, 1, {12}, 1.0f, 1.0f, gqa8_fill::equal_scores, 0}, 16);
  const gqa8_expected e = reference(c);
  for (int t = 0; t < 12; ++t) {
    double mean = 0;
    for (int p = 0; p <= t; ++p) mean += f32_from_e4m3(kv_at(c.v, slot_of(c, 0, p), 0, 3));
    CHECK(e.out[(static_cast<std::size_t>(t) * 16 + 0) * 256 + 3] == doctest::Approx(mean / (t + 1)).epsilon(1e-12));
  }
}

TEST_CASE("rows that see nothing are 0; a refused query extent is not written; the order depends on the split") {
  gqa8_case c = make_case({1, 1, {0, 100}, 1.0f, 1.0f, gqa8_fill::random, 0}, 17);
  const auto out = netra_order<sm90a_plan>(c, 2, 4);
  for (int i = 0; i < 16 * 256; ++i) CHECK(out[static_cast<std::size_t>(i)] == 0);
  c.qo_indptr[2] = 3;  // request 1 claims 2 tokens in a decode call: not written
  const gqa8_expected e = reference(c);
  CHECK_FALSE(e.written[16 * 256]);
  gqa8_case r = make_case({1, 1, {1000, 777}, 1.0f, 1.0f, gqa8_fill::random, 0}, 18);
  const auto one = netra_order<sm90a_plan>(r, 1, 4), many = netra_order<sm90a_plan>(r, 7, 4);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < one.size(); ++i) differ += one[i] != many[i];
  MESSAGE(differ, " of ", one.size(), " outputs differ between 1 and 7 slices");
  CHECK(differ > 0);
}
