// netra-bench-moe-persistent: the decode MoE block (router -> experts, moe_block_dispatcher) at
// M in {1, 2, 4, 8, 12, 16} with its experts as the chain (variant unfused: gate_up, act_quant,
// down, as the block dispatches them) and as the persistent kernel (variant persistent,
// contracts::moe_expert_persistent, the catalog's Stages), in one process, eager and
// graph-replayed (bench/gpu_timing.hpp), each call of a burst on its own layer's 257-expert
// weights and hidden rows (8 layers x 771 MB: every call streams cold weights past the 60 MB L2);
// then the persistent kernel alone through its own handle at sm90a Stages 1, 2 and 3 (cubins of
// NETRA_PERSISTENT_VARIANT_DIR) on the block's route metadata. Before timing, call 0 of every
// layer: the persistent block's ids, route weights, gate_up, act, act_scales and out, and each
// Stages variant's four tensors, bit for bit the chain's (the persistent contract's policy; the
// chain's own bound policy is test_moe_block_gpu's). One JSON line per (M, variant), with the
// distinct experts the calls hit (their weight bytes make the roofline); bench/moe_persistent.py
// records them.
#include <cstdio>
#include <cstring>
#include <deque>
#include <set>
#include <string>
#include <type_traits>
#include <thread>
#include <vector>

#include "bench/gpu_timing.hpp"
#include "netra/runtime/ops/moe_block.hpp"
#include "oracles/argmax_rows.hpp"
#include "oracles/moe_experts.hpp"

using namespace netra;

namespace {

constexpr int layers = 8;

struct device_bytes {
  CUdeviceptr p = 0;
  explicit device_bytes(std::size_t bytes) { bench::drv().check(bench::drv().cuMemAlloc(&p, bytes), "cuMemAlloc"); }
  ~device_bytes() { bench::drv().cuMemFree(p); }
  device_bytes(const device_bytes&) = delete;
  template <class T> T* as() const { return reinterpret_cast<T*>(p); }
  template <class T> void upload(const std::vector<T>& v) const { bench::drv().check(bench::drv().cuMemcpyHtoD(p, v.data(), v.size() * sizeof(T)), "HtoD"); }
  template <class T> std::vector<T> download(std::size_t count) const {
    std::vector<T> v(count);
    bench::drv().check(bench::drv().cuMemcpyDtoH(v.data(), p, count * sizeof(T)), "DtoH");
    return v;
  }
};

/// One layer's weights (hashed E4M3 and block scales, oracles::hashed_weights; the same values in
/// every layer, at other addresses) and the router's and shared gate's BF16 weights.
struct layer_weights {
  device_bytes w13{257ull << 21}, w2{257ull << 20}, s13{257 * 128 * 4}, s2{257 * 64 * 4}, router{256 * 2048 * 2}, shared_gate{2048 * 2};
  moe_expert_weights experts() const { return {w13.as<void>(), s13.as<float>(), w2.as<void>(), s2.as<float>()}; }
};

/// One call's tensors: the layer's hidden rows and the block's outputs.
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
  /// The written tensors and their bytes.
  std::vector<std::pair<const device_bytes*, std::size_t>> written() const {
    return {{&ids, m * 36ull}, {&route_weights, m * 36ull}, {&gate_up, m * 9ull * 2048}, {&act, m * 9ull * 512}, {&act_scales, m * 144ull},
            {&out, m * 4096ull}};
  }
  std::vector<std::uint8_t> outputs() const {
    std::vector<std::uint8_t> all;
    for (const auto& [b, n] : written()) {
      const auto v = b->download<std::uint8_t>(n);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  }
  /// 0xFF into every written byte (experts_only: all but the router's ids and weights), so that a
  /// skipped write cannot pass for the chain's.
  void poison(bool experts_only = false) const {
    for (const auto& [b, n] : written())
      if (!experts_only || (b != &ids && b != &route_weights)) bench::drv().check(bench::drv().cuMemsetD8(b->p, 0xFF, n), "cuMemsetD8");
  }
  /// The persistent experts' call on this call's route metadata (the block wrote ids and weights).
  template <class Contract> moe_persistent_signature signature(const handle<Contract>& h, const layer_weights& w) const {
    const device_ref on = device_of(h.device());
    const moe_expert_weights e = w.experts();
    moe_persistent_signature s{Contract::target::id,
                               on,
                               strided_tensor(hidden.as<void>(), dtype::bf16, on, {m, 2048}),
                               strided_tensor(ids.as<void>(), dtype::i32, on, {m, 9}),
                               strided_tensor(route_weights.as<void>(), dtype::f32, on, {m, 9}),
                               strided_tensor(e.w13, dtype::e4m3, on, {257, 1024, 2048}),
                               strided_tensor(e.s13, dtype::f32, on, {257, 8, 16}),
                               strided_tensor(e.w2, dtype::e4m3, on, {257, 2048, 512}),
                               strided_tensor(e.s2, dtype::f32, on, {257, 16, 4}),
                               strided_tensor(gate_up.as<void>(), dtype::bf16, on, {9 * m, 1024}),
                               strided_tensor(act.as<void>(), dtype::e4m3, on, {9 * m, 512}),
                               strided_tensor(act_scales.as<void>(), dtype::f32, on, {9 * m, 4}),
                               strided_tensor(out.as<void>(), dtype::bf16, on, {m, 2048})};
    s.workspace = h.workspace();
    s.workspace_bytes = h.workspace_bytes();
    require_admitted<Contract>("netra-bench-moe-persistent", s);
    return s;
  }
};

}  // namespace

