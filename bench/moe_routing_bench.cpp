// netra-bench-moe-routing: times the sm90a routing instances (act_quant, router, shared gate)
// through netra's C++ launch paths, eager (a burst of back-to-back calls) and graph-replayed (the
// same burst captured once), every call reading its own input set (sets together >= 1.5x L2,
// 3x wherever a set is larger than 50 KiB), per docs/benchmarks.md. Prints one JSON object per
// (instance, shape) on stdout.
//
// Diagnostics (graph-replayed only, "family": "diagnostic"): where a call's time goes — the
// router's logits kernel alone, its route kernel alone, and the whole call launched without
// programmatic dependent launch; act_quant and the shared gate without it as well.
//
// --dump DIR also writes, for bench/moe_routing.py's exactness check of the torch peers, fixed
// inputs (random and adversarial) and netra's outputs for them (which the GPU tests have checked
// against the oracles): <name>.in.bin / <name>.out*.bin, raw little-endian arrays.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/gpu_timing.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/moe_act_quant.hpp"
#include "netra/runtime/ops/moe_router.hpp"
#include "netra/runtime/ops/moe_shared_gate.hpp"
#include "oracles/moe_routing_inputs.hpp"

using namespace netra;
using netra::bench::drv;

namespace {
using bench::time_eager_and_graph;
using bench::timing;

/// Graph-replayed median time per call only (3 warm bursts first), for the diagnostics.
template <class Burst> double time_graph(CUstream stream, int calls, Burst burst) {
  for (int w = 0; w < 3; ++w) burst();
  drv().check(drv().cuStreamSynchronize(stream), "sync");
  return bench::graph_median_us(stream, calls, burst);
}

/// The kernels of contract C resolved once from its code object, launched with or without
/// programmatic dependent launch (a handle always launches a kernel as the kernel declares).
template <class C> struct raw_kernels {
  using list = typename kernels::kernels_of<C>::type;
  module m;
  std::vector<kernel_function> functions;
  raw_kernels(const std::string& path, const device_info& device) : m(module::load_file(path, C::target::id, device)) {
    for (const char* symbol : kernel_symbols<list>::value) functions.push_back(m.function(symbol));
  }
  template <class K> void launch(CUstream stream, typename K::params p, const launch_shape& shape, bool pdl) const {
    netra::launch(functions[kernel_index<K, list>::value], shape, stream, &p, pdl);
  }
};

/// Input sets so that one pass over them covers `factor` x L2 (at most 4096 sets).
int input_sets(std::size_t bytes_per_set, int l2) {
  const double factor = bytes_per_set >= 50 * 1024 ? 3.0 : 1.5;
  const auto want = static_cast<std::size_t>(factor * l2 / static_cast<double>(bytes_per_set)) + 1;
  return static_cast<int>(std::clamp<std::size_t>(want, 2, 4096));
}

/// One device allocation holding `sets` copies of `bytes` (each 256-byte aligned).
struct rotated {
  std::size_t stride;
  device_buffer buffer;
  rotated(std::size_t bytes, int sets) : stride((bytes + 255) / 256 * 256), buffer(backend_api::cuda, stride * static_cast<std::size_t>(sets)) {}
  void* at(int s) const { return static_cast<char*>(buffer.data()) + stride * static_cast<std::size_t>(s); }
  template <class T> void fill(const std::vector<T>& host, int sets) const {
    for (int s = 0; s < sets; ++s)
      drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(at(s)), host.data(), host.size() * sizeof(T)), "upload");
  }
};

template <class T> void write_file(const std::string& path, const T* data, std::size_t count) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw error(status::unavailable, "cannot write " + path);
  std::fwrite(data, sizeof(T), count, f);
  std::fclose(f);
}
template <class T> std::vector<T> download(const void* p, std::size_t count) {
  std::vector<T> v(count);
  drv().check(drv().cuMemcpyDtoH(v.data(), reinterpret_cast<CUdeviceptr>(p), count * sizeof(T)), "download");
  return v;
}

