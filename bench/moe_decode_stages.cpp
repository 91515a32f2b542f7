// netra-bench-moe-decode-stages: where the decode MoE block's time goes at M <= 16 tokens. The
// block as moe_block_dispatcher selects it (router -> gate_up -> act_quant -> down, and variant
// fused: gate_up -> down of gate_up's BF16 where down's Input 1 admits M), recorded through
// moe_block_dispatcher::record with a stage mask: each prefix of the chain (router; + gate_up;
// + act_quant; all), each stage alone on the intermediates call 0 left, and the experts without
// the router. Every variant eager and graph-replayed (bench/gpu_timing.hpp), each call of a burst
// on its own layer's 257-expert weights and hidden rows (8 layers x 771 MB: every call streams
// cold weights past the 60 MB L2). A prefix's time minus the shorter prefix's is that stage's
// share of the chain's critical path (its boundary included). Before timing, call 0 of every layer:
// the fused block's ids, route weights, gate_up and out bit for bit the unfused block's (the
// variants' promise; the bound policy itself is test_moe_block_gpu's). One JSON line per
// (M, variant) with the distinct experts the calls hit; bench/moe_decode_stages.py records them.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "bench/moe_bench_memory.hpp"
#include "netra/runtime/ops/moe_block.hpp"
#include "oracles/argmax_rows.hpp"
#include "oracles/moe_experts.hpp"

using namespace netra;

