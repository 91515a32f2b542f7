// netra-bench-moe-grouped: times netra's grouped expert path (plan, gate_up with act_quant fused,
// down, the route sum, and the four together) on the GPU for M in {32, 64, 96, 128, 256, 768},
// eager and graph-replayed (bench/gpu_timing.hpp), each call of a burst on its own layer's
// 257-expert weights (LAYERS copies, 771 MB each: every call streams cold weights past the 60 MB
// L2). At M = 768 both sm90a mappings of down are timed (the split-K pair and KParts 1), which is
// how the split-K contract's sm90a mapping is chosen; at every M also the register forms and the
// mid and large ring forms (tactics/moe_grouped.hpp), and each pair of consecutive stages in one burst (the
// stage boundaries). Before timing, call 0 of every M is checked
// against the host oracles (tests/oracles): gate_up's rows within the expert policy, act_quant of
// them bit for bit, the route sum within its policy (KParts 1) or the split-K bound (KParts 2), on
// a subset of rows. One JSON line per (M, configuration, stage) on stdout; bench/moe_grouped.py
// records them.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/gpu_timing.hpp"
#include "bench/moe_bench_memory.hpp"
#include "netra/runtime/ops/moe_grouped.hpp"
#include "oracles/moe_grouped.hpp"
#include "oracles/moe_routing.hpp"

using namespace netra;

namespace {

constexpr int layers = 8;

using bench::device_bytes;
using bench::host_experts;

template <class Contract> const handle<Contract>& handle_of() {
  static const handle<Contract> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<Contract>() + ".cubin", current_cuda_device());
  return h;
}

bool sampled_row(int n) { return n % 128 == 5; }

template <class Config> struct pipeline {
  using down = typename Config::down;
  int m;
  const std::vector<moe_expert_weights>& w;
  device_bytes hidden, ids, weights, plan{Config::plan::layout::bytes}, act, scales, partials{down::partials_bytes}, out, gate_up;
  pipeline(int tokens, const std::vector<moe_expert_weights>& weights_per_layer, const std::vector<std::uint16_t>& h, const std::vector<std::int32_t>& id,
           const std::vector<float>& rw)
      : m(tokens), w(weights_per_layer), hidden(h.size() * 2), ids(id.size() * 4), weights(rw.size() * 4), act(id.size() * 512),
        scales(id.size() * 16), out(static_cast<std::size_t>(tokens) * 4096), gate_up(id.size() * 2048) {
    hidden.upload(h);
    ids.upload(id);
    weights.upload(rw);
  }
  void plan_stage(CUstream s) const {
    moe_grouped_plan(handle_of<typename Config::plan>(), s, hidden.as<void>(), ids.as<i32>(), plan.as<void>(), plan.n, m);
  }
  void gate_up_stage(CUstream s, int l, bool rows = false) const {
    moe_grouped_gate_up(handle_of<typename Config::gate_up>(), s, plan.as<void>(), plan.n, w[l], act.as<void>(), scales.as<float>(),
                        rows ? gate_up.as<void>() : nullptr, m);
  }
  void down_stage(CUstream s, int l) const {
    moe_grouped_down(handle_of<down>(), s, plan.as<void>(), plan.n, act.as<void>(), scales.as<float>(), w[l], partials.as<void>(), partials.n, m);
  }
  void reduce_stage(CUstream s) const {
    moe_grouped_reduce(handle_of<typename Config::reduce>(), s, partials.as<void>(), partials.n, ids.as<i32>(), weights.as<float>(), out.as<void>(), m);
  }
};

