// The router's route kernel and the shared gate on the host, decomposed as the kernels
// decompose them:
//  - the routing step (32 lanes x 8 experts, butterflies, 64-bit keys, the bitonic top-8 of
//    router_sort8 / router_merge8) equals the oracle's softmax -> top-8 -> renormalisation bitwise
//    on adversarial logits; the sorting network sorts every 0/1 input;
//  - the shared gate's lane maps and butterfly equal the oracle bitwise.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "netra/kernels/moe/router.hpp"
#include "netra/kernels/moe/shared_gate.hpp"
#include "oracles/moe_routing.hpp"
#include "oracles/moe_routing_inputs.hpp"

using namespace netra;

// ---- the routing step --------------------------------------------------------------------------

namespace {
/// route() of the kernel on one token, lane by lane: lane l holds experts 8l .. 8l + 7; the
/// top 8 by the kernel's own router_sort8 / router_merge8 over simulated lanes (butterfly xor 1 ..
/// 16: each lane merges its partner's list).
oracles::top8 route_model(const float* logits) {
  std::array<float, 32> m{}, s{};
  std::array<std::uint32_t, 32> nan{};
  for (u32 l = 0; l < 32; ++l) {
    m[l] = -INFINITY;
    for (u32 x = 0; x < 8; ++x) {
      nan[l] |= std::isnan(logits[8 * l + x]) ? 1u : 0u;
      m[l] = std::fmax(m[l], logits[8 * l + x]);
    }
  }
  auto butterfly = [](auto v, auto op) {
    for (u32 mask = 1; mask < 32; mask <<= 1) {
      auto next = v;
      for (u32 l = 0; l < 32; ++l) next[l] = op(v[l], v[l ^ mask]);
      v = next;
    }
    return v;
  };
  nan = butterfly(nan, [](std::uint32_t a, std::uint32_t b) { return a | b; });
  m = butterfly(m, [](float a, float b) { return std::fmax(a, b); });
  oracles::top8 out{};
  const bool finite = nan[0] == 0 && m[0] > -INFINITY && m[0] < INFINITY;
  if (!finite) {
    for (int i = 0; i < 8; ++i) out.ids[i] = i, out.weights[i] = oracles::canonical_nan;
    return out;
  }
  float e[256];
  for (u32 l = 0; l < 32; ++l) {
    s[l] = 0.0f;
    for (u32 x = 0; x < 8; ++x) {
      e[8 * l + x] = exp_f32(sub_rn(logits[8 * l + x], m[l]));
      s[l] = add_rn(s[l], e[8 * l + x]);
    }
  }
  s = butterfly(s, [](float a, float b) { return add_rn(a, b); });
  struct keys {
    std::uint64_t k[8];
  };
  std::array<keys, 32> lanes{};
  for (u32 l = 0; l < 32; ++l) {
    for (u32 x = 0; x < 8; ++x) lanes[l].k[x] = kernels::router_key(div_rn(e[8 * l + x], s[l]), 8 * l + x);
    kernels::router_sort8(lanes[l].k);
  }
  lanes = butterfly(lanes, [](keys a, const keys& b) {
    kernels::router_merge8(a.k, b.k);
    return a;
  });
  for (u32 l = 1; l < 32; ++l)
    for (int i = 0; i < 8; ++i) CHECK(lanes[l].k[i] == lanes[0].k[i]);  // every lane holds the same list
  float s8 = 0.0f;
  for (int slot = 0; slot < 8; ++slot) {
    out.ids[slot] = static_cast<std::int32_t>(kernels::router_key_expert(lanes[0].k[slot]));
    out.weights[slot] = kernels::router_key_p(lanes[0].k[slot]);
    s8 = add_rn(s8, out.weights[slot]);
  }
  for (int i = 0; i < 8; ++i) out.weights[i] = div_rn(out.weights[i], s8);
  return out;
}

std::vector<std::vector<float>> adversarial_logits() {
  std::vector<std::vector<float>> sets;
  oracles::rng r(17);
  for (int k = 0; k < 24; ++k) {
    std::vector<float> v(256);
    for (auto& x : v) x = static_cast<float>(3.0 * r.normal());
    sets.push_back(v);
  }
  std::vector<float> ties(256, 0.0f);
  for (int x : {200, 3, 77, 150, 9, 250, 31, 64, 65, 66}) ties[x] = 5.0f;  // 10 experts tie for the top
  sets.push_back(ties);
  sets.push_back(std::vector<float>(256, 1.25f));  // all equal: ids 0..7
  auto one_hot = std::vector<float>(256, 0.0f);
  one_hot[123] = 1e30f;  // every other p is 0: ties among zeros -> lowest ids
  sets.push_back(one_hot);
  auto far = std::vector<float>(256, -200.0f);
  for (int x = 0; x < 5; ++x) far[40 * x + 1] = -100.0f + x;  // e below 2^-126 flushes
  far[255] = 0.0f;
  sets.push_back(far);
  auto nan = sets[0];
  nan[77] = NAN;
  sets.push_back(nan);
  auto pinf = sets[1];
  pinf[5] = INFINITY;
  sets.push_back(pinf);
  auto ninf = sets[2];
  for (int x = 0; x < 256; x += 3) ninf[x] = -INFINITY;
  sets.push_back(ninf);
  sets.push_back(std::vector<float>(256, -INFINITY));
  auto ulp = std::vector<float>(256, 0.0f);
  for (int x = 0; x < 256; ++x) ulp[x] = std::nextafter(0.0f, x % 2 ? 1.0f : -1.0f) * static_cast<float>(x);  // p ties from distinct logits
  sets.push_back(ulp);
  auto close = sets[3];
  close[10] = close[20] = std::nextafter(close[30] = 9.0f, 10.0f);
  sets.push_back(close);
  return sets;
}
}  // namespace

