// The router on the GPU (sm90a cubins built by CMake).
//  exact_fp32: ids and weights bitwise equal to the oracle (and the workspace logits bitwise equal
//    to the oracle's fixed order; a NaN logit matches any NaN: no contract fixes NaN payloads),
//    for 1..32 tokens (the 32-token instance the dispatch takes) and 1..128 (the 128-token instance
//    the benchmark compares), two strides, adversarial tokens (NaN, Inf, cancelling huge values, all-zero
//    hidden -> all-equal probabilities, exact logit ties from duplicated expert rows), repeated
//    calls on one workspace.
//  matrix_bf16: every logit within the contract's bound of the FP64 dot product (the measured
//    error is reported), ids admissible under the bound, weights within their bound, for 1..128;
//    the block's router above 16 tokens (matrix_bf16 with the shared gate) the same for 17..768,
//    slot 8 bitwise the shared gate's.
// Poisoned outputs: slot 8 and the rows after the last token stay untouched; refused calls write
// nothing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/moe_router.hpp"
#include "oracles/moe_routing.hpp"
#include "oracles/moe_routing_inputs.hpp"

using namespace netra;

namespace {
template <class Contract> const handle<Contract>& handle_of() {
  static const handle<Contract> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<Contract>() + ".cubin", current_cuda_device());
  return h;
}

struct router_inputs {
  std::int64_t tokens, stride;
  std::vector<std::uint16_t> hidden, weight, shared_gate;
  router_inputs(std::int64_t m, std::int64_t s, std::uint64_t seed)
      : tokens(m), stride(s), hidden(static_cast<std::size_t>(m * s), 0x7FC1), weight(256 * 2048), shared_gate(2048) {
    oracles::rng r(seed);
    for (auto& v : weight) v = oracles::bf16_of(static_cast<float>(0.03 * r.normal()));
    for (auto& v : shared_gate) v = oracles::bf16_of(static_cast<float>(0.02 * r.normal()));
    for (int k = 0; k < 2048; ++k) weight[200 * 2048 + k] = weight[17 * 2048 + k];  // experts 17 and 200 tie exactly
    for (int k = 0; k < 2048; ++k) weight[31 * 2048 + k] = weight[30 * 2048 + k];    // and 30 / 31
    for (std::int64_t t = 0; t < m; ++t) {
      std::uint16_t* h = hidden.data() + t * s;
      oracles::fill_normal(h, 2048, 1.0, seed * 31 + static_cast<std::uint64_t>(t));
      switch ((t + static_cast<std::int64_t>(seed)) % 9) {
        case 1: h[r.below(2048)] = oracles::bf16_nan; break;
        case 2: h[r.below(2048)] = oracles::bf16_inf; break;
        case 3: std::fill(h, h + 2048, 0); break;  // every logit 0: probabilities all equal
        case 4:
          for (int k = 0; k < 2048; ++k) h[k] = oracles::bf16_of(k % 2 ? 1e35f : -1e35f);
          break;
        case 5:  // aligned with expert 17 (and its twin 200): a sharp top-1 tie
          for (int k = 0; k < 2048; ++k) h[k] = oracles::bf16_of(40.0f * f32_from_bf16(weight[17 * 2048 + k]));
          break;
        case 6:
          for (int k = 0; k < 2048; ++k) h[k] = oracles::bf16_of(static_cast<float>(std::ldexp(r.normal(), -100)));
          break;
        default: break;
      }
    }
  }
  const std::uint16_t* h(std::int64_t t) const { return hidden.data() + t * stride; }
  const std::uint16_t* w(int e) const { return weight.data() + static_cast<std::size_t>(e) * 2048; }
};

struct router_outputs {
  std::vector<std::int32_t> ids;
  std::vector<float> weights;
  std::vector<float> logits;  // [tokens, 256], from the workspace (K-split partials added in order); empty without one (Cluster)
};