template <class Config>
void run_config(const char* name, int m, const host_experts& hx, const std::vector<moe_expert_weights>& w, CUstream stream, double distinct) {
  const auto hidden = oracles::hidden_rows(m, 1000 + m);
  const auto ids = oracles::routed_ids(m, 1000 + m);
  std::vector<float> rw(ids.size());
  oracles::xorshift r{static_cast<std::uint64_t>(m)};
  for (auto& v : rw) v = 0.02f + 0.1f * (r.uniform() + 1.0f);
  pipeline<Config> p(m, w, hidden, ids, rw);

  // call 0, checked
  p.plan_stage(stream);
  p.gate_up_stage(stream, 0, true);
  p.down_stage(stream, 0);
  p.reduce_stage(stream);
  bench::drv().check(bench::drv().cuStreamSynchronize(stream), "sync");
  const std::size_t routes = ids.size();
  const auto gu = p.gate_up.template download<std::uint16_t>(routes * 1024);
  const auto act = p.act.template download<std::uint8_t>(routes * 512);
  const auto scales = p.scales.template download<float>(routes * 4);
  const auto out = p.out.template download<std::uint16_t>(static_cast<std::size_t>(m) * 2048);
  const auto gref = oracles::gate_up_reference(m, hidden.data(), ids.data(), hx.view, sampled_row);
  const auto grep = oracles::check_policy(gref, gu, [](std::size_t i) { return sampled_row(static_cast<int>(i % 1024)); });
  std::vector<std::uint8_t> qa(routes * 512);
  std::vector<float> qs(routes * 4);
  oracles::act_quant(gu.data(), static_cast<std::int64_t>(routes), 1024, qa.data(), qs.data());
  bool correct = grep.failures == 0 && qa == act && std::memcmp(qs.data(), scales.data(), 4 * qs.size()) == 0;
  long down_failures = 0;
  if constexpr (Config::down::k_parts == 1) {
    const auto dref = oracles::down_reference(m, act.data(), scales.data(), ids.data(), rw.data(), hx.view, sampled_row);
    down_failures = oracles::check_policy(dref, out, [](std::size_t i) { return sampled_row(static_cast<int>(i % 2048)); }).failures;
  } else {
    const auto sref = oracles::split_k_down_reference(m, act.data(), scales.data(), ids.data(), rw.data(), hx.view, sampled_row);
    for (std::size_t i = 0; i < sref.size(); ++i)
      if (sampled_row(static_cast<int>(i % 2048)) && !oracles::within_split_k_policy(sref[i], out[i])) ++down_failures;
  }
  correct = correct && down_failures == 0;

  auto record = [&](const char* stage, const std::string& instance, const bench::timing& t) {
    std::printf("{\"stage\": \"%s\", \"tokens\": %d, \"configuration\": \"%s\", \"instance\": \"%s\", \"eager_us\": %.3f, \"graph_us\": %.3f, "
                "\"distinct_experts\": %.0f, \"correct\": %s, \"gate_up_failures\": %ld, \"gate_up_worst\": %.4f, \"down_failures\": %ld, "
                "\"layers\": %d}\n",
                stage, m, name, instance.c_str(), t.eager_us, t.graph_us, distinct, correct ? "true" : "false", grep.failures, grep.worst,
                down_failures, layers);
    std::fflush(stdout);
  };
  auto burst = [&](auto one) {
    return [&, one] {
      for (int l = 0; l < layers; ++l) one(l);
    };
  };
  record("plan", instance_name<typename Config::plan>(), bench::time_eager_and_graph(stream, layers, burst([&](int) { p.plan_stage(stream); })));
  record("gate_up", instance_name<typename Config::gate_up>(), bench::time_eager_and_graph(stream, layers, burst([&](int l) { p.gate_up_stage(stream, l); })));
  record("down", instance_name<typename Config::down>(), bench::time_eager_and_graph(stream, layers, burst([&](int l) { p.down_stage(stream, l); })));
  record("reduce", instance_name<typename Config::reduce>(), bench::time_eager_and_graph(stream, layers, burst([&](int) { p.reduce_stage(stream); })));
  // the stage boundaries: each pair of consecutive stages in one burst (against the sum of the two alone)
  record("plan_gate_up", instance_name<typename Config::plan>() + " + " + instance_name<typename Config::gate_up>(),
         bench::time_eager_and_graph(stream, layers, burst([&](int l) {
           p.plan_stage(stream);
           p.gate_up_stage(stream, l);
         })));
  record("gate_up_down", instance_name<typename Config::gate_up>() + " + " + instance_name<typename Config::down>(),
         bench::time_eager_and_graph(stream, layers, burst([&](int l) {
           p.gate_up_stage(stream, l);
           p.down_stage(stream, l);
         })));
  record("down_reduce", instance_name<typename Config::down>() + " + " + instance_name<typename Config::reduce>(),
         bench::time_eager_and_graph(stream, layers, burst([&](int l) {
           p.down_stage(stream, l);
           p.reduce_stage(stream);
         })));
  record("experts", std::string("plan+gate_up+down+reduce (") + name + ")", bench::time_eager_and_graph(stream, layers, burst([&](int l) {
                                                                               p.plan_stage(stream);
                                                                               p.gate_up_stage(stream, l);
                                                                               p.down_stage(stream, l);
                                                                               p.reduce_stage(stream);
                                                                             })));
}

