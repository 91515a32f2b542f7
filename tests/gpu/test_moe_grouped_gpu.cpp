// The grouped expert path on the GPU (sm90a cubins built by CMake) against the host oracles:
// the plan bit for bit (tiles, route order, quantized hidden), gate_up's BF16 rows within the
// expert policy of the FP64 reference and its fused act_quant bit for bit against act_quant of
// those rows, the route sum within the policy (KParts 1) or the split-K bound (KParts 2), for
// M = 17 .. 768 on every configuration; adversarial inputs (saturated E4M3, E4M3 ties, NaN hidden
// blocks, zero and NaN block scales, NaN route weights, invalid ids, an expert taking every route,
// experts no route reads holding NaN, FP16 partials past their range); bitwise repeatability;
// poisoned outputs (every element written); refused calls that launch and write nothing; gate_up
// with its weights through the LDS ring equal to the register form bit for bit; the later mid forms
// (tactics::grouped_mid_ring2, grouped_mid_dring: down's weights through its ring) equal to
// mid_ring bit for bit, and grouped_large_dring equal to large_ring; the Trim forms over 8 and 16 row
// tiles (grouped_mid_trim_rows8, _rows16) equal to mid_dring bit for bit, plan tiles of every size
// 1 .. 16 included.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "gpu/moe_gpu_stream.hpp"
#include "gpu/moe_expert_store.hpp"
#include "netra/runtime/ops/moe_grouped.hpp"
#include "oracles/moe_grouped.hpp"
#include "oracles/moe_routing.hpp"

using namespace netra;

