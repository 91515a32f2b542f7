// attention_gqa4_extend on the GPU (sm90a cubins built by CMake): bitwise equal to netra's order
// (tests/oracles/attention_gqa4_extend.hpp) on exact inputs, split 2 and more; within the
// contract's bound of the FP64 semantics on random and adversarial calls (prefix 0 and 1, lengths
// not multiples of 64, equal scores, a spike, +-448, subnormal codes, tiny and huge scales, page
// size 16), with the NaN that fills every unindexed slot never reaching an output and the rows of
// refused extents left untouched; masked (out-of-pool) indices never read; bitwise identical
// across runs; refused calls launch nothing and write nothing.
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gpu/attention_gpu_common.hpp"
#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/attention_gqa4_extend.hpp"
#include "oracles/attention_gqa4_extend.hpp"

using namespace netra;
using namespace netra::oracles;
using plan = attention_plan<mma_m16n8k16_bf16>;
using extend = contracts::attention_gqa4_extend_served<sm90a>;
using extend16 = contracts::attention_gqa4_extend<sm90a, 16, 1, 6, 64, 128>;
using native = contracts::attention_gqa4_extend_native<sm90a, 1, 6, 64, 128>;  // the 48-row plan: the same order, the same oracle
using native16 = contracts::attention_gqa4_extend_native<sm90a, 16, 6, 64, 128>;
using warpgroup = contracts::attention_gqa4_extend_native<sm90a, 1, 3, 64, 128, 1>;  // the native plan's products on the warpgroup matrix unit
using warpgroup6 = contracts::attention_gqa4_extend_native<sm90a, 1, 6, 64, 128, 1>;
using warpgroup16 = contracts::attention_gqa4_extend_native<sm90a, 16, 3, 64, 128, 1>;
TYPE_TO_STRING_AS("pair view", extend);
TYPE_TO_STRING_AS("native", native);
TYPE_TO_STRING_AS("warpgroup", warpgroup);
TYPE_TO_STRING_AS("warpgroup 6", warpgroup6);

namespace {
/// The page-size-16 instance of a plan's mapping.
template <class P> using page16_of = conditional_t<!P::native, extend16, conditional_t<P::warpgroup_mma, warpgroup16, native16>>;

template <class C> const handle<C>& h() {
  static const handle<C> value(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<C>() + ".cubin", current_cuda_device());
  return value;
}
constexpr std::uint16_t poison = 0xABAB;

struct device_case {
  testing::gpu_array<std::uint16_t> q, out, k_ext, v_ext;
  testing::gpu_array<std::uint8_t> k, v;
  testing::gpu_array<std::int64_t> qo, indices;
  testing::gpu_array<std::int32_t> indptr, last;
  testing::gpu_array<float> scales;
  const extend_case& c;
  explicit device_case(const extend_case& host)
      : q(host.q.size()), out(host.q.size()), k_ext(host.k_ext.size()), v_ext(host.v_ext.size()), k(host.k.size()), v(host.v.size()),
        qo(host.qo_indptr.size()), indices(std::max<std::size_t>(1, host.kv_indices.size())), indptr(host.kv_indptr.size()),
        last(std::max<std::size_t>(1, host.last_page_len.size())), scales(2), c(host) {
    q.upload(host.q), k_ext.upload(host.k_ext), v_ext.upload(host.v_ext), k.upload(host.k), v.upload(host.v), qo.upload(host.qo_indptr);
    indptr.upload(host.kv_indptr);
    if (!host.kv_indices.empty()) indices.upload(host.kv_indices);
    if (!host.last_page_len.empty()) last.upload(host.last_page_len);
    scales.upload({host.k_scale, host.v_scale});
    out.upload(std::vector<std::uint16_t>(host.q.size(), poison));
  }
  attention_extend_call call() const {
    attention_extend_call a;
    a.q = q.data(), a.out = out.data(), a.k_extend = k_ext.data(), a.v_extend = v_ext.data(), a.q_tokens = c.q_tokens;
    a.k_buffer = k.data(), a.v_buffer = v.data(), a.slots = c.slots, a.page_size = c.page_size, a.qo_indptr = qo.data();
    a.kv_indptr = indptr.data(), a.kv_indices = indices.data(), a.kv_indices_count = static_cast<i64>(c.kv_indices.size());
    a.kv_last_page_len = c.page_size > 1 ? last.data() : nullptr, a.k_scale = scales.data(), a.v_scale = scales.data() + 1, a.batch = c.batch;
    return a;
  }
};

template <class C, class Form = void> std::vector<std::uint16_t> run(const extend_case& c, i64 slices) {
  device_case d(c);
  attention_extend<C, Form>(h<C>(), nullptr, d.call(), slices);
  return d.out.download();
}

/// The FP64 reference of case `seed` (each case has its own seed), computed once for both plans.
const gqa8_expected& reference_of(const extend_case& c, std::uint32_t seed) {
  static std::map<std::uint32_t, gqa8_expected> done;
  auto it = done.find(seed);
  if (it == done.end()) it = done.emplace(seed, reference(c)).first;
  return it->second;
}

template <class C> void bounded(const extend_shape& shape, std::uint32_t seed, const char* what, i64 slices = 0) {
  const extend_case c = make_case(shape, seed);
  const i64 sl = slices > 0 ? slices : attention_extend_slices(h<C>(), c.batch);
  const gqa8_summary s = compare(reference_of(c, seed), run<C>(c, sl), poison);
  MESSAGE(instance_name<C>(), " ", std::string(what), " (slices ", sl, "): ", s.checked, " outputs, max |err| ", s.max_err, ", beyond bound ", s.beyond,
          ", cosine ", s.cosine());
  CHECK(s.checked > 0);
  CHECK(s.beyond == 0);
  CHECK(s.nan == 0);
  CHECK(s.untouched_bad == 0);
}
template <class C> void bitwise(const extend_shape& shape, std::uint32_t seed, i64 slices) {
  const extend_case c = make_case(shape, seed);
  const auto got = run<C>(c, slices);
  const auto want = netra_order<plan>(c, static_cast<int>(slices));
  std::size_t differ = 0, checked = 0;
  for (int b = 0; b < c.batch; ++b)  // the outputs of the requests the call writes
    if (writable(c, b))
      for (std::size_t i = static_cast<std::size_t>(c.qo_indptr[b]) * 32 * 128; i < static_cast<std::size_t>(c.qo_indptr[b + 1]) * 32 * 128; ++i)
        differ += got[i] != want[i], ++checked;
  MESSAGE(instance_name<C>(), " bitwise, slices ", slices, ": ", differ, " of ", checked, " outputs differ from netra's order");
  CHECK(checked > 0);
  CHECK(differ == 0);
}
}  // namespace

