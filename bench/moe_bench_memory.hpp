// bench/moe_bench_memory.hpp — what the MoE GPU benchmark drivers share: a device allocation
// (CUDA driver API) and the model's 257 experts' hashed E4M3 weights and block scales on the host
// (oracles::hashed_weights, filled by 16 threads), with an oracle view of them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "bench/gpu_timing.hpp"
#include "oracles/moe_experts.hpp"

namespace netra::bench {

struct device_bytes {
  CUdeviceptr p = 0;
  std::size_t n = 0;
  explicit device_bytes(std::size_t bytes) : n(bytes) { drv().check(drv().cuMemAlloc(&p, bytes), "cuMemAlloc"); }
  ~device_bytes() { drv().cuMemFree(p); }
  device_bytes(const device_bytes&) = delete;
  template <class T> T* as() const { return reinterpret_cast<T*>(p); }
  template <class T> void upload(const std::vector<T>& v) const { drv().check(drv().cuMemcpyHtoD(p, v.data(), v.size() * sizeof(T)), "HtoD"); }
  template <class T> std::vector<T> download(std::size_t count) const {
    std::vector<T> v(count);
    drv().check(drv().cuMemcpyDtoH(v.data(), p, count * sizeof(T)), "DtoH");
    return v;
  }
};

/// W13 [257, 1024, 2048] and W2 [257, 2048, 512] (E4M3 bytes), S13 [257, 8, 16] and S2 [257, 16, 4].
struct host_experts {
  std::vector<std::uint8_t> w13 = std::vector<std::uint8_t>(257ull << 21), w2 = std::vector<std::uint8_t>(257ull << 20);
  std::vector<float> s13 = std::vector<float>(257 * 128), s2 = std::vector<float>(257 * 64);
  oracles::expert_weight_view view{[this](int e, int n, int k) { return w13[(static_cast<std::size_t>(e) << 21) + n * 2048 + k]; },
                                   [this](int e, int n, int k) { return w2[(static_cast<std::size_t>(e) << 20) + n * 512 + k]; },
                                   [this](int e, int i, int j) { return s13[e * 128 + i * 16 + j]; },
                                   [this](int e, int i, int j) { return s2[e * 64 + i * 4 + j]; }};
  host_experts() {
    const auto gen = oracles::hashed_weights(oracles::weight_params{});
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
  }
};

}  // namespace netra::bench
