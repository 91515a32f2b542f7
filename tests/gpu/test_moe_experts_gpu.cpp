// The decode expert kernels on the GPU (sm90a cubins built by CMake) against the FP64 references
// of tests/oracles/moe_experts.hpp under the contracts' comparison policy, with poisoned outputs
// (every element must be written) and poisoned weights (the experts a call must not read hold
// E4M3 NaN, so reading one shows up as NaN): gate_up and down for M = 1 .. 16, adversarial
// inputs, the bit-exact fused quantizations, run-to-run and batch invariance, the gate_up ->
// act_quant -> down chain with programmatic dependent launch, and refused calls. Both weight
// stagings run: the LDS staging (the sm90a default) and the register staging (the gfx950
// default, contract field Staging), which must agree bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "gpu/moe_gpu_stream.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/moe_act_quant.hpp"
#include "netra/runtime/ops/moe_experts.hpp"
#include "oracles/moe_experts.hpp"
#include "oracles/moe_routing.hpp"

using namespace netra;

namespace {

using gate_up_c = contracts::moe_expert_gate_up_decode<sm90a>;
using gate_up_units_c = contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::unit_list>;
using gate_up_resident_c = contracts::moe_expert_gate_up_units_decode<sm90a>;  // Schedule resident
using down_c = contracts::moe_expert_down_decode<sm90a>;
using down_fused_c = contracts::moe_expert_down_fused_decode<sm90a>;
using act_quant_c = contracts::moe_act_quant_batch<sm90a>;
// The gfx950 staging (weights in the lanes' registers, contract field Staging) on the H200: every
// gate_up and down test below also runs these and requires the LDS staging's bits.
using gate_up_registers_c = contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::route_scan, staging::registers>;
using gate_up_units_registers_c = contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::unit_list, staging::registers>;
using gate_up_resident_registers_c = contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::resident, staging::registers>;
template <class Down> using down_registers = contracts::moe_expert_down<sm90a, Down::max_tokens, Down::input, staging::registers>;
static_assert(gate_up_c::weights_in_lds && down_c::weights_in_lds && !gate_up_registers_c::weights_in_lds && !down_registers<down_c>::weights_in_lds);

using testing::handle_of;
using testing::sync_stream;
using testing::test_stream;


template <class T> void upload_at(T* device, const T* host, std::size_t count) {
  testing::drv().check(testing::drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(device), host, count * sizeof(T)), "cuMemcpyHtoD");
  testing::gpu_array<T>::settle();
}

/// The 257 experts on the device. Experts a test does not route to hold E4M3 NaN (0x7F) and NaN
/// scales, so a kernel that reads one produces NaN where the reference is finite. `view` reads
/// the host copies of the uploaded experts (the oracles' inner loops stay cheap).
struct expert_store {
  testing::gpu_array<std::uint8_t> w13{257ull * 1024 * 2048}, w2{257ull * 2048 * 512};
  testing::gpu_array<float> s13{257 * 8 * 16}, s2{257 * 16 * 4};
  oracles::weight_params params{};
  std::vector<std::vector<std::uint8_t>> h13 = std::vector<std::vector<std::uint8_t>>(257), h2 = std::vector<std::vector<std::uint8_t>>(257);
  std::vector<float> hs13 = std::vector<float>(257 * 128), hs2 = std::vector<float>(257 * 64);
  oracles::expert_weight_view view{[this](int e, int n, int k) { return h13[static_cast<std::size_t>(e)][static_cast<std::size_t>(n) * 2048 + k]; },
                                   [this](int e, int n, int k) { return h2[static_cast<std::size_t>(e)][static_cast<std::size_t>(n) * 512 + k]; },
                                   [this](int e, int i, int j) { return hs13[static_cast<std::size_t>(e) * 128 + i * 16 + j]; },
                                   [this](int e, int i, int j) { return hs2[static_cast<std::size_t>(e) * 64 + i * 4 + j]; }};
  std::set<int> present;
  bool poisoned = false;

  expert_store() = default;
  expert_store(const expert_store&) = delete;
  moe_expert_weights device() const { return {w13.data(), s13.data(), w2.data(), s2.data()}; }