TEST_CASE_TEMPLATE("extend: bitwise equal to netra's order on exact inputs (split 2 and more, page size 1 and 16)", P, extend, native, warpgroup,
                   warpgroup6) {
  using C16 = page16_of<P>;
  const extend_shape s{1, {0, 1, 63, 64, 65, 300, 1000}, {1, 12, 7, 12, 3, 12, 9}, 0.37f, 0.8f, extend_fill::bitwise, 0};
  for (i64 slices : {2, 3, 16}) bitwise<P>(s, 1, slices);
  bitwise<C16>({16, {0, 1, 17, 300}, {12, 2, 12, 5}, 0.5f, 2.0f, extend_fill::bitwise, 0}, 2, 4);
  bitwise<P>({1, std::vector<std::int64_t>(8, 600), std::vector<int>(8, 12), 1.0f, 1.0f, extend_fill::bitwise, 0}, 3, 2);  // full 48-row tiles
}

TEST_CASE("extend: the native plan (per warp and on the warpgroup matrix unit) and the pair view give the same bits (random inputs, ragged)") {
  const extend_case c = make_case({1, {0, 1, 63, 700, 4099, 64}, {12, 1, 5, 12, 12, 8}, 0.9f, 1.1f, extend_fill::random, 0}, 5);
  for (i64 slices : {2, 7}) {
    const auto a = run<extend>(c, slices), b = run<native>(c, slices), w = run<warpgroup>(c, slices), w6 = run<warpgroup6>(c, slices);
    CHECK(std::memcmp(a.data(), b.data(), a.size() * 2) == 0);
    CHECK(std::memcmp(b.data(), w.data(), b.size() * 2) == 0);
    CHECK(std::memcmp(b.data(), w6.data(), b.size() * 2) == 0);
  }
}

TEST_CASE_TEMPLATE("extend: every stage-two form gives the served form's bits (ragged, random, slices 2, 3, 16)", P, native, extend, warpgroup) {
  const extend_case c = make_case({1, {0, 1, 63, 700, 4099, 64, 2000}, {12, 1, 5, 12, 12, 8, 12}, 0.9f, 1.1f, extend_fill::random, 0}, 6);
  for (i64 slices : {2, 3, 16}) {
    const auto served = run<P>(c, slices);
    const std::vector<std::uint16_t> forms[] = {run<P, kernels::extend_stage_two_sequential>(c, slices), run<P, kernels::extend_stage_two_wide>(c, slices),
                                                run<P, kernels::extend_stage_two_form<1, 2, true>>(c, slices),
                                                run<P, kernels::extend_stage_two_form<4, 8, true>>(c, slices)};
    for (const auto& f : forms) CHECK(std::memcmp(served.data(), f.data(), served.size() * 2) == 0);
  }
}