template <class Contract> router_outputs run_router(const router_inputs& in) {
  const auto& h = handle_of<Contract>();
  testing::gpu_array<std::uint16_t> hidden(in.hidden.size()), weight(in.weight.size()), shared_gate(in.shared_gate.size());
  testing::gpu_array<std::int32_t> ids(static_cast<std::size_t>((in.tokens + 1) * 9));
  testing::gpu_array<float> weights(static_cast<std::size_t>((in.tokens + 1) * 9));
  hidden.upload(in.hidden);
  weight.upload(in.weight);
  shared_gate.upload(in.shared_gate);
  ids.fill_bytes(0xAB);
  weights.fill_bytes(0xAB);
  moe_router(h, nullptr, hidden.data(), in.tokens, 2048, in.stride, weight.data(), 256, ids.data(), weights.data(),
             Contract::shared_gate ? shared_gate.data() : nullptr);
  router_outputs out{ids.download(), weights.download(), {}};
  if constexpr (Contract::workspace_bytes > 0) {  // the two-kernel mapping: the logits are in the workspace
    std::vector<float> partials(Contract::partials_bytes / 4);
    testing::drv().check(testing::drv().cuMemcpyDtoH(partials.data(), reinterpret_cast<CUdeviceptr>(h.workspace()), Contract::partials_bytes),
                         "cuMemcpyDtoH");
    out.logits.resize(static_cast<std::size_t>(in.tokens) * 256);
    for (std::int64_t t = 0; t < in.tokens; ++t)
      for (int e = 0; e < 256; ++e) {
        float l = 0;
        for (u32 s = 0; s < Contract::k_splits; ++s) {
          const float v = partials[(static_cast<std::size_t>(s) * Contract::padded_tokens + static_cast<std::size_t>(t)) * 256 + e];
          l = s == 0 ? v : l + v;
        }
        out.logits[static_cast<std::size_t>(t) * 256 + e] = l;
      }
  }
  // untouched: slot 8 of every token (SharedGate: the shared gate's bits), every slot of the token after the last
  long gate_mismatch = 0;
  for (std::int64_t t = 0; t <= in.tokens; ++t)
    for (int s = 0; s < 9; ++s) {
      const auto i = static_cast<std::size_t>(t * 9 + s);
      if (Contract::shared_gate && s == 8 && t < in.tokens) {
        gate_mismatch += out.ids[i] != 256 || oracles::bits_of(out.weights[i]) != oracles::bits_of(oracles::shared_gate_weight(in.h(t), in.shared_gate.data()));
      } else if (s == 8 || t == in.tokens) {
        CHECK(static_cast<std::uint32_t>(out.ids[i]) == 0xABABABABu);
        CHECK(oracles::bits_of(out.weights[i]) == 0xABABABABu);
      }
    }
  CHECK(gate_mismatch == 0);
  return out;
}
}  // namespace

namespace {
/// The exact tactic of instance C, bitwise against the oracle (ids, weights, and the workspace
/// logits where C has a workspace) for each token count, two strides, `repeats` rounds on one
/// handle. Returns the tokens checked.
template <class C> long check_exact(std::initializer_list<std::int64_t> token_counts, int repeats) {
  long tokens_checked = 0;
  for (int repeat = 0; repeat < repeats; ++repeat)
    for (std::int64_t m : token_counts)
      for (std::int64_t stride : {2048, 2056}) {
        const router_inputs in(m, stride, static_cast<std::uint64_t>(m * 7 + stride + repeat));
        const auto out = run_router<C>(in);
        long logit_mismatch = 0, id_mismatch = 0, weight_mismatch = 0;
        for (std::int64_t t = 0; t < m; ++t) {
          float l[256];
          for (int e = 0; e < 256; ++e) {
            l[e] = oracles::router_exact_logit(in.h(t), in.w(e));
            // Bitwise, except that a NaN matches any NaN: the oracle's host fma propagates the
            // input NaN's payload (x86), sm_90 returns the canonical 0x7FFFFFFF; the contract fixes
            // only that a NaN logit makes the token non-finite (checked through ids / weights).
            if (out.logits.empty()) continue;  // Cluster: logits never leave the cluster (ids and weights checked below)
            const float got = out.logits[static_cast<std::size_t>(t) * 256 + e];
            logit_mismatch += std::isnan(l[e]) ? !std::isnan(got) : oracles::bits_of(l[e]) != oracles::bits_of(got);
          }
          const auto want = oracles::route_token(l);
          for (int s = 0; s < 8; ++s) {
            id_mismatch += want.ids[s] != out.ids[static_cast<std::size_t>(t * 9 + s)];
            weight_mismatch += oracles::bits_of(want.weights[s]) != oracles::bits_of(out.weights[static_cast<std::size_t>(t * 9 + s)]);
          }
          ++tokens_checked;
        }
        INFO(instance_name<C>(), " tokens ", m, " stride ", stride, " repeat ", repeat);
        CHECK(logit_mismatch == 0);
        CHECK(id_mismatch == 0);
        CHECK(weight_mismatch == 0);
      }
  return tokens_checked;
}
}  // namespace

TEST_CASE("router exact_fp32 (two kernels, the decode router): ids, weights and logits bitwise equal to the oracle, 1..32 tokens") {
  const long tokens_checked = check_exact<contracts::moe_router_exact<sm90a>>({1, 2, 7, 8, 9, 17, 31, 32}, 2);
  MESSAGE(tokens_checked, " tokens routed bitwise");
}

