// The shared-expert gate on the GPU (sm90a cubin built by CMake): slot 8 of the route layout
// (id 256, weight sigmoid(dot)) bitwise equal to the oracle for 1..512 tokens, two strides and
// adversarial tokens; slots 0..7 and the token after the last stay poisoned; with the exact router
// on the same buffers every token's nine routes are complete; the decode block's router, which
// appends the gate itself, writes the same nine routes bit for bit; refused calls write nothing.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/moe_router.hpp"
#include "netra/runtime/ops/moe_shared_gate.hpp"
#include "oracles/moe_routing.hpp"
#include "oracles/moe_routing_inputs.hpp"

using namespace netra;

namespace {
template <class Contract> const handle<Contract>& handle_of() {
  static const handle<Contract> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<Contract>() + ".cubin", current_cuda_device());
  return h;
}

std::vector<std::uint16_t> gate_hidden(std::int64_t m, std::int64_t stride, std::uint64_t seed) {
  std::vector<std::uint16_t> hidden(static_cast<std::size_t>(m * stride), 0x7FC1);
  oracles::rng r(seed);
  for (std::int64_t t = 0; t < m; ++t) {
    std::uint16_t* h = hidden.data() + t * stride;
    oracles::fill_normal(h, 2048, 0.5 + static_cast<double>(t % 5), seed + static_cast<std::uint64_t>(t));
    switch (t % 8) {
      case 1: h[r.below(2048)] = oracles::bf16_nan; break;
      case 2: h[r.below(2048)] = oracles::bf16_inf; break;
      case 3: h[r.below(2048)] = oracles::bf16_neg_inf; break;
      case 4:
        for (int k = 0; k < 2048; ++k) h[k] = 0;
        break;  // x = 0: g = 0.5 exactly
      case 5:
        for (int k = 0; k < 2048; ++k) h[k] = oracles::bf16_of(k % 2 ? 3e38f : -3e38f);
        break;
      case 6:
        for (int k = 0; k < 2048; ++k) h[k] = oracles::bf16_of(100.0f);
        break;  // saturates the sigmoid
      default: break;
    }
  }
  return hidden;
}

/// The device buffers of one call on `m` tokens: the hidden rows uploaded, ids and weights for
/// m + 1 tokens poisoned with 0xAB bytes (the row after the last must stay so).
struct call_buffers {
  testing::gpu_array<std::uint16_t> hidden;
  testing::gpu_array<std::int32_t> ids;
  testing::gpu_array<float> weights;
  call_buffers(const std::vector<std::uint16_t>& host, std::int64_t m)
      : hidden(host.size()), ids(static_cast<std::size_t>((m + 1) * 9)), weights(static_cast<std::size_t>((m + 1) * 9)) {
    hidden.upload(host);
    ids.fill_bytes(0xAB);
    weights.fill_bytes(0xAB);
  }
};
}  // namespace

TEST_CASE("shared gate: slot 8 bitwise equal to the oracle, 1..512 tokens, two strides") {
  using C = contracts::moe_shared_gate_reference<sm90a>;
  std::vector<std::uint16_t> w(2048);
  oracles::fill_normal(w.data(), 2048, 0.03, 5);
  testing::gpu_array<std::uint16_t> weight(2048);
  weight.upload(w);
  long tokens_checked = 0;
  for (std::int64_t m : {1, 2, 3, 64, 511, 512})
    for (std::int64_t stride : {2048, 2064}) {
      const auto host = gate_hidden(m, stride, static_cast<std::uint64_t>(m + stride));
      call_buffers b(host, m);
      moe_shared_gate(handle_of<C>(), nullptr, b.hidden.data(), m, 2048, stride, weight.data(), b.ids.data(), b.weights.data());
      const auto got_ids = b.ids.download();
      const auto got_w = b.weights.download();
      long mismatches = 0, untouched_violations = 0;
      for (std::int64_t t = 0; t <= m; ++t)
        for (int s = 0; s < 9; ++s) {
          const auto i = static_cast<std::size_t>(t * 9 + s);
          if (s == 8 && t < m) {
            mismatches += got_ids[i] != 256;
            mismatches += oracles::bits_of(got_w[i]) != oracles::bits_of(oracles::shared_gate_weight(host.data() + t * stride, w.data()));
          } else {
            untouched_violations += static_cast<std::uint32_t>(got_ids[i]) != 0xABABABABu || oracles::bits_of(got_w[i]) != 0xABABABABu;
          }
        }
      INFO("tokens ", m, " stride ", stride);
      CHECK(mismatches == 0);
      CHECK(untouched_violations == 0);
      tokens_checked += m;
    }
  MESSAGE(tokens_checked, " shared-gate routes checked bitwise");
}