  /// Makes exactly the experts in `ids` (valid ones) hold weights drawn with `p`.
  void use(const oracles::weight_params& p, const std::vector<std::int32_t>& ids) {
    if (!poisoned || !(p == params)) {
      w13.fill_bytes(0x7F);
      w2.fill_bytes(0x7F);
      s13.fill_bytes(0xFF);
      s2.fill_bytes(0xFF);
      present.clear();
      params = p;
      poisoned = true;
    }
    const auto gen = oracles::hashed_weights(p);
    for (std::int32_t e : ids) {
      if (!oracles::valid_expert(e) || present.count(e)) continue;
      auto& a = h13[static_cast<std::size_t>(e)];
      auto& b = h2[static_cast<std::size_t>(e)];
      a.resize(1024ull * 2048);
      b.resize(2048ull * 512);
      for (int n = 0; n < 1024; ++n)
        for (int k = 0; k < 2048; ++k) a[static_cast<std::size_t>(n) * 2048 + k] = gen.w13(e, n, k);
      for (int n = 0; n < 2048; ++n)
        for (int k = 0; k < 512; ++k) b[static_cast<std::size_t>(n) * 512 + k] = gen.w2(e, n, k);
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 16; ++j) hs13[static_cast<std::size_t>(e) * 128 + i * 16 + j] = gen.s13(e, i, j);
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 4; ++j) hs2[static_cast<std::size_t>(e) * 64 + i * 4 + j] = gen.s2(e, i, j);
      upload_at(w13.data() + static_cast<std::size_t>(e) * a.size(), a.data(), a.size());
      upload_at(w2.data() + static_cast<std::size_t>(e) * b.size(), b.data(), b.size());
      upload_at(s13.data() + e * 128, hs13.data() + e * 128, 128);
      upload_at(s2.data() + e * 64, hs2.data() + e * 64, 64);
      present.insert(e);
    }
  }
};

expert_store& store() {
  static expert_store s;
  return s;
}

/// gate_up on the device with every schedule and both stagings: out BF16 [9M, 1024], poisoned
/// first (0xFFFF: a NaN no kernel writes). The unit-list and resident schedules and the
/// register staging must give the route scan's bits (a row does not depend on which workgroup
/// computes it, nor on where its weights waited); the list the units kernel left in the
/// workspace must be the oracle's; the resident grid runs twice (its claims start from the
/// counters the previous call left) and must leave both counters zero. Returns the route scan's
/// output (LDS staging).
std::vector<std::uint16_t> run_gate_up(int tokens, const std::vector<std::uint16_t>& hidden, const std::vector<std::int32_t>& ids) {
  testing::gpu_array<std::uint16_t> x(hidden.size()), out(static_cast<std::size_t>(tokens) * 9 * 1024);
  testing::gpu_array<std::int32_t> id(ids.size());
  x.upload(hidden);
  id.upload(ids);
  auto run = [&](const auto& h) {
    out.fill_bytes(0xFF);
    moe_expert_gate_up(h, test_stream(), x.data(), id.data(), store().device(), out.data(), tokens);
    sync_stream();
    return out.download();
  };
  auto workspace = [](const auto& h) {
    std::vector<std::uint32_t> words(h.workspace_bytes() / 4);
    testing::drv().check(testing::drv().cuMemcpyDtoH(words.data(), reinterpret_cast<CUdeviceptr>(h.workspace()), h.workspace_bytes()),
                         "cuMemcpyDtoH");
    return words;
  };
  auto differ = [](const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b) {
    long n = 0;
    for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
    return n;
  };
  INFO("tokens ", tokens);
  const auto scanned = run(handle_of<gate_up_c>());
  CHECK(differ(run(handle_of<gate_up_registers_c>()), scanned) == 0);
  auto check_units = [&](const auto& units) {
    CHECK(differ(run(units), scanned) == 0);
    const auto words = workspace(units);
    CHECK(words[0] == oracles::unit_list(ids).size());
    CHECK(oracles::read_unit_list(words, ids.size()) == oracles::unit_list(ids));
  };
  check_units(handle_of<gate_up_units_c>());
  check_units(handle_of<gate_up_units_registers_c>());
  using list = moe::expert_unit_list;
  auto check_resident = [&](const auto& resident) {
    for (int call = 0; call < 2; ++call) {
      INFO("resident call ", call);
      CHECK(differ(run(resident), scanned) == 0);
      const auto counters = workspace(resident);
      CHECK(counters[list::claims_word] == 0);
      CHECK(counters[list::finished_word] == 0);
    }
  };
  check_resident(handle_of<gate_up_resident_c>());
  check_resident(handle_of<gate_up_resident_registers_c>());
  return scanned;
}