std::vector<std::uint16_t> act_rows(long rows, bool adversarial, std::uint64_t seed) {
  std::vector<std::uint16_t> v(static_cast<std::size_t>(rows) * 1024);
  for (long r = 0; r < rows; ++r)
    oracles::fill_act_row(v.data() + r * 1024, adversarial ? static_cast<oracles::act_row>(r % oracles::act_row_kinds) : oracles::act_row::random,
                          seed + static_cast<std::uint64_t>(r));
  return v;
}
std::vector<std::uint16_t> hidden_rows(long m, bool adversarial, std::uint64_t seed) {
  std::vector<std::uint16_t> v(static_cast<std::size_t>(m) * 2048);
  for (long t = 0; t < m; ++t) {
    oracles::fill_normal(v.data() + t * 2048, 2048, 1.0, seed + static_cast<std::uint64_t>(t));
    if (!adversarial) continue;
    std::uint16_t* h = v.data() + t * 2048;
    switch (t % 5) {
      case 1: h[7] = oracles::bf16_nan; break;
      case 2: std::fill(h, h + 2048, 0); break;
      case 3: h[100] = oracles::bf16_inf; break;
      case 4:
        for (int k = 0; k < 2048; ++k) h[k] = oracles::bf16_of(k % 2 ? 1e30f : -1e30f);
        break;
      default: break;
    }
  }
  return v;
}

// ---- act_quant ---------------------------------------------------------------------------------
bool listed(std::initializer_list<long> list, long v) { return std::find(list.begin(), list.end(), v) != list.end(); }

template <class C> void bench_act_quant(const std::string& objects, const device_info& device, CUstream stream, int l2,
                                        std::initializer_list<long> row_counts, std::initializer_list<long> diagnose = {}) {
  const std::string path = objects + "/" + instance_name<C>() + ".cubin";
  const handle<C> h(path, device);
  const raw_kernels<C> raw(path, device);
  using kernel = kernels::moe_act_quant_kernel<C>;
  for (long rows : row_counts) {
    const std::size_t in_bytes = static_cast<std::size_t>(rows) * 2048, out_bytes = static_cast<std::size_t>(rows) * (512 + 16);
    const int sets = input_sets(in_bytes + out_bytes, l2);
    rotated in(in_bytes, sets), out(static_cast<std::size_t>(rows) * 512, sets), scales(static_cast<std::size_t>(rows) * 16, sets);
    in.fill(act_rows(rows, false, 7), sets);
    auto burst = [&] {
      for (int s = 0; s < sets; ++s) moe_act_quant(h, stream, in.at(s), rows, 1024, 1024, out.at(s), static_cast<float*>(scales.at(s)));
    };
    const timing t = time_eager_and_graph(stream, sets, burst);
    std::printf("{\"family\": \"act_quant\", \"instance\": \"%s\", \"rows\": %ld, \"input_sets\": %d, \"bytes\": %zu, "
                "\"netra_eager_us\": %.3f, \"netra_graph_us\": %.3f}\n",
                instance_name<C>().c_str(), rows, sets, in_bytes + out_bytes, t.eager_us, t.graph_us);
    std::fflush(stdout);
    if (!listed(diagnose, rows)) continue;
    auto plain = [&] {
      for (int s = 0; s < sets; ++s)
        raw.template launch<kernel>(stream, {static_cast<const u16*>(in.at(s)), 1024, static_cast<u8*>(out.at(s)), static_cast<float*>(scales.at(s)),
                                             static_cast<u32>(rows)},
                                    kernel::shape(static_cast<u32>(rows)), false);
    };
    std::printf("{\"family\": \"diagnostic\", \"kernel\": \"act_quant\", \"instance\": \"%s\", \"size\": %ld, \"graph_us\": %.3f, "
                "\"no_pdl_graph_us\": %.3f}\n",
                instance_name<C>().c_str(), rows, t.graph_us, time_graph(stream, sets, plain));
    std::fflush(stdout);
  }
}