TEST_CASE_TEMPLATE("extend: within the contract's bound on random and adversarial calls; NaN of unindexed slots never leaks", P, extend, native,
                   warpgroup) {
  using C16 = page16_of<P>;
  bounded<P>({1, {0, 1, 63, 64, 65, 127, 1000, 4099}, {12, 1, 12, 5, 12, 2, 12, 12}, 0.8f, 1.3f, extend_fill::random, 0}, 11, "ragged");
  bounded<P>({1, std::vector<std::int64_t>(64, 257), std::vector<int>(64, 12), 1.0f, 1.0f, extend_fill::random, 0}, 12, "B = 64, P = 257");
  bounded<P>({1, {4096}, {12}, 1.0f, 1.0f, extend_fill::random, 0}, 13, "B = 1, P = 4096 (split)");
  bounded<P>({1, {130, 7}, {12, 4}, 1.0f, 1.0f, extend_fill::equal_scores, 0}, 14, "all-equal scores");
  bounded<P>({1, {300, 65}, {6, 12}, 1.0f, 1.0f, extend_fill::spike, 0}, 15, "a score spike");
  bounded<P>({1, {129, 700}, {12, 12}, 1.0f / 64, 1.0f, extend_fill::saturated, 0}, 16, "K/V at +-448");
  bounded<P>({1, {129, 700}, {12, 12}, 1.0f, 1.0f, extend_fill::subnormal, 0}, 17, "subnormal E4M3 codes");
  bounded<P>({1, {100, 333}, {12, 3}, 1e-6f, 1e-6f, extend_fill::random, 0}, 18, "scales << 1");
  bounded<P>({1, {100, 333}, {12, 3}, 40.0f, 1e4f, extend_fill::random, 0}, 19, "scales >> 1");
  bounded<C16>({16, {0, 1, 17, 200, 5000}, {12, 12, 3, 1, 12}, 1.0f, 1.0f, extend_fill::random, 0}, 20, "page size 16");
  bounded<P>({1, {150, 900, 64}, {12, 12, 12}, 1.0f, 1.0f, extend_fill::random, 3}, 21, "every 3rd index outside the pool");
}

TEST_CASE_TEMPLATE("extend: a request whose extent is outside [1, 12] is left untouched", P, extend, native, warpgroup) {
  extend_case c = make_case({1, {200, 200, 200}, {12, 12, 12}, 1.0f, 1.0f, extend_fill::random, 0}, 31);
  c.qo_indptr = {0, 12, 12, 36};  // request 1 empty, request 2 claims 24 tokens
  const gqa8_expected e = reference(c);
  CHECK_FALSE(e.written[12 * 32 * 128]);
  const gqa8_summary s = compare(e, run<P>(c, 2), poison);
  CHECK(s.checked == 12 * 32 * 128);
  CHECK(s.beyond == 0);
  CHECK(s.untouched_bad == 0);
}

TEST_CASE_TEMPLATE("extend: the same input gives the same bits on every run (no atomics in the result path)", P, extend, native, warpgroup) {
  const extend_case c = make_case({1, {3000, 17, 64, 1000}, {12, 3, 12, 7}, 1.0f, 1.0f, extend_fill::random, 0}, 41);
  const auto a = run<P>(c, 8), b = run<P>(c, 8);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * 2) == 0);
}

TEST_CASE_TEMPLATE("extend: a refused call names the field, launches nothing and writes nothing", P, extend, native, warpgroup) {
  const extend_case c = make_case({1, {100, 100}, {12, 5}, 1.0f, 1.0f, extend_fill::random, 0}, 51);
  device_case d(c);
  const auto refused = testing::refusal_check([](const attention_extend_call& a, i64 slices) { attention_extend(h<P>(), nullptr, a, slices); });
  const auto a = d.call();
  auto prefill = a;
  prefill.phase = attention_phase::prefill;  // a piecewise-prefill chunk of <= 16 tokens: not an extension
  refused(prefill, 2, "got prefill");
  refused(a, 1, "'slices'");
  refused(a, 100, "'slices'");
  auto misaligned = a;
  misaligned.k_extend = a.k_extend + 1;
  refused(misaligned, 2, "'k_extend'");
  auto no_v = a;
  no_v.v_extend = nullptr;
  refused(no_v, 2, "'v_extend'");
  auto long_ext = a;
  long_ext.tq = 13;
  refused(long_ext, 2, "'tq'");
  testing::refuse_batch_and_mirror(refused, a, c, 2);
  testing::require_untouched(d.out, poison);
}