struct down_inputs {
  int tokens;
  std::vector<std::int32_t> ids;
  std::vector<float> route_weights;
  std::vector<std::uint16_t> gate_up_out;  // BF16 [9M, 1024]
  std::vector<std::uint8_t> act;           // act_quant oracle of gate_up_out
  std::vector<float> act_scales;
};

down_inputs make_down_inputs(int tokens, std::uint64_t seed, std::vector<std::int32_t> ids) {
  down_inputs c{tokens, std::move(ids), {}, {}, {}, {}};
  oracles::xorshift r{seed * 31 + 7};
  c.route_weights.resize(static_cast<std::size_t>(tokens) * 9);
  for (auto& v : c.route_weights) v = 0.05f + 0.1f * (r.uniform() + 1.0f);
  c.gate_up_out.resize(static_cast<std::size_t>(tokens) * 9 * 1024);
  for (auto& v : c.gate_up_out) v = bf16_from_f32_reference((r.uniform() + r.uniform()) * 2.0f);
  c.act.resize(static_cast<std::size_t>(tokens) * 9 * 512);
  c.act_scales.resize(static_cast<std::size_t>(tokens) * 9 * 4);
  oracles::act_quant(c.gate_up_out.data(), tokens * 9, 1024, c.act.data(), c.act_scales.data());
  return c;
}

/// down on the device: out BF16 [M, 2048], poisoned first.
template <class Contract> std::vector<std::uint16_t> run_down_staged(const down_inputs& c) {
  testing::gpu_array<std::uint8_t> act(c.act.size());
  testing::gpu_array<std::uint16_t> gu(c.gate_up_out.size()), out(static_cast<std::size_t>(c.tokens) * 2048);
  testing::gpu_array<float> scales(c.act_scales.size()), weights(c.route_weights.size());
  testing::gpu_array<std::int32_t> id(c.ids.size());
  act.upload(c.act);
  gu.upload(c.gate_up_out);
  scales.upload(c.act_scales);
  weights.upload(c.route_weights);
  id.upload(c.ids);
  out.fill_bytes(0xFF);
  const void* in = Contract::fused_act_quant ? static_cast<const void*>(gu.data()) : static_cast<const void*>(act.data());
  moe_expert_down(handle_of<Contract>(), test_stream(), in, scales.data(), id.data(), weights.data(), store().device(), out.data(), c.tokens);
  sync_stream();
  return out.download();
}
/// run_down_staged with Contract and with its weights in registers (the gfx950 staging), which
/// must give the same bits. Returns Contract's.
template <class Contract> std::vector<std::uint16_t> run_down(const down_inputs& c) {
  const auto lds = run_down_staged<Contract>(c);
  CHECK(run_down_staged<down_registers<Contract>>(c) == lds);
  return lds;
}

void require_policy(const oracles::policy_report& rep, long expect_checked) {
  INFO(rep.describe());
  CHECK(rep.checked == expect_checked);
  CHECK(rep.failures == 0);
}

}  // namespace

TEST_CASE("gate_up: within the policy for M = 1, 2, 5, 16; every row written; unused experts never read") {
  for (int tokens : {1, 2, 5, 16}) {
    const auto ids = oracles::routed_ids(tokens, 100 + tokens, tokens == 16 ? 64 : 256);
    const auto hidden = oracles::hidden_rows(tokens, 100 + tokens);
    store().use({1}, ids);
    const auto got = run_gate_up(tokens, hidden, ids);
    const auto ref = oracles::gate_up_reference(tokens, hidden.data(), ids.data(), store().view);
    INFO("tokens ", tokens);
    require_policy(oracles::check_policy(ref, got), static_cast<long>(tokens) * 9 * 1024);
  }
}