TEST_CASE("routing step: the kernel's lanes, butterflies and keys equal the oracle bitwise") {
  int cases = 0;
  for (const auto& v : adversarial_logits()) {
    const auto want = oracles::route_token(v.data());
    const auto got = route_model(v.data());
    for (int i = 0; i < 8; ++i) {
      INFO("case ", cases, " slot ", i);
      CHECK(got.ids[i] == want.ids[i]);
      CHECK(oracles::bits_of(got.weights[i]) == oracles::bits_of(want.weights[i]));
    }
    ++cases;
  }
  CHECK(cases >= 30);
  // the oracle itself on the edge cases
  const auto sets = adversarial_logits();
  const auto all_equal = oracles::route_token(sets[25].data());
  for (int i = 0; i < 8; ++i) {
    CHECK(all_equal.ids[i] == i);
    CHECK(all_equal.weights[i] == 0.125f);
  }
  const auto ties = oracles::route_token(sets[24].data());
  const int tie_order[8] = {3, 9, 31, 64, 65, 66, 77, 150};
  for (int i = 0; i < 8; ++i) CHECK(ties.ids[i] == tie_order[i]);
  const auto hot = oracles::route_token(sets[26].data());
  CHECK(hot.ids[0] == 123);
  CHECK(hot.weights[0] == 1.0f);
  for (int i = 1; i < 8; ++i) CHECK(hot.ids[i] == i - 1);
  const auto nan = oracles::route_token(sets[28].data());
  CHECK(std::isnan(nan.weights[0]));
  CHECK(nan.ids[7] == 7);
  CHECK(std::isnan(oracles::route_token(sets[29].data()).weights[3]));  // +Inf logit
  CHECK(std::isfinite(oracles::route_token(sets[30].data()).weights[0]));  // some -Inf: finite
  CHECK(std::isnan(oracles::route_token(sets[31].data()).weights[0]));    // all -Inf
}

