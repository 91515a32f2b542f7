// attention_gqa8 on the GPU (sm90a cubins built by CMake): bitwise equal to netra's association
// order (tests/oracles/attention_gqa8.hpp) on exact inputs for every catalogued sm90a mapping and
// split; within the contract's bound of the FP64 semantics on random and adversarial calls, with
// the NaN that fills every unindexed slot never reaching an output; masked (out-of-pool) indices
// never read; bitwise identical across runs; refused calls launch nothing and write nothing.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/attention_gpu_common.hpp"
#include "gpu/gpu_buffers.hpp"
#include "netra/contracts/attention/gqa8_decode_wide.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/attention_gqa8.hpp"
#include "netra/runtime/tactics/attention.hpp"
#include "oracles/attention_gqa8_inputs.hpp"

using namespace netra;
using namespace netra::oracles;
using plan = attention_plan<mma_m16n8k16_bf16>;
using decode = contracts::attention_gqa8_decode<sm90a>;
using verify = contracts::attention_gqa8_verify<sm90a>;
using decode16 = contracts::attention_gqa8<sm90a, 0, 1, 16, 4, 3, 64, 128>;
using decode_2x6 = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 6, 64, 128>;
using decode_1x8 = contracts::attention_gqa8<sm90a, 0, 1, 1, 1, 8, 64, 128>;
using decode_2x2 = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 2, 64, 256>;
using decode_1x2 = contracts::attention_gqa8<sm90a, 0, 1, 1, 1, 2, 64, 512>;
using direct_1 = contracts::attention_gqa8<sm90a, 0, 1, 1, 1, 0, 64, 512>;  // Stages 0: no LDS ring
using decode_4x3 = contracts::attention_gqa8<sm90a, 0, 1, 1, 4, 3, 64, 128>;  // served before Stages 0 (direct 2 x 0 is `decode`)
using direct_4 = contracts::attention_gqa8<sm90a, 0, 1, 1, 4, 0, 64, 256>;
using direct_8 = contracts::attention_gqa8<sm90a, 0, 1, 1, 8, 0, 64, 512>;  // 8 waves; served at B 64 (tactics::attention_gqa8)
using split_4 = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 0, 64, 512, 4>;  // 2 x 0, each block over 4 warps (served at B 1)
using split_8 = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 0, 64, 512, 8>;  // 2 x 0, each block over 8 warps (16 a workgroup)
static_assert(verify::tokens_per_wave == 2 && verify::waves == 6 && verify::stages == 6 && verify::warpgroup_mma);  // served: two tokens a wave, on two warpgroups