TEST_CASE("router + shared gate fill all nine routes of every token") {
  using R = contracts::moe_router_exact<sm90a>;
  using G = contracts::moe_shared_gate_reference<sm90a>;
  const std::int64_t m = 16;
  const auto host = gate_hidden(m, 2048, 77);
  std::vector<std::uint16_t> gw(2048), rw(256 * 2048);
  oracles::fill_normal(gw.data(), 2048, 0.03, 6);
  oracles::fill_normal(rw.data(), 256 * 2048, 0.03, 7);
  testing::gpu_array<std::uint16_t> hidden(host.size()), gate_w(2048), router_w(rw.size());
  testing::gpu_array<std::int32_t> ids(static_cast<std::size_t>(m * 9));
  testing::gpu_array<float> weights(static_cast<std::size_t>(m * 9));
  hidden.upload(host);
  gate_w.upload(gw);
  router_w.upload(rw);
  ids.fill_bytes(0xAB);
  weights.fill_bytes(0xAB);
  moe_router(handle_of<R>(), nullptr, hidden.data(), m, 2048, 2048, router_w.data(), 256, ids.data(), weights.data());
  moe_shared_gate(handle_of<G>(), nullptr, hidden.data(), m, 2048, 2048, gate_w.data(), ids.data(), weights.data());
  const auto got_ids = ids.download();
  const auto got_w = weights.download();
  for (std::int64_t t = 0; t < m; ++t) {
    float l[256];
    for (int e = 0; e < 256; ++e) l[e] = oracles::router_exact_logit(host.data() + t * 2048, rw.data() + e * 2048);
    const auto want = oracles::route_token(l);
    for (int s = 0; s < 8; ++s) {
      CHECK(got_ids[static_cast<std::size_t>(t * 9 + s)] == want.ids[s]);
      CHECK(oracles::bits_of(got_w[static_cast<std::size_t>(t * 9 + s)]) == oracles::bits_of(want.weights[s]));
    }
    CHECK(got_ids[static_cast<std::size_t>(t * 9 + 8)] == 256);
    CHECK(oracles::bits_of(got_w[static_cast<std::size_t>(t * 9 + 8)]) ==
          oracles::bits_of(oracles::shared_gate_weight(host.data() + t * 2048, gw.data())));
  }
}

namespace {
/// Router instance G with the shared gate appended, all nine routes of 1..16 tokens against the
/// oracles, two strides, two rounds; then a call without the gate weight, or with more tokens than
/// G serves, is refused by name.
template <class G> void check_router_with_gate() {
  std::vector<std::uint16_t> gw(2048), rw(256 * 2048);
  oracles::fill_normal(gw.data(), 2048, 0.03, 8);
  oracles::fill_normal(rw.data(), 256 * 2048, 0.03, 9);
  testing::gpu_array<std::uint16_t> gate_w(2048), router_w(rw.size());
  gate_w.upload(gw);
  router_w.upload(rw);
  long tokens_checked = 0;
  for (int repeat = 0; repeat < 2; ++repeat)
    for (std::int64_t m : {1, 2, 3, 4, 5, 8, 9, 15, 16})
      for (std::int64_t stride : {2048, 2056}) {
        const auto host = gate_hidden(m, stride, static_cast<std::uint64_t>(m * 3 + stride + repeat));
        call_buffers b(host, m);
        moe_router(handle_of<G>(), nullptr, b.hidden.data(), m, 2048, stride, router_w.data(), 256, b.ids.data(), b.weights.data(),
                   gate_w.data());
        const auto got_ids = b.ids.download();
        const auto got_w = b.weights.download();
        long mismatches = 0, untouched_violations = 0;
        for (std::int64_t t = 0; t < m; ++t) {
          const std::uint16_t* h = host.data() + t * stride;
          float l[256];
          for (int e = 0; e < 256; ++e) l[e] = oracles::router_exact_logit(h, rw.data() + e * 2048);
          const auto want = oracles::route_token(l);
          for (int s = 0; s < 8; ++s) {
            mismatches += got_ids[static_cast<std::size_t>(t * 9 + s)] != want.ids[s];
            mismatches += oracles::bits_of(got_w[static_cast<std::size_t>(t * 9 + s)]) != oracles::bits_of(want.weights[s]);
          }
          mismatches += got_ids[static_cast<std::size_t>(t * 9 + 8)] != 256;
          mismatches += oracles::bits_of(got_w[static_cast<std::size_t>(t * 9 + 8)]) != oracles::bits_of(oracles::shared_gate_weight(h, gw.data()));
          ++tokens_checked;
        }
        for (int s = 0; s < 9; ++s)
          untouched_violations += static_cast<std::uint32_t>(got_ids[static_cast<std::size_t>(m * 9 + s)]) != 0xABABABABu ||
                                  oracles::bits_of(got_w[static_cast<std::size_t>(m * 9 + s)]) != 0xABABABABu;
        INFO("tokens ", m, " stride ", stride, " repeat ", repeat);
        CHECK(mismatches == 0);
        CHECK(untouched_violations == 0);
      }
  MESSAGE(tokens_checked, " tokens' nine routes checked bitwise");
  // a missing gate weight is refused by name before anything is launched
  testing::gpu_array<std::int32_t> ids(9);
  testing::gpu_array<float> weights(9);
  testing::gpu_array<std::uint16_t> hidden(2048);
  ids.fill_bytes(0xAB);
  try {
    moe_router(handle_of<G>(), nullptr, hidden.data(), 1, 2048, 2048, router_w.data(), 256, ids.data(), weights.data(), nullptr);
    FAIL("a router call without the gate weight was admitted");
  } catch (const error& e) {
    CHECK(std::string(e.what()).find("shared_gate_weight") != std::string::npos);
  }
  try {
    moe_router(handle_of<G>(), nullptr, hidden.data(), G::max_tokens + 1, 2048, 2048, router_w.data(), 256, ids.data(), weights.data(),
               gate_w.data());
    FAIL("a router call with more tokens than the contract serves was admitted");
  } catch (const error& e) {
    CHECK(std::string(e.what()).find("'tokens'") != std::string::npos);
  }
  for (std::int32_t v : ids.download()) CHECK(static_cast<std::uint32_t>(v) == 0xABABABABu);
}
}  // namespace

