// tests/gpu/test_gdn_common.hpp — what the gdn GPU tests share: handles of the catalogued sm90a
// instances, tensors over test buffers, adversarial BF16 inputs, a parallel loop for the oracle,
// and the captured-graph replay loop of the protocol tests.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/gdn.hpp"
#include "oracles/gdn.hpp"

namespace netra::testing::gdn {
namespace ref = netra::oracles::gdn_ref;

inline const device_info& device() {
  static const device_info d = current_cuda_device();
  return d;
}
inline device_ref dev() { return device_of(device()); }

template <class C> const handle<C>& handle_of() {
  static const handle<C> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<C>() + ".cubin", device());
  return h;
}

template <class T> tensor_arg tensor(const gpu_array<T>& a, dtype type, std::initializer_list<i64> extents, std::initializer_list<i64> strides = {},
                                     std::size_t offset = 0) {
  return strided_tensor(a.data() + offset, type, dev(), extents, strides);
}

/// The precompute call over `rows` rows of conv output y [rows, 8192]; a, b: the two halves of `ab`
/// ([2 rows, 32]: a first, then b); q, k [rows, 16, 128], decay, beta [rows, 32] FP32.
inline gdn_precompute_signature precompute_rows(const gpu_array<std::uint16_t>& y, const gpu_array<std::uint16_t>& ab, const gpu_array<float>& a_log,
                                                const gpu_array<float>& dt_bias, const gpu_array<float>& q, const gpu_array<float>& k,
                                                const gpu_array<float>& decay, const gpu_array<float>& beta, std::size_t rows) {
  constexpr i64 D = ref::D, H = ref::H, K = ref::K, HV = ref::HV;
  const i64 r = static_cast<i64>(rows);
  return gdn_precompute_call(device(), tensor(y, dtype::bf16, {r, D}), tensor(ab, dtype::bf16, {r, HV}), tensor(ab, dtype::bf16, {r, HV}, {}, rows * ref::HV),
                             tensor(a_log, dtype::f32, {HV}), tensor(dt_bias, dtype::f32, {HV}), tensor(q, dtype::f32, {r, H, K}),
                             tensor(k, dtype::f32, {r, H, K}), tensor(decay, dtype::f32, {r, HV}), tensor(beta, dtype::f32, {r, HV}));
}

/// BF16 bits of a value drawn for kind (ordinary values of scale `s` mostly, then the
/// adversarial ones: signed zeros, subnormals, large magnitudes, and, where `specials`, NaN/Inf).
inline std::uint16_t bf16_value(std::mt19937& g, float s, bool specials) {
  const unsigned r = g() % 64;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  if (r == 0) return 0x0000;
  if (r == 1) return 0x8000;
  if (r == 2) return static_cast<std::uint16_t>(1 + g() % 0x7F);  // subnormal
  if (r == 3) return ref::to_bf(u(g) * 200.0f);
  if (specials && r == 4) return 0x7FC0;                               // NaN
  if (specials && r == 5) return (g() & 1) ? 0x7F80 : 0xFF80;          // +-Inf
  return ref::to_bf(u(g) * s);
}

inline std::vector<std::uint16_t> bf16_values(std::size_t n, unsigned seed, float s, bool specials) {
  std::mt19937 g(seed);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = bf16_value(g, s, specials);
  return v;
}

/// f(i) for i in [0, n) on the machine's cores.
inline void parallel_for(std::size_t n, const std::function<void(std::size_t)>& f) {
  const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(n, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t i = w; i < n; i += workers) f(i);
    });
  for (auto& t : pool) t.join();
}

/// The first n elements of a device array.
template <class T> std::vector<T> download_prefix(const gpu_array<T>& a, std::size_t n) {
  std::vector<T> v(n);
  drv().check(drv().cuMemcpyDtoH(v.data(), reinterpret_cast<CUdeviceptr>(a.data()), n * sizeof(T)), "cuMemcpyDtoH");
  return v;
}

/// The whole device array into `host` (sized once, reused: no allocation or page faults per step).
template <class T> void download_into(const gpu_array<T>& a, std::vector<T>& host) {
  host.resize(a.count);
  drv().check(drv().cuMemcpyDtoH(host.data(), reinterpret_cast<CUdeviceptr>(a.data()), a.count * sizeof(T)), "cuMemcpyDtoH");
}

template <class T> std::size_t mismatches(const std::vector<T>& a, const std::vector<T>& b, std::size_t n) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return bad;
}

/// The gate parameters of the gdn GPU tests: A_log[h] = -1 + 0.08 h, dt_bias[h] = 0.03 h - 0.5.
inline void gate_parameters(std::vector<float>& a_log, std::vector<float>& dt_bias) {
  a_log.resize(ref::HV), dt_bias.resize(ref::HV);
  for (std::size_t h = 0; h < ref::HV; ++h) a_log[h] = -1.0f + 0.08f * static_cast<float>(h), dt_bias[h] = 0.03f * static_cast<float>(h) - 0.5f;
}

/// A recurrent state pool of `slots` slots, every value uniform in [-0.3, 0.3] (FP32, or its BF16 bits).
template <class Elem> std::vector<Elem> random_state_pool(std::mt19937& rng, std::size_t slots) {
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  std::vector<Elem> pool(slots * ref::state_slot);
  for (auto& e : pool) {
    if constexpr (sizeof(Elem) == 4) e = u(rng);
    else e = ref::to_bf(u(rng));
  }
  return pool;
}

/// One captured graph of p.launch(B, stream) per bucket B, replayed `replays` times: p.prepare(B)
/// (new inputs, slots, lengths) before every replay but the first, p.check(B, false, ...) after each.
template <class Step> void replay_in_graphs(Step& p, std::initializer_list<std::size_t> buckets, int replays) {
  using netra::testing::drv;
  CUstream stream = nullptr;
  drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  for (const std::size_t B : buckets) {
    p.prepare(B);
    drv().check(drv().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
    p.launch(B, stream);
    CUgraph graph = nullptr;
    drv().check(drv().cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    drv().check(drv().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
    for (int r = 0; r < replays; ++r) {
      if (r > 0) p.prepare(B);
      drv().check(drv().cuGraphLaunch(exec, stream), "cuGraphLaunch");
      drv().check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize");
      p.check(B, false, "graph replay");
    }
    drv().cuGraphExecDestroy(exec);
    drv().cuGraphDestroy(graph);
  }
  drv().cuStreamDestroy(stream);
}
}  // namespace netra::testing::gdn