/// A comma-separated list of argument `i` ("" when absent: every item).
std::set<std::string> list_arg(int argc, char** argv, int i) {
  std::set<std::string> items;
  if (i >= argc) return items;
  std::string s = argv[i];
  for (std::size_t at = 0; at <= s.size();) {
    const std::size_t end = std::min(s.find(',', at), s.size());
    if (end > at) items.insert(s.substr(at, end - at));
    at = end + 1;
  }
  return items;
}

}  // namespace

// usage: netra-bench-moe-grouped [TOKENS [CONFIGURATIONS]], comma-separated (default: every M of
// 32, 64, 96, 128, 256, 768 and every configuration that serves it)
int main(int argc, char** argv) {
  const std::set<std::string> tokens = list_arg(argc, argv, 1), configs = list_arg(argc, argv, 2);
  auto wanted = [&](const std::set<std::string>& set, const std::string& item) { return set.empty() || set.count(item) > 0; };
  const device_info device = current_cuda_device();
  CUstream stream;
  bench::drv().check(bench::drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  const host_experts hx;
  std::vector<std::unique_ptr<device_bytes>> buffers;
  std::vector<moe_expert_weights> w;
  for (int l = 0; l < layers; ++l) {
    auto* b13 = buffers.emplace_back(std::make_unique<device_bytes>(hx.w13.size())).get();
    auto* b2 = buffers.emplace_back(std::make_unique<device_bytes>(hx.w2.size())).get();
    auto* c13 = buffers.emplace_back(std::make_unique<device_bytes>(hx.s13.size() * 4)).get();
    auto* c2 = buffers.emplace_back(std::make_unique<device_bytes>(hx.s2.size() * 4)).get();
    b13->upload(hx.w13);
    b2->upload(hx.w2);
    c13->upload(hx.s13);
    c2->upload(hx.s2);
    w.push_back({b13->as<void>(), c13->as<float>(), b2->as<void>(), c2->as<float>()});
  }
  std::fprintf(stderr, "netra-bench-moe-grouped on %s\n", device.name.c_str());
  for (int m : {32, 64, 96, 128, 256, 768}) {
    if (!wanted(tokens, std::to_string(m))) continue;
    const auto ids = oracles::routed_ids(m, 1000 + m);
    std::set<int> distinct(ids.begin(), ids.end());
    const double d = static_cast<double>(distinct.size());
    auto run = [&]<class Config>(const char* name) {
      if (wanted(configs, name) && Config::contains(m)) run_config<Config>(name, m, hx, w, stream, d);
    };
    // the ring forms before the dispatched ones (tactics::grouped_dispatch<sm90a>: mid_trim_rows8,
    // large_dring), the register forms and at 768 the split-K pair, measured against them
    run.template operator()<tactics::grouped_mid_ring<sm90a>>("mid_ring");
    run.template operator()<tactics::grouped_mid_ring2<sm90a>>("mid_ring2");
    run.template operator()<tactics::grouped_mid_dring<sm90a>>("mid_dring");
    run.template operator()<tactics::grouped_mid_trim_rows8<sm90a>>("mid_trim_rows8");
    run.template operator()<tactics::grouped_mid_trim_rows16<sm90a>>("mid_trim_rows16");
    run.template operator()<tactics::grouped_mid<sm90a>>("mid");
    run.template operator()<tactics::grouped_large_ring<sm90a>>("large_ring");
    run.template operator()<tactics::grouped_large_dring<sm90a>>("large_dring");
    run.template operator()<tactics::grouped_large<sm90a>>("large");
    run.template operator()<tactics::grouped_split_k<sm90a>>("split_k");
  }
  return 0;
}