TEST_CASE("the router with the shared gate appended (one cluster kernel, the block's router) writes all nine routes: the oracle's, bit for bit") {
  static_assert(contracts::moe_router_exact_shared_gate<sm90a>::cluster == 16, "the block's sm90a router is the cluster kernel");
  check_router_with_gate<contracts::moe_router_exact_shared_gate<sm90a>>();
}

TEST_CASE("the router with the shared gate appended (two kernels) writes all nine routes: the oracle's, bit for bit") {
  check_router_with_gate<contracts::moe_router<sm90a, router_tactic::exact_fp32, 16, 1>>();
}

TEST_CASE("a refused shared-gate call names the field and writes nothing") {
  using C = contracts::moe_shared_gate_reference<sm90a>;
  const auto& h = handle_of<C>();
  testing::gpu_array<std::uint16_t> hidden(4 * 2048), w(2048);
  testing::gpu_array<std::int32_t> ids(4 * 9);
  testing::gpu_array<float> weights(4 * 9);
  ids.fill_bytes(0xAB);
  weights.fill_bytes(0xAB);
  auto refused = [&](auto call, const char* field) {
    try {
      call();
      FAIL("the call was not refused");
    } catch (const error& e) {
      CHECK(std::string(e.what()).find(field) != std::string::npos);
    }
  };
  refused([&] { moe_shared_gate(h, nullptr, hidden.data(), 0, 2048, 2048, w.data(), ids.data(), weights.data()); }, "'tokens'");
  refused([&] { moe_shared_gate(h, nullptr, hidden.data(), 513, 2048, 2048, w.data(), ids.data(), weights.data()); }, "'tokens'");
  refused([&] { moe_shared_gate(h, nullptr, hidden.data(), 2, 1024, 2048, w.data(), ids.data(), weights.data()); }, "'hidden_size'");
  refused([&] { moe_shared_gate(h, nullptr, hidden.data(), 2, 2048, 2050, w.data(), ids.data(), weights.data()); }, "'hidden_stride'");
  refused([&] { moe_shared_gate(h, nullptr, hidden.data() + 2, 2, 2048, 2048, w.data(), ids.data(), weights.data()); }, "'hidden_states'");
  refused([&] { moe_shared_gate(h, nullptr, hidden.data(), 2, 2048, 2048, w.data() + 4, ids.data(), weights.data()); }, "'gate_weight'");
  refused([&] { moe_shared_gate(h, nullptr, hidden.data(), 2, 2048, 2048, w.data(), nullptr, weights.data()); }, "'route_ids'");
  refused([&] { moe_shared_gate(h, nullptr, hidden.data(), 2, 2048, 2048, w.data(), ids.data(), nullptr); }, "'route_weights'");
  for (auto v : ids.download()) CHECK(static_cast<std::uint32_t>(v) == 0xABABABABu);
  for (auto v : weights.download()) CHECK(oracles::bits_of(v) == 0xABABABABu);
}