template <class C> void dump_act_quant(const std::string& objects, const device_info& device, const std::string& dir) {
  const handle<C> h(objects + "/" + instance_name<C>() + ".cubin", device);
  const long rows = 4608;
  for (bool adversarial : {false, true}) {
    const auto host = act_rows(rows, adversarial, 11);
    device_buffer in(backend_api::cuda, host.size() * 2), out(backend_api::cuda, rows * 512), scales(backend_api::cuda, rows * 16);
    drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(in.data()), host.data(), host.size() * 2), "upload");
    moe_act_quant(h, nullptr, in.data(), rows, 1024, 1024, out.data(), static_cast<float*>(scales.data()));
    const std::string base = dir + "/act_quant_" + (adversarial ? "adversarial" : "random");
    write_file(base + ".in.bin", host.data(), host.size());
    const auto q = download<std::uint8_t>(out.data(), rows * 512);
    const auto s = download<float>(scales.data(), rows * 4);
    write_file(base + ".out_q.bin", q.data(), q.size());
    write_file(base + ".out_scales.bin", s.data(), s.size());
  }
}

// ---- router ------------------------------------------------------------------------------------
/// Where a two-kernel call's time goes: each kernel alone (the route kernel re-reads the
/// workspace the last call left), and the call with both kernels launched without programmatic
/// dependent launch.
template <class C>
void diagnose_router(const handle<C>& h, const std::string& path, const device_info& device, CUstream stream, long m, int sets, rotated& hidden,
                     rotated& weight, rotated& ids, rotated& weights, double graph_us) {
  const raw_kernels<C> raw(path, device);
  using logits = kernels::moe_router_logits_kernel<C>;
  using route = kernels::moe_router_route_kernel<C>;
  auto* partials = static_cast<float*>(h.workspace());
  const auto tokens = static_cast<u32>(m);
  auto logits_params = [&](int s) {
    return typename logits::params{static_cast<const u16*>(hidden.at(s)), 2048, static_cast<const u16*>(weight.at(s)), partials, tokens};
  };
  auto route_params = [&](int s) {
    return typename route::params{partials, static_cast<i32*>(ids.at(s)), static_cast<float*>(weights.at(s)), tokens, nullptr, 0, nullptr};
  };
  auto logits_only = [&] {
    for (int s = 0; s < sets; ++s) h.template launch<logits>(stream, logits_params(s), logits::shape(tokens));
  };
  auto route_only = [&] {
    for (int s = 0; s < sets; ++s) h.template launch<route>(stream, route_params(s), route::shape(tokens));
  };
  auto plain = [&] {
    for (int s = 0; s < sets; ++s) {
      raw.template launch<logits>(stream, logits_params(s), logits::shape(tokens), false);
      raw.template launch<route>(stream, route_params(s), route::shape(tokens), false);
    }
  };
  const double logits_us = time_graph(stream, sets, logits_only), route_us = time_graph(stream, sets, route_only);
  const double plain_us = time_graph(stream, sets, plain);
  std::printf("{\"family\": \"diagnostic\", \"kernel\": \"router\", \"instance\": \"%s\", \"size\": %ld, \"graph_us\": %.3f, "
              "\"no_pdl_graph_us\": %.3f, \"logits_alone_graph_us\": %.3f, \"route_alone_graph_us\": %.3f}\n",
              instance_name<C>().c_str(), m, graph_us, plain_us, logits_us, route_us);
  std::fflush(stdout);
}