namespace {
template <class C> const handle<C>& h() {
  static const handle<C> value(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<C>() + ".cubin", current_cuda_device());
  return value;
}
constexpr std::uint16_t poison = 0xABAB;

struct device_case {
  testing::gpu_array<std::uint16_t> q, out;
  testing::gpu_array<std::uint8_t> k, v;
  testing::gpu_array<std::int64_t> qo, indices;
  testing::gpu_array<std::int32_t> indptr, last;
  testing::gpu_array<float> scales;
  const gqa8_case& c;
  explicit device_case(const gqa8_case& host)
      : q(host.q.size()), out(host.q.size()), k(host.k.size()), v(host.v.size()), qo(host.qo_indptr.size()),
        indices(std::max<std::size_t>(1, host.kv_indices.size())), indptr(host.kv_indptr.size()),
        last(std::max<std::size_t>(1, host.last_page_len.size())), scales(2), c(host) {
    q.upload(host.q), k.upload(host.k), v.upload(host.v), qo.upload(host.qo_indptr), indptr.upload(host.kv_indptr);
    if (!host.kv_indices.empty()) indices.upload(host.kv_indices);
    if (!host.last_page_len.empty()) last.upload(host.last_page_len);
    scales.upload({host.k_scale, host.v_scale});
    out.upload(std::vector<std::uint16_t>(host.q.size(), poison));
  }
  attention_gqa8_call call(attention_phase phase) const {
    attention_gqa8_call a;
    a.phase = phase, a.q = q.data(), a.out = out.data(), a.q_tokens = c.q_tokens, a.k_buffer = k.data(), a.v_buffer = v.data();
    a.slots = c.slots, a.page_size = c.page_size, a.qo_indptr = qo.data(), a.kv_indptr = indptr.data(), a.kv_indices = indices.data();
    a.kv_indices_count = static_cast<i64>(c.kv_indices.size()), a.kv_last_page_len = last.data(), a.k_scale = scales.data();
    a.v_scale = scales.data() + 1, a.batch = c.batch, a.tq = c.tq;
    return a;
  }
};

template <class C> std::vector<std::uint16_t> run(const gqa8_case& c, i64 slices) {
  device_case d(c);
  attention_gqa8(h<C>(), nullptr, d.call(C::phase), slices);
  return d.out.download();
}

template <class C> void bounded(const gqa8_shape& shape, std::uint32_t seed, const char* what, i64 slices = 0) {
  const gqa8_case c = make_case(shape, seed);
  const i64 sl = slices > 0 ? slices : attention_gqa8_slices(h<C>(), c.batch);
  const gqa8_summary s = compare(reference(c), run<C>(c, sl), poison);
  const double cosine = s.cosine();
  MESSAGE(instance_name<C>(), " ", std::string(what), " (slices ", sl, "): ", s.checked, " outputs, max |err| ", s.max_err, ", beyond bound ", s.beyond,
          ", cosine ", cosine);
  CHECK(s.checked > 0);
  CHECK(s.beyond == 0);
  CHECK(s.nan == 0);
  CHECK(s.untouched_bad == 0);
}
template <class C> void bitwise(const gqa8_shape& shape, std::uint32_t seed, i64 slices) {
  const gqa8_case c = make_case(shape, seed);
  const auto got = run<C>(c, slices);
  const auto want = netra_order<plan>(c, static_cast<int>(slices), static_cast<int>(C::block_warps));
  const gqa8_expected e = reference(c);
  std::size_t differ = 0, checked = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (e.written[i]) differ += got[i] != want[i], ++checked;
  MESSAGE(instance_name<C>(), " bitwise, slices ", slices, ": ", differ, " of ", checked, " outputs differ from netra's order");
  CHECK(checked > 0);
  CHECK(differ == 0);
}
}  // namespace

