// All 257 experts of one weight set on the device and on the host (hashed E4M3 weights and
// block scales, oracles::hashed_weights), for the GPU tests of the grouped experts and the block.
#pragma once
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/ops/moe_experts.hpp"
#include "oracles/moe_experts.hpp"

namespace netra::testing {

/// Experts in [unused_from, 256) hold E4M3 NaN and NaN scales: a test that routes to none of them
/// sees NaN where the oracle is finite if a kernel reads one. Expert 9 has one NaN block scale in
/// each matrix.
struct expert_store {
  static constexpr int first_unused = 232;  // the default unused range [232, 256)
  int unused_from;
  oracles::weight_params params;
  std::vector<std::uint8_t> w13 = std::vector<std::uint8_t>(257ull << 21), w2 = std::vector<std::uint8_t>(257ull << 20);
  std::vector<float> s13 = std::vector<float>(257 * 128), s2 = std::vector<float>(257 * 64);
  gpu_array<std::uint8_t> d13{257ull << 21}, d2{257ull << 20};
  gpu_array<float> ds13{257 * 128}, ds2{257 * 64};
  oracles::expert_weight_view view{[this](int e, int n, int k) { return w13[(static_cast<std::size_t>(e) << 21) + n * 2048 + k]; },
                                   [this](int e, int n, int k) { return w2[(static_cast<std::size_t>(e) << 20) + n * 512 + k]; },
                                   [this](int e, int i, int j) { return s13[e * 128 + i * 16 + j]; },
                                   [this](int e, int i, int j) { return s2[e * 64 + i * 4 + j]; }};

  explicit expert_store(const oracles::weight_params& p, int unused = first_unused) : unused_from(unused), params(p) {
    const auto gen = oracles::hashed_weights(p);
    std::vector<std::thread> workers;
    for (int part = 0; part < 16; ++part)
      workers.emplace_back([&, part] {
        for (int e = part; e < 257; e += 16) {
          const bool nan = e >= unused_from && e < 256;
          for (int n = 0; n < 1024; ++n)
            for (int k = 0; k < 2048; ++k) w13[(static_cast<std::size_t>(e) << 21) + n * 2048 + k] = nan ? 0x7F : gen.w13(e, n, k);
          for (int n = 0; n < 2048; ++n)
            for (int k = 0; k < 512; ++k) w2[(static_cast<std::size_t>(e) << 20) + n * 512 + k] = nan ? 0x7F : gen.w2(e, n, k);
          for (int i = 0; i < 128; ++i) s13[e * 128 + i] = nan ? std::nanf("") : gen.s13(e, i / 16, i % 16);
          for (int i = 0; i < 64; ++i) s2[e * 64 + i] = nan ? std::nanf("") : gen.s2(e, i / 4, i % 4);
        }
      });
    for (auto& t : workers) t.join();
    s13[9 * 128 + 2 * 16 + 3] = std::nanf("");
    s2[9 * 64 + 5 * 4 + 1] = std::nanf("");
    d13.upload(w13);
    d2.upload(w2);
    ds13.upload(s13);
    ds2.upload(s2);
  }
  moe_expert_weights device() const { return {d13.data(), ds13.data(), d2.data(), ds2.data()}; }
};

}  // namespace netra::testing