TEST_CASE("gate_up: adversarial hidden rows, route metadata and weights") {
  const int tokens = 4;
  auto ids = oracles::routed_ids(tokens, 7, 16);
  ids[4] = 300;            // invalid ids: rows of +0.0
  ids[10] = -1;
  ids[12] = ids[11];       // a duplicate expert inside token 1
  ids[3 * 9 + 8] = 255;    // token 3's "shared" slot holds a routed expert
  auto hidden = oracles::hidden_rows(tokens, 7);
  hidden[0 * 2048 + 5] = 0x7FC0;                             // token 0: NaN
  for (int k = 256; k < 384; ++k) hidden[1 * 2048 + k] = 0;  // token 1: an all-zero block
  hidden[1 * 2048 + 1000] = bf16_from_f32_reference(1e30f);  // token 1: a huge block
  hidden[2 * 2048 + 2047] = 0xFF80;                          // token 2: -Inf
  for (int k = 0; k < 128; ++k) hidden[3 * 2048 + k] = 0x0001;  // token 3: a block of BF16 subnormals (r overflows: zero block)
  oracles::weight_params p{3};
  p.zero_scale_expert = ids[9 + 5];
  store().use(p, ids);
  const auto got = run_gate_up(tokens, hidden, ids);
  const auto ref = oracles::gate_up_reference(tokens, hidden.data(), ids.data(), store().view);
  require_policy(oracles::check_policy(ref, got), tokens * 9 * 1024L);
  long nan = 0, zero_rows = 0;
  for (int r = 0; r < tokens * 9; ++r) {
    const bool poisoned_token = r / 9 == 0 || r / 9 == 2;
    for (int n = 0; n < 1024; ++n) {
      const std::uint16_t v = got[static_cast<std::size_t>(r) * 1024 + n];
      if (!oracles::valid_expert(ids[r])) {
        CHECK(v == 0);
        ++zero_rows;
      } else if (poisoned_token) {
        CHECK(v == 0x7FFF);
        ++nan;
      }
    }
  }
  CHECK(nan == (8 + 9) * 1024);  // token 0 has one invalid route, token 2 none
  CHECK(zero_rows == 2 * 1024);
  oracles::weight_params sat{4};
  sat.saturate = true;
  sat.scale_lo = 1.0f, sat.scale_hi = 2.0f;
  const auto ids2 = oracles::routed_ids(2, 8);
  const auto h2 = oracles::hidden_rows(2, 8, 300.0f);
  store().use(sat, ids2);
  const auto got2 = run_gate_up(2, h2, ids2);
  require_policy(oracles::check_policy(oracles::gate_up_reference(2, h2.data(), ids2.data(), store().view), got2), 2 * 9 * 1024L);
}

TEST_CASE("gate_up: more than 16 routes of one expert (duplicate ids): every route within the policy, unused experts never read") {
  const int tokens = 5;
  std::vector<std::int32_t> ids(tokens * 9, 42);  // 45 routes of expert 42: workgroups at its occurrences 0, 16, 32
  ids[7] = 256;
  ids[20] = 300;  // an invalid id in the middle
  const auto hidden = oracles::hidden_rows(tokens, 13);
  store().use({13}, ids);
  const auto got = run_gate_up(tokens, hidden, ids);
  require_policy(oracles::check_policy(oracles::gate_up_reference(tokens, hidden.data(), ids.data(), store().view), got), tokens * 9 * 1024L);
  for (int n = 0; n < 1024; ++n) CHECK(got[20 * 1024 + n] == 0);
}