/// How many of the cluster kernel's clusters the device holds at once (each serves C's 4-token
/// tile; a call with more tiles runs them in waves).
template <class C> void report_resident_clusters(const std::string& path, const device_info& device) {
  using K = kernels::moe_router_cluster_kernel<C>;
  const module m = module::load_file(path, C::target::id, device);
  const kernel_function f = m.function(K::symbol, false, 0, K::cluster_size, K::workgroup_size);
  const cuda_launch_config c({{K::cluster_size, 1, 1}, K::workgroup_size, 0}, nullptr, false, K::cluster_size);
  int clusters = 0;
  drv().check(drv().cuOccupancyMaxActiveClusters(&clusters, static_cast<CUfunction>(f.handle), &c.config), "cuOccupancyMaxActiveClusters");
  std::printf("{\"family\": \"diagnostic\", \"kernel\": \"router\", \"instance\": \"%s\", \"cluster_size\": %u, \"resident_clusters\": %d, "
              "\"tokens_per_cluster\": %u}\n",
              instance_name<C>().c_str(), K::cluster_size, clusters, C::cluster_token_tile);
  std::fflush(stdout);
}

template <class C> void bench_router(const std::string& objects, const device_info& device, CUstream stream, int l2,
                                     std::initializer_list<long> token_counts, std::initializer_list<long> diagnose = {}) {
  const std::string path = objects + "/" + instance_name<C>() + ".cubin";
  const handle<C> h(path, device);
  std::vector<std::uint16_t> w(256 * 2048), gate_host(2048);
  oracles::fill_normal(w.data(), 256 * 2048, 0.03, 3);
  oracles::fill_normal(gate_host.data(), 2048, 0.03, 4);
  device_buffer gate(backend_api::cuda, gate_host.size() * 2);  // SharedGate: the gate weight (L2-resident, 4 KiB)
  drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(gate.data()), gate_host.data(), gate_host.size() * 2), "upload");
  for (long m : token_counts) {
    const std::size_t hidden_bytes = static_cast<std::size_t>(m) * 4096, weight_bytes = 256 * 4096, out_bytes = static_cast<std::size_t>(m) * 72;
    const int sets = input_sets(hidden_bytes + weight_bytes + out_bytes, l2);
    rotated hidden(hidden_bytes, sets), weight(weight_bytes, sets), ids(out_bytes / 2, sets), weights(out_bytes / 2, sets);
    hidden.fill(hidden_rows(m, false, 5), sets);
    weight.fill(w, sets);
    auto burst = [&] {
      for (int s = 0; s < sets; ++s)
        moe_router(h, stream, hidden.at(s), m, 2048, 2048, weight.at(s), 256, static_cast<i32*>(ids.at(s)), static_cast<float*>(weights.at(s)),
                   C::shared_gate ? gate.data() : nullptr);
    };
    const timing t = time_eager_and_graph(stream, sets, burst);
    std::printf("{\"family\": \"router\", \"instance\": \"%s\", \"tactic\": \"%s\", \"kernels\": %u, \"shared_gate\": %s, \"tokens\": %ld, "
                "\"input_sets\": %d, \"bytes\": %zu, \"netra_eager_us\": %.3f, \"netra_graph_us\": %.3f}\n",
                instance_name<C>().c_str(), C::exact ? "exact_fp32" : "matrix_bf16", C::cluster ? 1u : 2u, C::shared_gate ? "true" : "false", m, sets,
                hidden_bytes + weight_bytes + out_bytes, t.eager_us, t.graph_us);
    std::fflush(stdout);
    if constexpr (C::cluster == 0) {
      if (listed(diagnose, m)) diagnose_router(h, path, device, stream, m, sets, hidden, weight, ids, weights, t.graph_us);
    }
  }
  if constexpr (C::cluster != 0) report_resident_clusters<C>(path, device);
}