TEST_CASE("router exact_fp32 as one cluster kernel (the benchmark's instance): ids and weights bitwise equal to the oracle, 1..32 tokens") {
  using C = contracts::moe_router<sm90a, router_tactic::exact_fp32, 32, 0, 16>;
  const long tokens_checked = check_exact<C>({1, 2, 3, 4, 5, 7, 8, 9, 17, 31, 32}, 2);
  MESSAGE(tokens_checked, " tokens routed bitwise");
}

TEST_CASE("router exact_fp32 up to 128 tokens (the benchmark's instance): bitwise equal to the oracle") {
  const long tokens_checked = check_exact<contracts::moe_router<sm90a, router_tactic::exact_fp32, 128>>({1, 9, 33, 64, 100, 127, 128}, 1);
  MESSAGE(tokens_checked, " tokens routed bitwise");
}

namespace {
/// The matrix tactic of instance C under its bounded policy for each token count.
template <class C> void check_matrix(std::initializer_list<std::int64_t> token_counts) {
  double worst_ratio = 0;  // max |l - l64| / sum |products|
  long tokens_checked = 0, finite_tokens = 0, id_differences_vs_fp64 = 0;
  for (std::int64_t m : token_counts) {
    const router_inputs in(m, 2048, static_cast<std::uint64_t>(1000 + m));
    const auto out = run_router<C>(in);
    for (std::int64_t t = 0; t < m; ++t) {
      ++tokens_checked;
      double l64[256], bound[256];
      bool finite = true;
      for (int e = 0; e < 256; ++e) {
        const auto r = oracles::router_logit64(in.h(t), in.w(e));
        l64[e] = r.value;
        bound[e] = std::ldexp(r.magnitude, -11);
        finite &= std::isfinite(r.value) && std::isfinite(r.magnitude);
        const double got = out.logits[static_cast<std::size_t>(t) * 256 + e];
        if (std::isfinite(r.value) && std::isfinite(r.magnitude) && std::isfinite(got)) {
          const double err = std::fabs(got - r.value);
          CHECK(err <= bound[e]);
          if (r.magnitude > 0) worst_ratio = std::max(worst_ratio, err / r.magnitude);
        }
      }
      const std::int32_t* ids = out.ids.data() + t * 9;
      const float* w = out.weights.data() + t * 9;
      // (2) ids and weights are the contract's routing of the tactic's own logits, bitwise
      const auto want = oracles::route_token(out.logits.data() + t * 256);
      for (int s = 0; s < 8; ++s) {
        CHECK(ids[s] == want.ids[s]);
        CHECK(oracles::bits_of(w[s]) == oracles::bits_of(want.weights[s]));
      }
      if (!finite) {  // NaN / Inf inputs: the non-finite route
        for (int s = 0; s < 8; ++s) {
          CHECK(ids[s] == s);
          CHECK(oracles::bits_of(w[s]) == 0x7FC00000u);
        }
        continue;
      }
      ++finite_tokens;
      // (3) against FP64: each slot with a nonzero weight is admissible under the bound (pairs
      // whose FP32 probabilities tie are ordered by id, as the contract says); zero-weight slots
      // hold the lowest ids not chosen before.
      float p32[256];
      REQUIRE(oracles::route_probabilities(out.logits.data() + t * 256, p32));
      bool chosen[256] = {};
      for (int s = 0; s < 8; ++s) {
        REQUIRE(ids[s] >= 0);
        REQUIRE(ids[s] < 256);
        CHECK_FALSE(chosen[ids[s]]);
        chosen[ids[s]] = true;
        if (w[s] > 0.0f) {
          for (int y = 0; y < 256; ++y)
            if (!chosen[y] && p32[y] != p32[ids[s]]) CHECK(l64[ids[s]] + bound[ids[s]] >= l64[y] - bound[y]);
        } else {
          int lowest = 0;
          while (chosen[lowest] && lowest != ids[s]) ++lowest;
          CHECK(lowest == ids[s]);
        }
      }
      // the FP64 top-8 for reference: how often does the bounded tactic pick differently?
      int order[256];
      for (int e = 0; e < 256; ++e) order[e] = e;
      std::stable_sort(order, order + 256, [&](int a, int b) { return l64[a] > l64[b]; });
      for (int s = 0; s < 8; ++s) id_differences_vs_fp64 += order[s] != ids[s];
      // weights: FP64 softmax over the chosen ids, relative bound e^(4 B_max) - 1 + 2^-20, plus
      // 2^-120 absolute (probabilities below 2^-126 flush to 0)
      double b_max = 0, denom = 0, top = -INFINITY;
      for (int s = 0; s < 8; ++s) top = std::max(top, l64[ids[s]]), b_max = std::max(b_max, bound[ids[s]]);
      for (int s = 0; s < 8; ++s) denom += std::exp(l64[ids[s]] - top);
      // The bound is a real number: for |hidden| ~ 1e35, B_max ~ 1e33 and e^(4 B_max) overflows to
      // +Inf in double, where a zero w64 (exp(l64 - top) underflowed) times Inf would be NaN; the
      // bound's product is 0 then (0 times any real), and +Inf (vacuous, as the real bound is)
      // for w64 > 0.
      const double relative = std::expm1(4 * b_max) + 0x1p-20;
      for (int s = 0; s < 8; ++s) {
        const double w64 = std::exp(l64[ids[s]] - top) / denom;
        CHECK(std::isfinite(w64));
        const double bound_w = (w64 == 0 ? 0.0 : w64 * relative) + 0x1p-120;
        CHECK(std::fabs(w[s] - w64) <= bound_w);
      }
    }
  }
  MESSAGE(tokens_checked, " tokens (", finite_tokens, " finite); max |logit - FP64| / sum|products| = ", worst_ratio,
          " (bound 2^-11 = ", std::ldexp(1.0, -11), "); slots differing from the FP64 order: ", id_differences_vs_fp64);
  CHECK(worst_ratio <= std::ldexp(1.0, -11));
}
}  // namespace