TEST_CASE("router_sort8 sorts every 0/1 input and router_merge8 keeps the top 8 of two sorted lists") {
  for (u32 bits = 0; bits < 256; ++bits) {  // 0/1 principle: a network that sorts all 0/1 inputs sorts all inputs
    std::uint64_t k[8];
    for (u32 i = 0; i < 8; ++i) k[i] = (bits >> i) & 1u;
    kernels::router_sort8(k);
    for (u32 i = 0; i + 1 < 8; ++i) CHECK(k[i] >= k[i + 1]);
    CHECK(static_cast<int>(k[0] + k[1] + k[2] + k[3] + k[4] + k[5] + k[6] + k[7]) == __builtin_popcount(bits));
  }
  oracles::rng r(23);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::uint64_t> all(16);
    for (auto& v : all) v = (static_cast<std::uint64_t>(r.below(round % 2 ? 4 : 1u << 30)) << 32) | r.below(1u << 30);  // many equal high words
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    if (all.size() < 16) continue;
    for (std::size_t i = all.size() - 1; i > 0; --i) std::swap(all[i], all[r.below(static_cast<std::uint32_t>(i + 1))]);
    std::uint64_t a[8], b[8];
    for (int i = 0; i < 8; ++i) a[i] = all[i], b[i] = all[8 + i];
    kernels::router_sort8(a);
    kernels::router_sort8(b);
    std::uint64_t ab[8], ba[8];
    std::copy(a, a + 8, ab);
    std::copy(b, b + 8, ba);
    kernels::router_merge8(ab, b);
    kernels::router_merge8(ba, a);
    std::sort(all.begin(), all.end(), std::greater<>());
    for (int i = 0; i < 8; ++i) {
      CHECK(ab[i] == all[i]);
      CHECK(ba[i] == all[i]);
    }
  }
}

// ---- shared gate -------------------------------------------------------------------------------

TEST_CASE("shared gate: lane maps and the 32-lane butterfly equal the oracle bitwise") {
  using C = contracts::moe_shared_gate_reference<gfx950>;
  using K = kernels::moe_shared_gate_kernel<C>;
  const u32 tokens = 7;
  std::vector<std::uint16_t> hidden(tokens * 2048), w(2048);
  oracles::fill_normal(w.data(), 2048, 0.02, 99);
  for (u32 t = 0; t < tokens; ++t) oracles::fill_normal(hidden.data() + t * 2048, 2048, 1.0 + t, 100 + t);
  hidden[3 * 2048 + 5] = oracles::bf16_nan;
  hidden[4 * 2048 + 9] = oracles::bf16_inf;
  for (int k = 0; k < 2048; ++k) hidden[5 * 2048 + k] = oracles::bf16_of(k % 2 ? 3e38f : -3e38f);  // cancelling huge terms
  std::vector<int> covered(tokens * 2048, 0);
  int mismatches = 0;
  const launch_shape s = K::shape(tokens);
  for (u32 wg = 0; wg < s.grid[0]; ++wg) {
    std::array<float, 64> partial{};
    for (u32 thread = 0; thread < s.workgroup_size; ++thread) {
      const u32 t = std::min(K::token_of(wg, thread), tokens - 1);
      float acc = 0.0f;
      for (u32 k = K::first_k(thread); k < K::first_k(thread) + C::k_per_thread; ++k) {
        if (K::token_of(wg, thread) < tokens) ++covered[t * 2048 + k];
        acc = fma_rn(f32_from_bf16(hidden[t * 2048 + k]), f32_from_bf16(w[k]), acc);
      }
      partial[thread] = acc;
    }
    for (u32 mask = 1; mask < 32; mask <<= 1) {
      auto next = partial;
      for (u32 i = 0; i < 64; ++i) next[i] = add_rn(partial[i], partial[(i / 32) * 32 + ((i % 32) ^ mask)]);
      partial = next;
    }
    for (u32 thread = 0; thread < s.workgroup_size; thread += 32) {
      const u32 t = K::token_of(wg, thread);
      if (t >= tokens) continue;
      float g = sigmoid_f32(partial[thread]);
      if (g != g) g = oracles::canonical_nan;
      mismatches += oracles::bits_of(g) != oracles::bits_of(oracles::shared_gate_weight(hidden.data() + t * 2048, w.data()));
    }
  }
  CHECK(mismatches == 0);
  for (int c : covered) CHECK(c == 1);
  CHECK(oracles::bits_of(oracles::shared_gate_weight(hidden.data() + 3 * 2048, w.data())) == 0x7FC00000u);
  const float g5 = oracles::shared_gate_weight(hidden.data() + 5 * 2048, w.data());
  CHECK((std::isnan(g5) || (g5 >= 0.0f && g5 <= 1.0f)));
}