template <class C> void dump_router(const std::string& objects, const device_info& device, const std::string& dir, long m) {
  const handle<C> h(objects + "/" + instance_name<C>() + ".cubin", device);
  std::vector<std::uint16_t> w(256 * 2048);
  oracles::fill_normal(w.data(), 256 * 2048, 0.03, 3);
  device_buffer weight(backend_api::cuda, w.size() * 2);
  drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(weight.data()), w.data(), w.size() * 2), "upload");
  write_file(dir + "/router_weight.bin", w.data(), w.size());
  for (bool adversarial : {false, true}) {
    const auto host = hidden_rows(m, adversarial, 21);
    device_buffer hidden(backend_api::cuda, host.size() * 2), ids(backend_api::cuda, m * 36), weights(backend_api::cuda, m * 36);
    drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(hidden.data()), host.data(), host.size() * 2), "upload");
    moe_router(h, nullptr, hidden.data(), m, 2048, 2048, weight.data(), 256, static_cast<i32*>(ids.data()), static_cast<float*>(weights.data()));
    const std::string base = dir + "/router_" + std::string(C::exact ? "exact_" : "matrix_") + (adversarial ? "adversarial" : "random");
    write_file(base + ".in.bin", host.data(), host.size());
    const auto i = download<std::int32_t>(ids.data(), m * 9);
    const auto v = download<float>(weights.data(), m * 9);
    write_file(base + ".out_ids.bin", i.data(), i.size());
    write_file(base + ".out_weights.bin", v.data(), v.size());
  }
}

// ---- shared gate -------------------------------------------------------------------------------
template <class C> void bench_shared_gate(const std::string& objects, const device_info& device, CUstream stream, int l2,
                                          std::initializer_list<long> token_counts, std::initializer_list<long> diagnose = {}) {
  const std::string path = objects + "/" + instance_name<C>() + ".cubin";
  const handle<C> h(path, device);
  const raw_kernels<C> raw(path, device);
  using kernel = kernels::moe_shared_gate_kernel<C>;
  std::vector<std::uint16_t> w(2048);
  oracles::fill_normal(w.data(), 2048, 0.03, 4);
  for (long m : token_counts) {
    const std::size_t hidden_bytes = static_cast<std::size_t>(m) * 4096, out_bytes = static_cast<std::size_t>(m) * 72;
    const int sets = input_sets(hidden_bytes + 4096 + out_bytes, l2);
    rotated hidden(hidden_bytes, sets), weight(4096, sets), ids(out_bytes / 2, sets), weights(out_bytes / 2, sets);
    hidden.fill(hidden_rows(m, false, 9), sets);
    weight.fill(w, sets);
    auto burst = [&] {
      for (int s = 0; s < sets; ++s)
        moe_shared_gate(h, stream, hidden.at(s), m, 2048, 2048, weight.at(s), static_cast<i32*>(ids.at(s)), static_cast<float*>(weights.at(s)));
    };
    const timing t = time_eager_and_graph(stream, sets, burst);
    std::printf("{\"family\": \"shared_gate\", \"instance\": \"%s\", \"tokens\": %ld, \"input_sets\": %d, \"bytes\": %zu, "
                "\"netra_eager_us\": %.3f, \"netra_graph_us\": %.3f}\n",
                instance_name<C>().c_str(), m, sets, hidden_bytes + 4096 + out_bytes / 9, t.eager_us, t.graph_us);
    std::fflush(stdout);
    if (!listed(diagnose, m)) continue;
    auto plain = [&] {
      for (int s = 0; s < sets; ++s)
        raw.template launch<kernel>(stream, {static_cast<const u16*>(hidden.at(s)), 2048, static_cast<const u16*>(weight.at(s)),
                                             static_cast<i32*>(ids.at(s)), static_cast<float*>(weights.at(s)), static_cast<u32>(m)},
                                    kernel::shape(static_cast<u32>(m)), false);
    };
    std::printf("{\"family\": \"diagnostic\", \"kernel\": \"shared_gate\", \"instance\": \"%s\", \"size\": %ld, \"graph_us\": %.3f, "
                "\"no_pdl_graph_us\": %.3f}\n",
                instance_name<C>().c_str(), m, t.graph_us, time_graph(stream, sets, plain));
    std::fflush(stdout);
  }
}