namespace {

using testing::handle_of;
using testing::sync_stream;
using testing::test_stream;

using experts = testing::expert_store;

experts& random_experts() {
  static experts e(oracles::weight_params{});
  return e;
}
experts& saturated_experts() {  // every weight ±448; scales in [0.5, 1): FP16 partials overflow
  oracles::weight_params p;
  p.seed = 3;
  p.saturate = true;
  p.scale_lo = 0.5f;
  p.scale_hi = 1.0f;
  p.zero_scale_expert = 4;
  static experts e(p);
  return e;
}

struct call {
  int tokens;
  std::vector<std::uint16_t> hidden;
  std::vector<std::int32_t> ids;
  std::vector<float> route_weights;
};
call random_call(int tokens, std::uint64_t seed) {
  call c{tokens, oracles::hidden_rows(tokens, seed), oracles::routed_ids(tokens, seed, experts::first_unused), {}};
  oracles::xorshift r{seed + 5};
  c.route_weights.resize(c.ids.size());
  for (auto& w : c.route_weights) w = 0.02f + 0.1f * (r.uniform() + 1.0f);
  return c;
}

struct outputs {
  std::vector<std::uint8_t> plan, act;
  std::vector<float> act_scales;
  std::vector<std::uint16_t> gate_up, out;
  /// Bit for bit (the scales compared as bits: a NaN scale equals itself).
  bool operator==(const outputs& o) const {
    return plan == o.plan && act == o.act && gate_up == o.gate_up && out == o.out && act_scales.size() == o.act_scales.size() &&
           std::memcmp(act_scales.data(), o.act_scales.data(), 4 * act_scales.size()) == 0;
  }
};

/// One configuration's four launches; every output poisoned first (0xFF).
template <class Config> outputs run(const experts& x, const call& c, bool with_gate_up = true) {
  const std::size_t routes = c.ids.size();
  testing::gpu_array<std::uint16_t> hidden(c.hidden.size()), gate_up(routes * 1024), out(static_cast<std::size_t>(c.tokens) * 2048);
  testing::gpu_array<std::int32_t> ids(routes);
  testing::gpu_array<float> weights(routes), scales(routes * 4);
  testing::gpu_array<std::uint8_t> plan(Config::plan::layout::bytes), act(routes * 512), partials(Config::down::partials_bytes);
  hidden.upload(c.hidden);
  ids.upload(c.ids);
  weights.upload(c.route_weights);
  for (const auto* b : {&plan, &act, &partials}) b->fill_bytes(0xFF);
  gate_up.fill_bytes(0xFF);
  out.fill_bytes(0xFF);
  scales.fill_bytes(0xFF);
  const u64 plan_bytes = Config::plan::layout::bytes;
  moe_grouped_plan(handle_of<typename Config::plan>(), test_stream(), hidden.data(), ids.data(), plan.data(), plan_bytes, c.tokens);
  moe_grouped_gate_up(handle_of<typename Config::gate_up>(), test_stream(), plan.data(), plan_bytes, x.device(), act.data(), scales.data(),
                      with_gate_up ? gate_up.data() : nullptr, c.tokens);
  moe_grouped_down(handle_of<typename Config::down>(), test_stream(), plan.data(), plan_bytes, act.data(), scales.data(), x.device(), partials.data(),
                   Config::down::partials_bytes, c.tokens);
  moe_grouped_reduce(handle_of<typename Config::reduce>(), test_stream(), partials.data(), Config::down::partials_bytes, ids.data(), weights.data(),
                     out.data(), c.tokens);
  sync_stream();
  outputs o{plan.download(), act.download(), scales.download(), with_gate_up ? gate_up.download() : std::vector<std::uint16_t>{}, out.download()};
  o.plan.resize(plan_bytes);
  o.act.resize(routes * 512);
  o.act_scales.resize(routes * 4);
  if (with_gate_up) o.gate_up.resize(routes * 1024);
  o.out.resize(static_cast<std::size_t>(c.tokens) * 2048);
  return o;
}

bool every_16th(int n) { return n % 16 == 5; }

/// Every check of one call on one configuration.
template <class Config> void check_call(const experts& x, const call& c) {
  using layout = typename Config::plan::layout;
  INFO("tokens ", c.tokens, ", configuration ", tactics::grouped_configuration<sm90a>(c.tokens));
  const outputs o = run<Config>(x, c);
  const std::size_t routes = c.ids.size();

  // the plan, bit for bit
  const oracles::grouped_plan want = oracles::make_grouped_plan(c.ids, layout::tile);
  const oracles::grouped_plan got = oracles::read_grouped_plan(o.plan, layout::tiles_offset, layout::routes_offset, routes);
  CHECK(got.tiles == want.tiles);
  CHECK(got.routes == want.routes);
  long quant_mismatches = 0;
  for (int t = 0; t < c.tokens; ++t)
    for (int b = 0; b < 16; ++b) {
      std::uint8_t q[128];
      const float s = oracles::hidden_quant_block(c.hidden.data() + t * 2048 + 128 * b, q);
      float got_s;
      std::memcpy(&got_s, o.plan.data() + layout::sx_offset + 4 * (t * 16 + b), 4);
      quant_mismatches += std::memcmp(q, o.plan.data() + layout::qx_offset + t * 2048 + 128 * b, 128) != 0;
      quant_mismatches += std::memcmp(&s, &got_s, 4) != 0 && !(std::isnan(s) && std::isnan(got_s));
    }
  CHECK(quant_mismatches == 0);

  // gate_up within the policy; act_quant of its rows bit for bit
  const auto ref = oracles::gate_up_reference(c.tokens, c.hidden.data(), c.ids.data(), x.view, every_16th);
  const auto rep = oracles::check_policy(ref, o.gate_up, [](std::size_t i) { return every_16th(static_cast<int>(i % 1024) % 512); });
  INFO("gate_up: ", rep.describe());
  CHECK(rep.failures == 0);
  std::vector<std::uint8_t> act(routes * 512);
  std::vector<float> act_scales(routes * 4);
  oracles::act_quant(o.gate_up.data(), static_cast<std::int64_t>(routes), 1024, act.data(), act_scales.data());
  CHECK(act == o.act);
  CHECK(std::memcmp(act_scales.data(), o.act_scales.data(), 4 * act_scales.size()) == 0);
  long invalid_nonzero = 0;
  for (std::size_t r = 0; r < routes; ++r)
    if (!oracles::valid_expert(c.ids[r]))
      for (int n = 0; n < 1024; ++n) invalid_nonzero += o.gate_up[r * 1024 + n] != 0;
  CHECK(invalid_nonzero == 0);

  // the route sum
  if constexpr (Config::down::k_parts == 1) {
    const auto dref = oracles::down_reference(c.tokens, o.act.data(), o.act_scales.data(), c.ids.data(), c.route_weights.data(), x.view, every_16th);
    const auto drep = oracles::check_policy(dref, o.out, [](std::size_t i) { return every_16th(static_cast<int>(i % 2048)); });
    INFO("down: ", drep.describe());
    CHECK(drep.failures == 0);
  } else {
    const auto sref =
        oracles::split_k_down_reference(c.tokens, o.act.data(), o.act_scales.data(), c.ids.data(), c.route_weights.data(), x.view, every_16th);
    long failures = 0, overflows = 0, checked = 0;
    for (std::size_t i = 0; i < sref.size(); ++i) {
      if (!every_16th(static_cast<int>(i % 2048))) continue;
      ++checked;
      overflows += sref[i].overflow;
      if (!oracles::within_split_k_policy(sref[i], o.out[i])) ++failures;
    }
    INFO("split-K down: checked ", checked, ", overflowing ", overflows, ", failures ", failures);
    CHECK(failures == 0);
  }

  // bitwise repeatable; the optional gate_up output changes nothing else
  CHECK(run<Config>(x, c) == o);
  outputs without = run<Config>(x, c, false);
  without.gate_up = o.gate_up;
  CHECK(without == o);
}

}  // namespace