TEST_CASE("router matrix_bf16: logits within the bound, admissible ids, bounded weights, 1..128 tokens") {
  check_matrix<contracts::moe_router_matrix<sm90a>>({1, 15, 16, 17, 64, 100, 128});
}

TEST_CASE("the block's router above 16 tokens (matrix_bf16, shared gate appended): the bounded policy and slot 8 bitwise, 17..768 tokens") {
  check_matrix<contracts::moe_router_matrix_shared_gate<sm90a>>({17, 31, 100, 129, 255, 513, 768});
}

TEST_CASE("router: exact and matrix tactics agree on the ids of well-separated tokens") {
  const router_inputs in(32, 2048, 4242);
  const auto exact = run_router<contracts::moe_router_exact<sm90a>>(in);
  const auto matrix = run_router<contracts::moe_router_matrix<sm90a>>(in);
  long same = 0, total = 0;
  for (std::size_t i = 0; i < exact.ids.size(); ++i)
    if (i % 9 != 8 && i < 32 * 9) {
      ++total;
      same += exact.ids[i] == matrix.ids[i];
    }
  MESSAGE(same, " of ", total, " slots identical between the tactics");
  CHECK(same >= total * 9 / 10);
}

TEST_CASE("a refused router call names the field and writes nothing") {
  using C = contracts::moe_router_exact<sm90a>;
  const auto& h = handle_of<C>();
  testing::gpu_array<std::uint16_t> hidden(40 * 2048), weight(256 * 2048);
  testing::gpu_array<std::int32_t> ids(40 * 9);
  testing::gpu_array<float> weights(40 * 9);
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
  refused([&] { moe_router(h, nullptr, hidden.data(), 0, 2048, 2048, weight.data(), 256, ids.data(), weights.data()); }, "'tokens'");
  refused([&] { moe_router(h, nullptr, hidden.data(), 33, 2048, 2048, weight.data(), 256, ids.data(), weights.data()); }, "'tokens'");
  refused([&] { moe_router(h, nullptr, hidden.data(), 4, 4096, 4096, weight.data(), 256, ids.data(), weights.data()); }, "'hidden_size'");
  refused([&] { moe_router(h, nullptr, hidden.data(), 4, 2048, 2048, weight.data(), 128, ids.data(), weights.data()); }, "'experts'");
  refused([&] { moe_router(h, nullptr, hidden.data(), 4, 2048, 2052, weight.data(), 256, ids.data(), weights.data()); }, "'hidden_stride'");
  refused([&] { moe_router(h, nullptr, hidden.data() + 4, 4, 2048, 2048, weight.data(), 256, ids.data(), weights.data()); }, "'hidden_states'");
  refused([&] { moe_router(h, nullptr, hidden.data(), 4, 2048, 2048, weight.data() + 1, 256, ids.data(), weights.data()); }, "'gate_weight'");
  refused([&] { moe_router(h, nullptr, hidden.data(), 4, 2048, 2048, weight.data(), 256, nullptr, weights.data()); }, "'route_ids'");
  for (auto v : ids.download()) CHECK(static_cast<std::uint32_t>(v) == 0xABABABABu);
  for (auto v : weights.download()) CHECK(oracles::bits_of(v) == 0xABABABABu);
}