template <class C> void dump_shared_gate(const std::string& objects, const device_info& device, const std::string& dir, long m) {
  const handle<C> h(objects + "/" + instance_name<C>() + ".cubin", device);
  std::vector<std::uint16_t> w(2048);
  oracles::fill_normal(w.data(), 2048, 0.03, 4);
  device_buffer weight(backend_api::cuda, 4096);
  drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(weight.data()), w.data(), 4096), "upload");
  write_file(dir + "/shared_gate_weight.bin", w.data(), w.size());
  for (bool adversarial : {false, true}) {
    const auto host = hidden_rows(m, adversarial, 31);
    device_buffer hidden(backend_api::cuda, host.size() * 2), ids(backend_api::cuda, m * 36), weights(backend_api::cuda, m * 36);
    drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(hidden.data()), host.data(), host.size() * 2), "upload");
    moe_shared_gate(h, nullptr, hidden.data(), m, 2048, 2048, weight.data(), static_cast<i32*>(ids.data()), static_cast<float*>(weights.data()));
    const std::string base = dir + "/shared_gate_" + (adversarial ? "adversarial" : "random");
    write_file(base + ".in.bin", host.data(), host.size());
    const auto i = download<std::int32_t>(ids.data(), m * 9);
    const auto v = download<float>(weights.data(), m * 9);
    write_file(base + ".out_ids.bin", i.data(), i.size());
    write_file(base + ".out_weights.bin", v.data(), v.size());
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::string objects = NETRA_CODE_OBJECT_DIR, dump;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dump" && i + 1 < argc) dump = argv[++i];
    else objects = a;
  }
  const auto device = current_cuda_device();
  int l2 = 0;
  drv().check(drv().cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device.ordinal), "L2 size");
  if (!dump.empty()) {
    dump_act_quant<contracts::moe_act_quant_batch<sm90a>>(objects, device, dump);
    dump_router<contracts::moe_router_exact<sm90a>>(objects, device, dump, 32);
    dump_shared_gate<contracts::moe_shared_gate_reference<sm90a>>(objects, device, dump, 64);
    return 0;
  }
  CUstream stream;
  drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  bench_act_quant<contracts::moe_act_quant_decode<sm90a>>(objects, device, stream, l2, {9}, {9});
  bench_act_quant<contracts::moe_act_quant_batch<sm90a>>(objects, device, stream, l2, {9, 144, 1152, 4608}, {1152, 4608});
  bench_router<contracts::moe_router_exact<sm90a>>(objects, device, stream, l2, {1, 4, 16, 32}, {1, 32});
  bench_router<contracts::moe_router<sm90a, router_tactic::exact_fp32, 32, 0, 16>>(objects, device, stream, l2, {1, 4, 16, 32});
  bench_router<contracts::moe_router_exact_shared_gate<sm90a>>(objects, device, stream, l2, {1, 4, 16});
  bench_router<contracts::moe_router<sm90a, router_tactic::exact_fp32, 16, 1>>(objects, device, stream, l2, {1, 4, 16});
  bench_router<contracts::moe_router_matrix<sm90a>>(objects, device, stream, l2, {1, 16, 32, 64, 128}, {1, 128});
  bench_router<contracts::moe_router<sm90a, router_tactic::exact_fp32, 128>>(objects, device, stream, l2, {64, 128}, {128});
  bench_router<contracts::moe_router_matrix_shared_gate<sm90a>>(objects, device, stream, l2, {17, 32, 64, 96, 128, 256, 768});
  bench_shared_gate<contracts::moe_shared_gate_reference<sm90a>>(objects, device, stream, l2, {1, 16, 128, 512}, {512});
  drv().cuStreamDestroy(stream);
  return 0;
}