TEST_CASE("bitwise equal to netra's association order on exact inputs (every mapping, split and unsplit)") {
  const gqa8_shape d{1, 1, {0, 1, 63, 64, 65, 300, 1000, 129}, 0.37f, 0.8f, gqa8_fill::bitwise, 0};
  for (i64 slices : {1, 3, 16}) {
    bitwise<decode>(d, 1, slices);
    bitwise<decode_2x6>(d, 2, slices);
    bitwise<decode_1x8>(d, 3, slices);
    bitwise<decode_2x2>(d, 8, slices);
    bitwise<decode_1x2>(d, 9, slices);
    bitwise<direct_1>(d, 10, slices);
    bitwise<decode_4x3>(d, 11, slices);
    bitwise<direct_4>(d, 12, slices);
    bitwise<direct_8>(d, 13, slices);
  }
  // Stage two's last batch of 16 holding one real slice (66 = 1 + 4 x 16 + 1), the served B = 1 count.
  bitwise<decode>({1, 1, {8192, 4000, 129}, 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 14, 66);
  bitwise<direct_8>({1, 1, {8192, 1000}, 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 15, 16);
  bitwise<direct_8>({1, 1, std::vector<std::int64_t>(64, 200), 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 16, 1);  // served at B 64: no split
  bitwise<decode16>({1, 16, {0, 1, 17, 300, 999}, 0.5f, 2.0f, gqa8_fill::bitwise, 0}, 4, 1);
  bitwise<decode16>({1, 16, {0, 1, 17, 300, 999}, 0.5f, 2.0f, gqa8_fill::bitwise, 0}, 5, 5);
  bitwise<verify>({12, 1, {12, 13, 200, 700}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 6, 1);
  bitwise<verify>({12, 1, {200, 1500}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 7, 8);
  // Stage two past one batch of 32 slices in flight and past its 256 threads' share of the
  // statistics: B 1 at SplitCapacity (448 of 512 slices empty), B 2 at 256, verify at 66 and 128.
  bitwise<decode>({1, 1, {8192}, 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 17, 512);
  bitwise<decode>({1, 1, {8192, 2000}, 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 18, 256);
  bitwise<verify>({12, 1, {8204}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 19, 66);
  bitwise<verify>({12, 1, {3000}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 20, 128);
}

TEST_CASE("BlockSplit small: ragged lengths at 3 slices, bitwise (the case racecheck runs: the warps' LDS score exchange)") {
  const gqa8_shape d{1, 1, {0, 65, 300, 129}, 0.37f, 0.8f, gqa8_fill::bitwise, 0};
  bitwise<split_4>(d, 32, 3);
  bitwise<split_8>(d, 33, 3);
}

TEST_CASE("BlockSplit mappings (2 x 0 with each block over 4 / 8 warps): bitwise in 2 x 0's order, within the bound, masked indices") {
  const gqa8_shape d{1, 1, {0, 1, 63, 64, 65, 300, 1000, 129}, 0.37f, 0.8f, gqa8_fill::bitwise, 0};
  for (i64 slices : {1, 3, 16}) {  // ragged: the two waves of a slice take different numbers of blocks
    bitwise<split_4>(d, 21, slices);
    bitwise<split_8>(d, 22, slices);
  }
  bitwise<split_4>({1, 1, {8192, 4000, 129}, 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 23, 66);
  bitwise<split_8>({1, 1, {8192}, 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 24, 66);
  bitwise<split_8>({1, 1, {8192, 2000}, 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 25, 256);
  bitwise<split_8>({1, 1, std::vector<std::int64_t>(64, 200), 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 34, 1);  // B 64: one slice, as slices_for gives
  // The step's decode batches at the device's slices (H200: B 8 -> 8, B 16 -> 4, B 64 -> 1).
  bitwise<split_8>({1, 1, std::vector<std::int64_t>(8, 3000), 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 35, attention_gqa8_slices(h<split_8>(), 8));
  bitwise<split_8>({1, 1, std::vector<std::int64_t>(16, 2000), 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 36, attention_gqa8_slices(h<split_8>(), 16));
  bounded<split_8>({1, 1, std::vector<std::int64_t>(64, 1024), 1.0f, 1.0f, gqa8_fill::random, 0}, 38, "BlockSplit 8, B = 64, L = 1024 (the device's slices)");
  bounded<split_8>({1, 1, std::vector<std::int64_t>(16, 4096), 1.0f, 1.0f, gqa8_fill::random, 0}, 39, "BlockSplit 8, B = 16, L = 4096 (the device's slices)");
  bounded<split_4>({1, 1, {8192}, 1.0f, 1.0f, gqa8_fill::random, 0}, 26, "BlockSplit 4, B = 1, L = 8192 (the device's slices)");
  bounded<split_8>({1, 1, {8192}, 1.0f, 1.0f, gqa8_fill::random, 0}, 27, "BlockSplit 8, B = 1, L = 8192 (the device's slices)");
  bounded<split_8>({1, 1, {0, 1, 63, 64, 65, 127, 1000, 4099}, 0.8f, 1.3f, gqa8_fill::random, 0}, 28, "BlockSplit 8, ragged lengths");
  bounded<split_8>({1, 1, {150, 900, 64}, 1.0f, 1.0f, gqa8_fill::random, 3}, 29, "BlockSplit 8, every 3rd index outside the pool");
  bounded<split_4>({1, 1, {150, 900, 64}, 1.0f, 1.0f, gqa8_fill::random, 2}, 31, "BlockSplit 4, every 2nd index outside the pool");
}

TEST_CASE("what dispatch serves, at the device's slices: decode B 1 (2 x 0 / BlockSplit 4, stage two a programmatic dependent), B 4 (2 x 0), B 64 (8 waves), verify") {
  using served_b1 = tactics::attention_gqa8_block_split_decode;
  bitwise<served_b1>({1, 1, {8192}, 0.37f, 0.8f, gqa8_fill::bitwise, 0}, 71, attention_gqa8_slices(h<served_b1>(), 1));
  bounded<served_b1>({1, 1, {8192}, 1.0f, 1.0f, gqa8_fill::random, 0}, 72, "served B = 1, L = 8192 (BlockSplit 4)");
  bounded<decode>({1, 1, {0, 1, 65, 8000}, 0.8f, 1.3f, gqa8_fill::random, 3}, 73, "served B = 4, ragged, every 3rd index outside the pool");
  bounded<direct_8>({1, 1, std::vector<std::int64_t>(64, 1024), 1.0f, 1.0f, gqa8_fill::random, 0}, 74, "served B = 64, L = 1024 (8 waves, no split)");
  bounded<verify>({12, 1, {8204}, 1.0f, 1.0f, gqa8_fill::random, 0}, 75, "served verify, prefix 8192 + 12");
}

TEST_CASE("within the contract's bound on random and adversarial decode calls; NaN of unindexed slots never leaks") {
  bounded<decode>({1, 1, {0, 1, 63, 64, 65, 127, 1000, 4099}, 0.8f, 1.3f, gqa8_fill::random, 0}, 11, "ragged lengths");
  bounded<decode>({1, 1, {0, 1, 63, 64, 65, 127, 1000, 4099}, 0.8f, 1.3f, gqa8_fill::random, 0}, 12, "ragged lengths", 1);
  bounded<decode>({1, 1, std::vector<std::int64_t>(64, 1024), 1.0f, 1.0f, gqa8_fill::random, 0}, 13, "B = 64, L = 1024");
  bounded<decode>({1, 1, {8192}, 1.0f, 1.0f, gqa8_fill::random, 0}, 14, "B = 1, L = 8192 (split)");
  bounded<decode>({1, 1, {130, 7}, 1.0f, 1.0f, gqa8_fill::equal_scores, 0}, 15, "all-equal scores");
  bounded<decode>({1, 1, {300, 65}, 1.0f, 1.0f, gqa8_fill::spike, 0}, 16, "a score spike");
  bounded<decode>({1, 1, {129, 700}, 1.0f / 64, 1.0f, gqa8_fill::saturated, 0}, 17, "K/V at +-448");
  bounded<decode>({1, 1, {129, 700}, 1.0f, 1.0f, gqa8_fill::subnormal, 0}, 18, "subnormal E4M3 codes");
  bounded<decode>({1, 1, {100, 333}, 1e-6f, 1e-6f, gqa8_fill::random, 0}, 19, "scales << 1");
  bounded<decode>({1, 1, {100, 333}, 40.0f, 1e4f, gqa8_fill::random, 0}, 20, "scales >> 1");
  bounded<decode16>({1, 16, {0, 1, 17, 200, 5000}, 1.0f, 1.0f, gqa8_fill::random, 0}, 21, "page size 16");
  bounded<decode_2x6>({1, 1, {1, 65, 3000}, 1.0f, 1.0f, gqa8_fill::random, 0}, 22, "mapping 2 x 6");
  bounded<decode_1x8>({1, 1, {1, 65, 3000}, 1.0f, 1.0f, gqa8_fill::random, 0}, 23, "mapping 1 x 8");
  bounded<decode_2x2>({1, 1, {1, 65, 3000}, 1.0f, 1.0f, gqa8_fill::random, 0}, 24, "mapping 2 x 2");
  bounded<decode_1x2>({1, 1, {1, 65, 3000}, 1.0f, 1.0f, gqa8_fill::random, 0}, 25, "mapping 1 x 2");
  bounded<decode_2x2>({1, 1, std::vector<std::int64_t>(64, 1024), 1.0f, 1.0f, gqa8_fill::random, 0}, 26, "B = 64, L = 1024 (split by occupancy)");
  bounded<decode_1x2>({1, 1, std::vector<std::int64_t>(64, 1024), 1.0f, 1.0f, gqa8_fill::random, 0}, 27, "B = 64, L = 1024 (split by occupancy)");
  bounded<direct_1>({1, 1, {0, 1, 63, 64, 65, 127, 1000, 4099}, 0.8f, 1.3f, gqa8_fill::random, 0}, 28, "Stages 0, ragged lengths");
  bounded<decode>({1, 1, std::vector<std::int64_t>(64, 1024), 1.0f, 1.0f, gqa8_fill::random, 0}, 29, "Stages 0, B = 64, L = 1024");
  bounded<direct_4>({1, 1, {8192}, 1.0f, 1.0f, gqa8_fill::random, 0}, 30, "Stages 0, B = 1, L = 8192 (split)");
  bounded<direct_8>({1, 1, {8192}, 1.0f, 1.0f, gqa8_fill::random, 0}, 33, "Stages 0 x 8 waves, B = 1, L = 8192 (16 slices)", 16);
  bounded<direct_8>({1, 1, {0, 1, 63, 64, 65, 127, 1000, 4099}, 0.8f, 1.3f, gqa8_fill::random, 0}, 34, "Stages 0 x 8 waves, ragged lengths");
  bounded<direct_8>({1, 1, std::vector<std::int64_t>(64, 1024), 1.0f, 1.0f, gqa8_fill::random, 0}, 35, "Stages 0 x 8 waves, B = 64, L = 1024 (served at B 64)");
  bounded<decode>({1, 1, {129, 700}, 1.0f / 64, 1.0f, gqa8_fill::saturated, 0}, 31, "Stages 0, K/V at +-448");
  bounded<decode>({1, 1, {129, 700}, 1.0f, 1.0f, gqa8_fill::subnormal, 0}, 32, "Stages 0, subnormal E4M3 codes");
}

TEST_CASE("split-sequence verification (Tq = 12) within the bound, causal inside the verify block") {
  bounded<verify>({12, 1, {12, 13, 140, 1000}, 0.9f, 1.1f, gqa8_fill::random, 0}, 31, "ragged prefixes");
  bounded<verify>({12, 1, {5}, 0.9f, 1.1f, gqa8_fill::random, 0}, 32, "a request shorter than Tq");
  bounded<verify>({12, 1, {8204}, 1.0f, 1.0f, gqa8_fill::random, 0}, 33, "prefix 8192 + 12 (split)");
  bounded<verify>({12, 1, {8204}, 1.0f, 1.0f, gqa8_fill::spike, 0}, 34, "prefix 8192 + 12, a spike");
}

TEST_CASE("an index outside the pool is masked on the device: never read, weight 0") {
  bounded<decode>({1, 1, {150, 900, 64}, 1.0f, 1.0f, gqa8_fill::random, 3}, 41, "every 3rd index outside the pool");
  bounded<decode16>({1, 16, {150, 900}, 1.0f, 1.0f, gqa8_fill::random, 2}, 42, "every 2nd page outside the pool");
  bounded<verify>({12, 1, {300}, 1.0f, 1.0f, gqa8_fill::random, 4}, 43, "verify, every 4th index outside the pool");
  bounded<decode_2x2>({1, 1, {150, 900, 64}, 1.0f, 1.0f, gqa8_fill::random, 3}, 44, "mapping 2 x 2, every 3rd index outside the pool");
  bounded<decode>({1, 1, {150, 900, 64}, 1.0f, 1.0f, gqa8_fill::random, 3}, 45, "Stages 0, every 3rd index outside the pool");
  bounded<direct_1>({1, 1, {150, 900, 64}, 1.0f, 1.0f, gqa8_fill::random, 3}, 46, "Stages 0 x 1 wave, every 3rd index outside the pool");
  bounded<direct_8>({1, 1, {150, 900, 64}, 1.0f, 1.0f, gqa8_fill::random, 3}, 47, "Stages 0 x 8 waves, every 3rd index outside the pool");
}

TEST_CASE("the same input gives the same bits on every run (no atomics in the result path)") {
  const gqa8_case c = make_case({1, 1, {3000, 17, 64, 1000}, 1.0f, 1.0f, gqa8_fill::random, 0}, 51);
  const auto a = run<decode>(c, 16), b = run<decode>(c, 16);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * 2) == 0);
  const gqa8_case v = make_case({12, 1, {2000}, 1.0f, 1.0f, gqa8_fill::random, 0}, 52);
  const auto x = run<verify>(v, 66), y = run<verify>(v, 66);
  CHECK(std::memcmp(x.data(), y.data(), x.size() * 2) == 0);
  const gqa8_case w = make_case({1, 1, std::vector<std::int64_t>(64, 130), 1.0f, 1.0f, gqa8_fill::random, 0}, 53);
  const auto e = run<decode_2x2>(w, 3), f = run<decode_2x2>(w, 3);
  CHECK(std::memcmp(e.data(), f.data(), e.size() * 2) == 0);
  const auto g = run<decode>(w, 4), k = run<decode>(w, 4);
  CHECK(std::memcmp(g.data(), k.data(), g.size() * 2) == 0);
}

TEST_CASE("a refused call names the field, launches nothing and writes nothing") {
  const gqa8_case c = make_case({1, 1, {100, 100}, 1.0f, 1.0f, gqa8_fill::random, 0}, 61);
  device_case d(c);
  const auto refused = testing::refusal_check([](const attention_gqa8_call& a, i64 slices) { attention_gqa8(h<decode>(), nullptr, a, slices); });
  auto a = d.call(attention_phase::decode);
  auto wrong_phase = a;
  wrong_phase.phase = attention_phase::prefill;
  refused(wrong_phase, 1, "'phase'");
  refused(a, decode::split_capacity, "'slices'");  // batch 2 x SplitCapacity slices: beyond the workspace
  auto misaligned = a;
  misaligned.q = a.q + 1;
  refused(misaligned, 1, "'q'");
  testing::refuse_batch_and_mirror(refused, a, c, 1);
  testing::require_untouched(d.out, poison);
}

TEST_CASE("decode at batches 65..128 (the served mapping widened to MaxBatch 128): within the bound and bitwise in netra's order") {
  using wide = contracts::attention_gqa8_decode_wide<sm90a>;
  const std::int64_t ragged[] = {0, 1, 63, 64, 65, 127, 300, 1000};
  for (const std::size_t B : {std::size_t{65}, std::size_t{80}, std::size_t{112}, std::size_t{128}}) {
    std::vector<std::int64_t> lengths(B);
    for (std::size_t b = 0; b < B; ++b) lengths[b] = ragged[(b * 5 + B) % 8];
    const i64 slices = attention_gqa8_slices(h<wide>(), static_cast<i64>(B));
    CHECK((slices == 1 || static_cast<u32>(B * slices) <= wide::split_capacity));
    bounded<wide>({1, 1, lengths, 0.8f, 1.3f, gqa8_fill::random, 0}, static_cast<std::uint32_t>(40 + B), "batch 65..128, ragged lengths");
    bitwise<wide>({1, 1, lengths, 0.37f, 0.8f, gqa8_fill::bitwise, 0}, static_cast<std::uint32_t>(41 + B), 1);
  }
  bounded<wide>({1, 1, std::vector<std::int64_t>(128, 1024), 1.0f, 1.0f, gqa8_fill::random, 0}, 45, "B = 128, L = 1024");
}

// The verifies served before the warpgroup one (compared): each two-token wave over two warps
// (BlockSplit 2 with an LDS ring, 12 warps, the scores of a K piece exchanged through LDS, the block
// step with the V piece), and before it one warp a wave over 8 stages: the same bits as the served.
using verify_split2 = contracts::attention_gqa8<sm90a, 2, 12, 1, 1, 6, 64, 128, 2>;
using verify_1x8 = contracts::attention_gqa8<sm90a, 2, 12, 1, 1, 8, 64, 128>;
static_assert(verify_split2::warps == 12 && verify_split2::widen_once && verify_1x8::warps == 6 && verify::warps == 8);

TEST_CASE("verify BlockSplit small: ragged prefixes at 3 slices, bitwise (the case racecheck runs: the score exchange)") {
  bitwise<verify_split2>({12, 1, {12, 13, 200, 700}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 81, 3);
}

TEST_CASE("verify BlockSplit 2 and the unsplit 8-stage verify (served before): bitwise in the same order, within the bound, masked indices, repeatable") {
  for (i64 slices : {1, 3, 8}) {
    bitwise<verify_split2>({12, 1, {12, 13, 200, 700}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 83, slices);
    bitwise<verify_1x8>({12, 1, {12, 13, 200, 700}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 82, slices);
  }
  bitwise<verify_split2>({12, 1, {200, 1500}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 84, 8);
  bitwise<verify_split2>({12, 1, {8204}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 86, attention_gqa8_slices(h<verify_split2>(), 1));
  bitwise<verify_1x8>({12, 1, {8204}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 85, attention_gqa8_slices(h<verify_1x8>(), 1));
  bitwise<verify_split2>({12, 1, {3000}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 87, 128);
  bounded<verify_split2>({12, 1, {12, 13, 140, 1000}, 0.9f, 1.1f, gqa8_fill::random, 3}, 93, "verify BlockSplit 2, ragged, every 3rd index outside");
  bounded<verify_split2>({12, 1, {8204}, 1.0f, 1.0f, gqa8_fill::random, 0}, 90, "verify BlockSplit 2, prefix 8192 + 12 (the device's slices)");
  bounded<verify_1x8>({12, 1, {12, 13, 140, 1000}, 0.9f, 1.1f, gqa8_fill::random, 0}, 88, "verify 1 x 8, ragged prefixes");
  const gqa8_case c = make_case({12, 1, {8204}, 1.0f, 1.0f, gqa8_fill::random, 0}, 94);
  const auto x = run<verify_split2>(c, 66), y = run<verify_split2>(c, 66);
  CHECK(x == y);
  CHECK(x == run<verify_1x8>(c, 66));  // random inputs: the split and unsplit forms give the same bits
}

TEST_CASE("verify on the warpgroup matrix unit (WarpgroupMma, served): bitwise in netra's order, within the bound, masked indices, BlockSplit 2's bits") {
  for (i64 slices : {1, 3, 8}) bitwise<verify>({12, 1, {12, 13, 200, 700}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 95, slices);
  bitwise<verify>({12, 1, {200, 1500}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 96, 8);
  bitwise<verify>({12, 1, {8204}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 97, attention_gqa8_slices(h<verify>(), 1));
  bitwise<verify>({12, 1, {3000}, 0.3f, 1.0f, gqa8_fill::bitwise, 0}, 98, 128);
  bitwise<verify>({12, 1, {12, 77, 640, 2000}, 0.5f, 2.0f, gqa8_fill::bitwise, 0}, 99, 3);
  bounded<verify>({12, 1, {12, 13, 140, 1000}, 0.9f, 1.1f, gqa8_fill::random, 3}, 100, "verify WarpgroupMma, ragged, every 3rd index outside");
  bounded<verify>({12, 1, {8204}, 1.0f, 1.0f, gqa8_fill::random, 0}, 101, "verify WarpgroupMma, prefix 8192 + 12 (the device's slices)");
  const gqa8_case c = make_case({12, 1, {8204}, 1.0f, 1.0f, gqa8_fill::random, 0}, 102);
  const auto x = run<verify>(c, 66), y = run<verify>(c, 66);
  CHECK(x == y);
  CHECK(x == run<verify_split2>(c, 66));  // random inputs: the BlockSplit form's bits
}