TEST_CASE("grouped experts, mid batches (17 .. 256 tokens, tiles of 16)") {
  for (int tokens : {17, 64, 128, 256}) check_call<tactics::grouped_mid<sm90a>>(random_experts(), random_call(tokens, 100 + tokens));
}

TEST_CASE("grouped experts, large batches (257 .. 768) and the M768 split-K pair") {
  check_call<tactics::grouped_large<sm90a>>(random_experts(), random_call(300, 7));
  const call m768 = random_call(768, 8);
  check_call<tactics::grouped_large<sm90a>>(random_experts(), m768);
  check_call<tactics::grouped_split_k<sm90a>>(random_experts(), m768);
}

TEST_CASE("grouped experts: gate_up's weights through the LDS ring give the register form's bits") {
  for (int tokens : {17, 128}) {
    const call c = random_call(tokens, 200 + tokens);
    check_call<tactics::grouped_mid_ring<sm90a>>(random_experts(), c);
    CHECK(run<tactics::grouped_mid_ring<sm90a>>(random_experts(), c) == run<tactics::grouped_mid<sm90a>>(random_experts(), c));
  }
  call one = random_call(64, 203);
  std::fill(one.ids.begin(), one.ids.end(), 7);
  CHECK(run<tactics::grouped_mid_ring<sm90a>>(saturated_experts(), one) == run<tactics::grouped_mid<sm90a>>(saturated_experts(), one));
  const call c = random_call(768, 204);
  check_call<tactics::grouped_large_ring<sm90a>>(random_experts(), c);
  CHECK(run<tactics::grouped_large_ring<sm90a>>(random_experts(), c) == run<tactics::grouped_large<sm90a>>(random_experts(), c));
}

TEST_CASE("grouped experts: the 2-block ring and down through its ring give mid_ring's and large_ring's bits") {
  auto mid_forms = [](const experts& x, const call& c) {
    const auto want = run<tactics::grouped_mid_ring<sm90a>>(x, c);
    CHECK(run<tactics::grouped_mid_ring2<sm90a>>(x, c) == want);
    CHECK(run<tactics::grouped_mid_dring<sm90a>>(x, c) == want);
  };
  for (int tokens : {24, 64}) mid_forms(random_experts(), random_call(tokens, 300 + tokens));
  call one = random_call(64, 303);
  std::fill(one.ids.begin(), one.ids.end(), 7);
  mid_forms(saturated_experts(), one);
  check_call<tactics::grouped_mid_dring<sm90a>>(random_experts(), random_call(128, 304));
  const call c = random_call(768, 404);
  CHECK(run<tactics::grouped_large_dring<sm90a>>(random_experts(), c) == run<tactics::grouped_large_ring<sm90a>>(random_experts(), c));
  check_call<tactics::grouped_large_dring<sm90a>>(random_experts(), random_call(300, 405));
}

template <class Config> void same_bits(const experts& x, const call& c, const outputs& want) { CHECK(run<Config>(x, c) == want); }
template <class... Configs> void same_bits_as_mid_dring(const experts& x, const call& c) {
  const outputs want = run<tactics::grouped_mid_dring<sm90a>>(x, c);
  (same_bits<Configs>(x, c, want), ...);
}

TEST_CASE("grouped experts: the Trim forms give mid_dring's bits, plan tiles of every size 1 .. 16") {
  call sizes = random_call(64, 501);  // expert e takes e % 16 + 1 routes in a row; two invalid ids among them
  for (std::size_t r = 0, e = 0, left = 1; r < sizes.ids.size(); ++r) {
    sizes.ids[r] = static_cast<std::int32_t>(e % experts::first_unused);
    if (--left == 0) left = ++e % 16 + 1;
  }
  sizes.ids[9] = -1;
  sizes.ids[100] = 257;
  same_bits_as_mid_dring<tactics::grouped_mid_trim_rows8<sm90a>, tactics::grouped_mid_trim_rows16<sm90a>>(random_experts(), sizes);
  same_bits_as_mid_dring<tactics::grouped_mid_trim_rows8<sm90a>, tactics::grouped_mid_trim_rows16<sm90a>>(saturated_experts(), sizes);
  check_call<tactics::grouped_mid_trim_rows8<sm90a>>(random_experts(), sizes);
}

TEST_CASE("grouped experts: the Trim forms give mid_dring's bits at 17 .. 256 tokens and one expert") {
  for (int tokens : {17, 64, 96, 128, 256})
    same_bits_as_mid_dring<tactics::grouped_mid_trim_rows8<sm90a>, tactics::grouped_mid_trim_rows16<sm90a>>(random_experts(), random_call(tokens, 500 + tokens));
  call one = random_call(64, 503);
  std::fill(one.ids.begin(), one.ids.end(), 7);
  same_bits_as_mid_dring<tactics::grouped_mid_trim_rows8<sm90a>, tactics::grouped_mid_trim_rows16<sm90a>>(saturated_experts(), one);
  check_call<tactics::grouped_mid_trim_rows8<sm90a>>(random_experts(), random_call(128, 504));
}