int main() {
  bench::drv().check(bench::drv().cuInit(0), "cuInit");
  const moe_block_dispatcher block(current_cuda_device(), jit::options{});
  CUstream stream;
  bench::drv().check(bench::drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

  // The weights of layer 0 on the host, then copied to every layer.
  const auto gen = oracles::hashed_weights(oracles::weight_params{});
  std::vector<std::uint8_t> w13(257ull << 21), w2(257ull << 20);
  std::vector<float> s13(257 * 128), s2(257 * 64);
  std::vector<std::thread> workers;
  for (int part = 0; part < 16; ++part)
    workers.emplace_back([&, part] {
      for (int e = part; e < 257; e += 16) {
        for (int n = 0; n < 1024; ++n)
          for (int k = 0; k < 2048; ++k) w13[(static_cast<std::size_t>(e) << 21) + n * 2048 + k] = gen.w13(e, n, k);
        for (int n = 0; n < 2048; ++n)
          for (int k = 0; k < 512; ++k) w2[(static_cast<std::size_t>(e) << 20) + n * 512 + k] = gen.w2(e, n, k);
        for (int i = 0; i < 128; ++i) s13[e * 128 + i] = gen.s13(e, i / 16, i % 16);
        for (int i = 0; i < 64; ++i) s2[e * 64 + i] = gen.s2(e, i / 4, i % 4);
      }
    });
  for (auto& t : workers) t.join();
  std::deque<layer_weights> weights(layers);
  for (int l = 0; l < layers; ++l) {
    oracles::xorshift r{static_cast<std::uint64_t>(900 + l)};
    std::vector<std::uint16_t> router(256 * 2048), shared_gate(2048);
    for (auto& v : router) v = bf16_from_f32_reference(0.05f * r.uniform());
    for (auto& v : shared_gate) v = bf16_from_f32_reference(0.02f * r.uniform());
    weights[l].w13.upload(w13);
    weights[l].w2.upload(w2);
    weights[l].s13.upload(s13);
    weights[l].s2.upload(s2);
    weights[l].router.upload(router);
    weights[l].shared_gate.upload(shared_gate);
  }

  for (const int m : {1, 2, 4, 8, 12, 16}) {
    std::deque<call_buffers> calls;  // not movable: built in place
    for (int l = 0; l < layers; ++l) {
      calls.emplace_back(m);
      calls.back().hidden.upload(oracles::hidden_rows(m, 500 + 37 * l + m));
    }
    // Call 0 of every layer: the persistent block is the chain's bits; the distinct experts hit.
    bool equal = true;
    double distinct = 0;
    std::vector<std::vector<std::uint8_t>> chain(layers);
    for (int l = 0; l < layers; ++l) {
      const call_buffers& c = calls[l];
      c.poison();
      block.run(stream, c.args(weights[l]), moe_block_variant::unfused);
      bench::drv().check(bench::drv().cuStreamSynchronize(stream), "sync");
      chain[l] = c.outputs();
      c.poison();
      block.run(stream, c.args(weights[l]), moe_block_variant::persistent);
      bench::drv().check(bench::drv().cuStreamSynchronize(stream), "sync");
      equal = equal && c.outputs() == chain[l];
      std::set<std::int32_t> hit;
      for (auto id : c.ids.download<std::int32_t>(m * 9ull))
        if (id >= 0 && id < 257) hit.insert(id);
      distinct += static_cast<double>(hit.size()) / layers;
    }
    auto report = [&](const char* variant, const bench::timing& t, bool same) {
      std::printf("{\"tokens\": %d, \"variant\": \"%s\", \"graph_us\": %.3f, \"eager_us\": %.3f, \"distinct_experts\": %.3f, "
                  "\"persistent_equals_chain\": %s}\n",
                  m, variant, t.graph_us, t.eager_us, distinct, same ? "true" : "false");
      std::fflush(stdout);
    };
    for (const auto variant : {moe_block_variant::unfused, moe_block_variant::persistent}) {
      const auto burst = [&] {
        for (int l = 0; l < layers; ++l) block.run(stream, calls[l].args(weights[l]), variant);
      };
      report(variant == moe_block_variant::persistent ? "persistent" : "chain", bench::time_eager_and_graph(stream, layers, burst), equal);
    }
    // The persistent kernel alone at each Stages, on the route metadata the block left.
    auto alone = [&]<u32 Stages>(std::integral_constant<u32, Stages>) {
      using C = contracts::moe_expert_persistent<sm90a, 16, Stages>;
      const handle<C> h(std::string(NETRA_PERSISTENT_VARIANT_DIR) + "/stages-" + std::to_string(Stages) + ".cubin", current_cuda_device());
      std::vector<moe_persistent_signature> s;
      bool same = true;
      for (int l = 0; l < layers; ++l) {
        s.push_back(calls[l].signature(h, weights[l]));
        calls[l].poison(true);
        launch_moe_expert_persistent(h, stream, s.back());
        bench::drv().check(bench::drv().cuStreamSynchronize(stream), "sync");
        same = same && calls[l].outputs() == chain[l];
      }
      const auto burst = [&] {
        for (int l = 0; l < layers; ++l) launch_moe_expert_persistent(h, stream, s[l]);
      };
      report(("experts_stages_" + std::to_string(Stages)).c_str(), bench::time_eager_and_graph(stream, layers, burst), same);
    };
    alone(std::integral_constant<u32, 1>{});
    alone(std::integral_constant<u32, 2>{});
    alone(std::integral_constant<u32, 3>{});
  }
  bench::drv().check(bench::drv().cuStreamSynchronize(stream), "sync");
  return 0;
}
