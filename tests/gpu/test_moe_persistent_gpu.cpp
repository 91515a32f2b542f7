// The persistent decode experts (contracts::moe_expert_persistent, sm90a) through their own
// handle on adversarial route metadata — invalid ids (rows of +0.0, y = +0.0), one expert on more
// than 16 routes (several units), no valid id at all, a NaN route weight, many duplicates at 16
// tokens — against the chain of the same contracts (gate_up route scan, act_quant, down) bit for
// bit in every written tensor, twice per case back to back (the kernel's counters are zero again
// after every call, or the second call would skip items and leave the poison); and a refused call
// (a short workspace) that launches nothing and writes nothing.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "gpu/moe_expert_store.hpp"
#include "gpu/moe_gpu_stream.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/moe_act_quant.hpp"
#include "netra/runtime/ops/moe_experts.hpp"
#include "oracles/moe_experts.hpp"

using namespace netra;

namespace {

using testing::handle_of;
using testing::sync_stream;
using testing::test_stream;
using P = contracts::moe_expert_persistent_decode<sm90a>;
using gate_up_c = contracts::moe_expert_gate_up_decode<sm90a>;
using act_quant_c = contracts::moe_act_quant_batch<sm90a>;
using down_c = contracts::moe_expert_down_decode<sm90a>;

testing::expert_store& store() {
  static testing::expert_store e(oracles::weight_params{}, 256);
  return e;
}

struct buffers {
  int tokens;
  testing::gpu_array<std::uint16_t> x, gu, out;
  testing::gpu_array<std::int32_t> id;
  testing::gpu_array<float> rw, scales;
  testing::gpu_array<std::uint8_t> act;
  buffers(int m, const std::vector<std::int32_t>& ids, const std::vector<float>& weights)
      : tokens(m), x(m * 2048ull), gu(m * 9 * 1024ull), out(m * 2048ull), id(m * 9ull), rw(m * 9ull), scales(m * 36ull), act(m * 9 * 512ull) {
    x.upload(oracles::hidden_rows(m, 70 + m));
    id.upload(ids);
    rw.upload(weights);
  }
  void poison() const {
    gu.fill_bytes(0xFF);
    out.fill_bytes(0xFF);
    scales.fill_bytes(0xFF);
    act.fill_bytes(0xFF);
  }
  moe_persistent_signature signature(u64 workspace_bytes) const {
    const auto& h = handle_of<P>();
    const device_ref on = device_of(h.device());
    const moe_expert_weights w = store().device();
    const i64 m = tokens;
    moe_persistent_signature s{sm90a::id,
                               on,
                               strided_tensor(x.data(), dtype::bf16, on, {m, 2048}),
                               strided_tensor(id.data(), dtype::i32, on, {m, 9}),
                               strided_tensor(rw.data(), dtype::f32, on, {m, 9}),
                               strided_tensor(w.w13, dtype::e4m3, on, {257, 1024, 2048}),
                               strided_tensor(w.s13, dtype::f32, on, {257, 8, 16}),
                               strided_tensor(w.w2, dtype::e4m3, on, {257, 2048, 512}),
                               strided_tensor(w.s2, dtype::f32, on, {257, 16, 4}),
                               strided_tensor(gu.data(), dtype::bf16, on, {9 * m, 1024}),
                               strided_tensor(act.data(), dtype::e4m3, on, {9 * m, 512}),
                               strided_tensor(scales.data(), dtype::f32, on, {9 * m, 4}),
                               strided_tensor(out.data(), dtype::bf16, on, {m, 2048})};
    s.workspace = h.workspace();
    s.workspace_bytes = workspace_bytes;
    return s;
  }
  void persistent() const {
    const auto s = signature(handle_of<P>().workspace_bytes());
    require_admitted<P>("test persistent", s);
    launch_moe_expert_persistent(handle_of<P>(), test_stream(), s);
  }
  void chain() const {
    const auto w = store().device();
    moe_expert_gate_up(handle_of<gate_up_c>(), test_stream(), x.data(), id.data(), w, gu.data(), tokens);
    moe_act_quant(handle_of<act_quant_c>(), test_stream(), gu.data(), tokens * 9, 1024, 1024, act.data(), scales.data());
    moe_expert_down(handle_of<down_c>(), test_stream(), act.data(), scales.data(), id.data(), rw.data(), w, out.data(), tokens);
  }
  struct image {
    std::vector<std::uint16_t> gu, out;
    std::vector<std::uint8_t> act;
    std::vector<float> scales;
    bool operator==(const image& o) const {
      return gu == o.gu && out == o.out && act == o.act && std::memcmp(scales.data(), o.scales.data(), 4 * scales.size()) == 0;
    }
  };
  image download() const { return {gu.download(), out.download(), act.download(), scales.download()}; }
};

void check_case(int m, const std::vector<std::int32_t>& ids, const std::vector<float>& weights) {
  const buffers b(m, ids, weights);
  b.poison();
  b.chain();
  sync_stream();
  const auto want = b.download();
  for (int rep = 0; rep < 2; ++rep) {
    INFO("call ", rep);
    b.poison();
    b.persistent();
    sync_stream();
    CHECK(b.download() == want);
  }
}

std::vector<float> route_weights(int m, std::uint64_t seed) {
  std::vector<float> w(m * 9ull);
  oracles::xorshift r{seed};
  for (auto& v : w) v = 0.1f + 0.05f * r.uniform();
  return w;
}

}  // namespace

TEST_CASE("persistent experts: invalid ids among valid ones, the chain's bits") {
  auto ids = oracles::routed_ids(3, 31);
  ids[1 * 9 + 2] = -1;
  ids[2 * 9 + 5] = 300;
  ids[0 * 9 + 8] = 257;  // even the shared slot
  check_case(3, ids, route_weights(3, 31));
}

TEST_CASE("persistent experts: one expert on every route (two units), a NaN route weight") {
  std::vector<std::int32_t> ids(18, 7);
  auto w = route_weights(2, 32);
  w[4] = std::numeric_limits<float>::quiet_NaN();
  check_case(2, ids, w);
}

TEST_CASE("persistent experts: no valid id (every row +0.0, out the route sum of zeros)") {
  std::vector<std::int32_t> ids(9, -5);
  check_case(1, ids, route_weights(1, 33));
}

TEST_CASE("persistent experts: 16 tokens over a pool of 16 experts (many units of 16 routes), and 1, 9, 16 routed tokens") {
  check_case(16, oracles::routed_ids(16, 34, 16), route_weights(16, 34));
  for (int m : {1, 9, 16}) check_case(m, oracles::routed_ids(m, 40 + m), route_weights(m, 40 + m));
}

TEST_CASE("persistent experts: a short workspace is refused, nothing launched or written") {
  const buffers b(2, oracles::routed_ids(2, 35), route_weights(2, 35));
  b.poison();
  const auto s = b.signature(P::workspace_bytes - 16);
  const decision d = P::admits(s);
  CHECK_FALSE(d.admitted());
  CHECK(to_string(d).find("workspace_bytes") != std::string::npos);
  try {
    require_admitted<P>("test persistent", s);
    FAIL("the call was not refused");
  } catch (const error& e) {
    CHECK(e.code() == status::workspace_too_small);
  }
  sync_stream();
  for (auto v : b.out.download()) CHECK(v == 0xFFFF);
}