TEST_CASE("grouped experts, adversarial inputs") {
  call c = random_call(64, 21);
  c.hidden = oracles::tie_hidden_rows(64, 21);                     // E4M3 ties of the hidden quantization
  c.hidden[3 * 2048 + 5 * 128 + 7] = 0x7FC1;                        // a NaN block: token 3 is NaN everywhere
  c.hidden[10 * 2048 + 2 * 128] = 0xFF80;                           // -Inf: token 10 likewise
  for (int b = 0; b < 128; ++b) c.hidden[12 * 2048 + 9 * 128 + b] = 0;  // an all-zero block
  c.ids[4] = -1;
  c.ids[40] = 257;
  c.ids[41] = 100000;
  c.ids[77] = 9;                     // the expert with NaN block scales
  c.ids[78] = 4;                     // zero block scales (saturated set)
  c.ids[79] = c.ids[80] = c.ids[81] = 5;  // duplicates inside a token
  c.route_weights[100] = std::nanf("");
  c.route_weights[101] = 0.0f;
  check_call<tactics::grouped_mid<sm90a>>(random_experts(), c);
  check_call<tactics::grouped_mid<sm90a>>(saturated_experts(), c);
  c.tokens = 300;
  c.hidden = oracles::tie_hidden_rows(300, 22);
  c.ids = oracles::routed_ids(300, 22, experts::first_unused);
  c.route_weights.resize(c.ids.size(), 0.125f);
  check_call<tactics::grouped_large<sm90a>>(saturated_experts(), c);
}

TEST_CASE("grouped experts: one expert takes every route; empty experts") {
  call c = random_call(64, 31);
  std::fill(c.ids.begin(), c.ids.end(), 7);  // 576 routes, 36 tiles of one expert
  check_call<tactics::grouped_mid<sm90a>>(random_experts(), c);
  call d = random_call(768, 32);
  std::fill(d.ids.begin(), d.ids.end(), 7);
  check_call<tactics::grouped_split_k<sm90a>>(random_experts(), d);
  call e = random_call(40, 33);
  for (std::size_t r = 0; r < e.ids.size(); ++r) e.ids[r] = (r % 9 == 8) ? 256 : static_cast<std::int32_t>(r % 3);  // three experts
  check_call<tactics::grouped_mid<sm90a>>(random_experts(), e);
}

TEST_CASE("split-K: FP16 partials past their range are infinite, the rest within the bound") {
  call c = random_call(768, 41);
  check_call<tactics::grouped_split_k<sm90a>>(saturated_experts(), c);
}

TEST_CASE("grouped experts: refused calls launch nothing and write nothing") {
  const call c = random_call(16, 51);
  using config = tactics::grouped_mid<sm90a>;
  testing::gpu_array<std::uint8_t> plan(config::plan::layout::bytes), act(16 * 9 * 512);
  testing::gpu_array<float> scales(16 * 9 * 4);
  testing::gpu_array<std::uint16_t> hidden(c.hidden.size());
  testing::gpu_array<std::int32_t> ids(c.ids.size());
  hidden.upload(c.hidden);
  ids.upload(c.ids);
  plan.fill_bytes(0xA5);
  act.fill_bytes(0xA5);
  CHECK_THROWS(moe_grouped_plan(handle_of<config::plan>(), test_stream(), hidden.data(), ids.data(), plan.data(), config::plan::layout::bytes - 16, 16));
  CHECK_THROWS(moe_grouped_gate_up(handle_of<config::gate_up>(), test_stream(), plan.data(), config::plan::layout::bytes, random_experts().device(),
                                   act.data(), scales.data(), nullptr, 16));
  sync_stream();
  for (auto v : plan.download()) REQUIRE(v == 0xA5);
  for (auto v : act.download()) REQUIRE(v == 0xA5);
  moe_grouped_experts<sm90a> block(current_cuda_device(), [](const std::string& name) {
    return read_file_bytes(std::string(NETRA_CODE_OBJECT_DIR) + "/" + name + ".cubin");
  });
  moe_grouped_args a;
  a.tokens = 16;
  CHECK_THROWS(block.run(test_stream(), a, moe_grouped_experts<sm90a>::plan_bytes, moe_grouped_experts<sm90a>::partials_bytes));
  a.tokens = 769;
  CHECK_THROWS(block.run(test_stream(), a, moe_grouped_experts<sm90a>::plan_bytes, moe_grouped_experts<sm90a>::partials_bytes));
}