TEST_CASE("gate_up: the fused hidden quantization is bit-exact (one-hot W13 rows), E4M3 ties included") {
  // Row n of every expert reads hidden value k = 2n (+1) with weight 1.0 and scale 1: out = sx * qx[k].
  // Built directly (not hashed): expert 256 and the routed experts of token 0. Inputs: random rows,
  // and rows whose every block sits on E4M3 ties (oracles::tie_hidden_rows: a reciprocal-then-
  // multiply r, as torch's `448.0 / amax`, rounds every tie the other way).
  const auto ids = oracles::routed_ids(1, 55);
  struct probe {
    std::vector<std::uint16_t> hidden;
    int odd;
  };
  const probe probes[] = {{oracles::hidden_rows(1, 55, 3.0f), 0}, {oracles::tie_hidden_rows(1, 55), 0}, {oracles::tie_hidden_rows(1, 56), 1}};
  for (const probe& pr : probes) {
    auto& s = store();
    s.use({55}, ids);  // poison + present set
    std::vector<std::uint8_t> onehot(1024ull * 2048, 0);
    for (int n = 0; n < 1024; ++n) onehot[static_cast<std::size_t>(n) * 2048 + 2 * n + pr.odd] = 0x38;
    const std::vector<float> ones(128, 1.0f);
    for (int r = 0; r < 9; ++r) {
      upload_at(s.w13.data() + static_cast<std::size_t>(ids[r]) * onehot.size(), onehot.data(), onehot.size());
      upload_at(s.s13.data() + ids[r] * 128, ones.data(), ones.size());
      s.present.erase(ids[r]);  // the host copies no longer describe these experts
    }
    s.poisoned = false;  // the store no longer matches its params
    const auto got = run_gate_up(1, pr.hidden, ids);
    std::uint8_t q[128];
    long mismatches = 0;
    for (int r = 0; r < 9; ++r)
      for (int n = 0; n < 1024; ++n) {
        const int k = 2 * n + pr.odd;
        const float scale = oracles::hidden_quant_block(pr.hidden.data() + 128 * (k / 128), q);
        // compared as values: +0 and -0 are the same output here (an fma from +0 cannot give -0)
        mismatches += f32_from_bf16(got[static_cast<std::size_t>(r) * 1024 + n]) !=
                      f32_from_bf16(bf16_from_f32_reference(f32_from_e4m3(q[k % 128]) * scale));
      }
    INFO("probe odd ", pr.odd);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("gate_up: run-to-run identical and batch-invariant (a token's rows do not depend on the batch)") {
  const int tokens = 6;
  const auto ids = oracles::routed_ids(tokens, 77, 12);  // heavy expert sharing across tokens
  const auto hidden = oracles::hidden_rows(tokens, 77);
  store().use({6}, ids);
  const auto a = run_gate_up(tokens, hidden, ids);
  const auto b = run_gate_up(tokens, hidden, ids);
  CHECK(a == b);
  for (int t = 0; t < tokens; ++t) {
    const std::vector<std::int32_t> one(ids.begin() + 9 * t, ids.begin() + 9 * t + 9);
    const std::vector<std::uint16_t> h(hidden.begin() + 2048 * t, hidden.begin() + 2048 * (t + 1));
    const auto alone = run_gate_up(1, h, one);
    CHECK(std::equal(alone.begin(), alone.end(), a.begin() + 9 * 1024 * t));
  }
}

TEST_CASE("down (act_quant's E4M3 input): within the policy for M = 1, 3, 16") {
  for (int tokens : {1, 3, 16}) {
    const auto c = make_down_inputs(tokens, 200 + tokens, oracles::routed_ids(tokens, 200 + tokens, tokens == 16 ? 48 : 256));
    store().use({2}, c.ids);
    const auto got = run_down<down_c>(c);
    const auto ref = oracles::down_reference(tokens, c.act.data(), c.act_scales.data(), c.ids.data(), c.route_weights.data(), store().view);
    INFO("tokens ", tokens);
    require_policy(oracles::check_policy(ref, got), tokens * 2048L);
  }
}

TEST_CASE("down with act_quant fused: bitwise equal to the E4M3 input, M = 1 .. 4") {
  for (int tokens = 1; tokens <= 4; ++tokens) {
    auto c = make_down_inputs(tokens, 300 + tokens, oracles::routed_ids(tokens, 300 + tokens, 32));
    c.gate_up_out[static_cast<std::size_t>(tokens * 9 - 1) * 1024 + 600] = 0x7F80;  // last route: an Inf up value
    oracles::act_quant(c.gate_up_out.data(), tokens * 9, 1024, c.act.data(), c.act_scales.data());
    store().use({3}, c.ids);
    const auto a = run_down<down_c>(c);
    const auto b = run_down<down_fused_c>(c);
    INFO("tokens ", tokens);
    CHECK(a == b);
    const auto ref = oracles::down_reference(tokens, c.act.data(), c.act_scales.data(), c.ids.data(), c.route_weights.data(), store().view);
    require_policy(oracles::check_policy(ref, b), tokens * 2048L);
  }
}

TEST_CASE("down: more than 16 routes of one expert (duplicate ids), both inputs") {
  const int tokens = 4;
  std::vector<std::int32_t> ids(tokens * 9, 42);  // 36 routes of expert 42: units at its occurrences 0, 16, 32
  ids[17] = 256;
  ids[30] = -3;
  const auto c = make_down_inputs(tokens, 17, ids);
  store().use({17}, c.ids);
  const auto a = run_down<down_c>(c);
  const auto b = run_down<down_fused_c>(c);
  CHECK(a == b);
  const auto ref = oracles::down_reference(tokens, c.act.data(), c.act_scales.data(), c.ids.data(), c.route_weights.data(), store().view);
  require_policy(oracles::check_policy(ref, a), tokens * 2048L);
}

TEST_CASE("down: adversarial route metadata and weights") {
  auto ids = oracles::routed_ids(5, 9, 20);
  ids[3] = 257;         // invalid: y = 0
  ids[20] = ids[19];    // a duplicate expert inside token 2
  ids[30] = -7;
  auto c = make_down_inputs(5, 9, ids);
  c.route_weights[4 * 9 + 2] = 0.0f;
  c.route_weights[3 * 9 + 1] = oracles::nan_f32();  // token 3: NaN everywhere
  c.gate_up_out[static_cast<std::size_t>(1 * 9 + 4) * 1024 + 3] = 0x7FC0;  // token 1, route 13: NaN group
  oracles::act_quant(c.gate_up_out.data(), 45, 1024, c.act.data(), c.act_scales.data());
  oracles::weight_params p{5};
  p.zero_scale_expert = ids[2 * 9 + 6];
  store().use(p, c.ids);
  const auto got = run_down<down_c>(c);
  const auto ref = oracles::down_reference(5, c.act.data(), c.act_scales.data(), c.ids.data(), c.route_weights.data(), store().view);
  require_policy(oracles::check_policy(ref, got), 5 * 2048L);
  for (int n = 0; n < 2048; ++n) {
    CHECK(got[3 * 2048 + n] == 0x7FFF);
    CHECK(got[1 * 2048 + n] == 0x7FFF);
  }
}

TEST_CASE("the decode chain on one stream (programmatic dependent launch): gate_up -> act_quant -> down and gate_up -> down (fused)") {
  for (int tokens : {1, 4}) {
    const auto ids = oracles::routed_ids(tokens, 400 + tokens);
    const auto hidden = oracles::hidden_rows(tokens, 400 + tokens);
    std::vector<float> rw(static_cast<std::size_t>(tokens) * 9);
    oracles::xorshift r{static_cast<std::uint64_t>(tokens)};
    for (auto& v : rw) v = 0.1f + 0.05f * r.uniform();
    store().use({8}, ids);
    testing::gpu_array<std::uint16_t> x(hidden.size()), gu(static_cast<std::size_t>(tokens) * 9 * 1024), out(tokens * 2048ull),
        out_fused(tokens * 2048ull);
    testing::gpu_array<std::int32_t> id(ids.size());
    testing::gpu_array<float> weights(rw.size()), scales(static_cast<std::size_t>(tokens) * 9 * 4);
    testing::gpu_array<std::uint8_t> act(static_cast<std::size_t>(tokens) * 9 * 512);
    x.upload(hidden);
    id.upload(ids);
    weights.upload(rw);
    gu.fill_bytes(0xFF);
    out.fill_bytes(0xFF);
    out_fused.fill_bytes(0xFF);
    const auto w = store().device();
    for (int rep = 0; rep < 3; ++rep) {  // back to back: each call's prologue overlaps the previous kernel
      moe_expert_gate_up(handle_of<gate_up_c>(), test_stream(), x.data(), id.data(), w, gu.data(), tokens);
      moe_act_quant(handle_of<act_quant_c>(), test_stream(), gu.data(), tokens * 9, 1024, 1024, act.data(), scales.data());
      moe_expert_down(handle_of<down_c>(), test_stream(), act.data(), scales.data(), id.data(), weights.data(), w, out.data(), tokens);
      moe_expert_gate_up(handle_of<gate_up_c>(), test_stream(), x.data(), id.data(), w, gu.data(), tokens);
      moe_expert_down(handle_of<down_fused_c>(), test_stream(), gu.data(), nullptr, id.data(), weights.data(), w, out_fused.data(), tokens);
    }
    sync_stream();
    const auto g = gu.download();
    const auto a = out.download();
    const auto b = out_fused.download();
    CHECK(a == b);
    std::vector<std::uint8_t> q(static_cast<std::size_t>(tokens) * 9 * 512);
    std::vector<float> qs(static_cast<std::size_t>(tokens) * 9 * 4);
    oracles::act_quant(g.data(), tokens * 9, 1024, q.data(), qs.data());
    const auto ref = oracles::down_reference(tokens, q.data(), qs.data(), ids.data(), rw.data(), store().view);
    INFO("tokens ", tokens);
    require_policy(oracles::check_policy(ref, a), tokens * 2048L);
    require_policy(oracles::check_policy(oracles::gate_up_reference(tokens, hidden.data(), ids.data(), store().view), g), tokens * 9 * 1024L);
  }
}

TEST_CASE("refused calls name the field and write nothing") {
  testing::gpu_array<std::uint16_t> x(2 * 2048), out(2 * 9 * 1024);
  testing::gpu_array<std::int32_t> id(18);
  testing::gpu_array<float> rw(18);
  out.fill_bytes(0xAB);
  const auto w = store().device();
  auto refused = [&](auto call, const char* field) {
    try {
      call();
      FAIL("the call was not refused");
    } catch (const error& e) {
      CHECK(e.code() == status::invalid_argument);
      CHECK(std::string(e.what()).find(field) != std::string::npos);
    }
  };
  const auto& gh = handle_of<gate_up_c>();
  refused([&] { moe_expert_gate_up(gh, test_stream(), x.data(), id.data(), w, out.data(), 0); }, "'tokens'");
  refused([&] { moe_expert_gate_up(gh, test_stream(), x.data(), id.data(), w, out.data(), 17); }, "'tokens'");
  refused([&] { moe_expert_gate_up(gh, test_stream(), x.data() + 1, id.data(), w, out.data(), 1); }, "'hidden'");
  refused([&] { moe_expert_gate_up(gh, test_stream(), x.data(), id.data(), w, out.data() + 4, 1); }, "'out'");
  moe_expert_weights no_w13 = w;
  no_w13.w13 = nullptr;
  refused([&] { moe_expert_gate_up(gh, test_stream(), x.data(), id.data(), no_w13, out.data(), 1); }, "'w13'");
  const auto& fh = handle_of<down_fused_c>();
  refused([&] { moe_expert_down(fh, test_stream(), x.data(), nullptr, id.data(), rw.data(), w, out.data(), 5); }, "'tokens'");
  const auto& dh = handle_of<down_c>();
  refused([&] { moe_expert_down(dh, test_stream(), x.data(), nullptr, id.data(), rw.data(), w, out.data(), 1); }, "'act_scales'");
  refused([&] { moe_expert_down(dh, test_stream(), x.data(), rw.data(), id.data(), nullptr, w, out.data(), 1); }, "'route_weights'");
  sync_stream();
  for (auto v : out.download()) CHECK(v == 0xABAB);
}