namespace {

constexpr int layers = 8;

using bench::device_bytes;

/// One layer's weights (hashed E4M3 and block scales, the same values in every layer at other
/// addresses) and its router's and shared gate's BF16 weights.
struct layer_weights {
  device_bytes w13{257ull << 21}, w2{257ull << 20}, s13{257 * 128 * 4}, s2{257 * 64 * 4}, router{256 * 2048 * 2}, shared_gate{2048 * 2};
  moe_expert_weights experts() const { return {w13.as<void>(), s13.as<float>(), w2.as<void>(), s2.as<float>()}; }
};

/// One call's hidden rows and the block's outputs.
struct call_buffers {
  int m;
  device_bytes hidden, ids, route_weights, gate_up, act, act_scales, out;
  explicit call_buffers(int tokens)
      : m(tokens), hidden(tokens * 2048ull * 2), ids(tokens * 9ull * 4), route_weights(tokens * 9ull * 4), gate_up(tokens * 9ull * 1024 * 2),
        act(tokens * 9ull * 512), act_scales(tokens * 36ull * 4), out(tokens * 2048ull * 2) {}
  moe_block_args args(const layer_weights& w) const {
    moe_block_args a;
    a.hidden = hidden.as<void>();
    a.router_weight = w.router.as<void>();
    a.shared_gate_weight = w.shared_gate.as<void>();
    a.experts = w.experts();
    a.ids = ids.as<i32>();
    a.route_weights = route_weights.as<float>();
    a.gate_up = gate_up.as<void>();
    a.act = act.as<void>();
    a.act_scales = act_scales.as<float>();
    a.out = out.as<void>();
    a.tokens = m;
    return a;
  }
  /// What both variants write: ids, route weights, gate_up, out (act and its scales: unfused only).
  std::vector<std::uint8_t> shared_outputs() const {
    std::vector<std::uint8_t> all;
    for (const auto& [b, n] : {std::pair{&ids, m * 36ull}, {&route_weights, m * 36ull}, {&gate_up, m * 9ull * 2048}, {&out, m * 4096ull}}) {
      const auto v = b->download<std::uint8_t>(n);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  }
  void poison() const {
    for (const auto& [b, n] : {std::pair{&ids, m * 36ull}, {&route_weights, m * 36ull}, {&gate_up, m * 9ull * 2048}, {&act, m * 9ull * 512},
                               {&act_scales, m * 144ull}, {&out, m * 4096ull}})
      bench::drv().check(bench::drv().cuMemsetD8(b->p, 0xFF, n), "cuMemsetD8");
  }
};

std::vector<int> token_counts(int argc, char** argv) {
  std::vector<int> m;
  if (argc > 1)
    for (char* s = argv[1]; *s;) {
      m.push_back(static_cast<int>(std::strtol(s, &s, 10)));
      if (*s == ',') ++s;
    }
  if (m.empty()) m = {1, 2, 3, 4, 6, 8, 12, 16};
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  bench::drv().check(bench::drv().cuInit(0), "cuInit");
  const moe_block_dispatcher block(current_cuda_device(), jit::options{});
  CUstream stream;
  bench::drv().check(bench::drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

  const bench::host_experts hx;
  std::deque<layer_weights> weights(layers);
  for (int l = 0; l < layers; ++l) {
    oracles::xorshift r{static_cast<std::uint64_t>(900 + l)};
    std::vector<std::uint16_t> router(256 * 2048), shared_gate(2048);
    for (auto& v : router) v = bf16_from_f32_reference(0.05f * r.uniform());
    for (auto& v : shared_gate) v = bf16_from_f32_reference(0.02f * r.uniform());
    weights[l].w13.upload(hx.w13);
    weights[l].w2.upload(hx.w2);
    weights[l].s13.upload(hx.s13);
    weights[l].s2.upload(hx.s2);
    weights[l].router.upload(router);
    weights[l].shared_gate.upload(shared_gate);
  }

  using D = moe_block_dispatcher;
  struct variant {
    const char* name;
    bool fused;
    unsigned stages;
  };
  const variant variants[] = {{"chain", false, D::all_stages},
                              {"fused", true, D::all_stages},
                              {"router", false, D::router_stage},
                              {"router_gate_up", false, D::router_stage | D::gate_up_stage},
                              {"router_gate_up_act_quant", false, D::router_stage | D::gate_up_stage | D::act_quant_stage},
                              {"experts", false, D::all_stages & ~D::router_stage},
                              {"experts_fused", true, D::all_stages & ~D::router_stage},
                              {"gate_up", false, D::gate_up_stage},
                              {"act_quant", false, D::act_quant_stage},
                              {"down", false, D::down_stage},
                              {"down_fused", true, D::down_stage}};

  for (const int m : token_counts(argc, argv)) {
    std::deque<call_buffers> calls;
    for (int l = 0; l < layers; ++l) {
      calls.emplace_back(m);
      calls.back().hidden.upload(oracles::hidden_rows(m, 500 + 37 * l + m));
    }
    std::vector<moe_block_dispatcher::plan> plans[2];  // [fused]
    for (int l = 0; l < layers; ++l) {
      const moe_block_tensors t = block.tensors_of(calls[l].args(weights[l]));
      for (int f = 0; f < 2; ++f) plans[f].push_back(block.select(t, f ? moe_block_variant::fused : moe_block_variant::unfused));
    }
    const bool fused_runnable = plans[1][0].runnable();
    // Call 0 of every layer: the fused block writes the unfused block's bits (all but act and its
    // scales, which it does not write); the distinct experts the calls hit.
    bool equal = true;
    double distinct = 0;
    for (int l = 0; l < layers; ++l) {
      const call_buffers& c = calls[l];
      auto outputs = [&](const moe_block_dispatcher::plan& p) {
        c.poison();
        block.record(stream, p, D::all_stages);
        bench::drv().check(bench::drv().cuStreamSynchronize(stream), "sync");
        return c.shared_outputs();
      };
      const auto reference = outputs(plans[0][l]);
      std::set<std::int32_t> hit;
      for (auto id : c.ids.download<std::int32_t>(m * 9ull))
        if (id >= 0 && id < 257) hit.insert(id);
      distinct += static_cast<double>(hit.size()) / layers;
      if (fused_runnable) equal = equal && outputs(plans[1][l]) == reference;
      block.record(stream, plans[0][l], D::all_stages);  // the unfused call's intermediates, for the stages timed alone
    }
    bench::drv().check(bench::drv().cuStreamSynchronize(stream), "sync");
    for (const variant& v : variants) {
      if (v.fused && !fused_runnable) continue;
      const auto& p = plans[v.fused ? 1 : 0];
      const auto burst = [&] {
        for (int l = 0; l < layers; ++l) block.record(stream, p[l], v.stages);
      };
      const bench::timing t = bench::time_eager_and_graph(stream, layers, burst);
      std::printf("{\"tokens\": %d, \"variant\": \"%s\", \"graph_us\": %.3f, \"eager_us\": %.3f, \"distinct_experts\": %.3f, "
                  "\"fused_runnable\": %s, \"bits_equal\": %s}\n",
                  m, v.name, t.graph_us, t.eager_us, distinct, fused_runnable ? "true" : "false", equal ? "true" : "false");
      std::fflush(stdout);
    }
  }
  bench::drv().check(bench::drv().cuStreamSynchronize(stream), "sync");
  return 0;
}
