// tests/kernels/attention_block_data.hpp — one random attention block for the plan tests (GQA8
// shape: head dim 256, 64 positions): Rows BF16 query rows, E4M3 K and V, BF16 weights P, and the
// exact (FP64) S = Q K^T and O = P V the plans' instruction sequences must reproduce.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "netra/dsl/convert_e4m3_bf16.hpp"

namespace netra::testing {

template <unsigned Rows> struct attention_block {
  static constexpr unsigned rows = Rows, positions = 64, dim = 256;
  std::vector<std::uint16_t> q;    // [Rows][256] bf16
  std::vector<std::uint8_t> k, v;  // [64][256] e4m3
  std::vector<std::uint16_t> p;    // [Rows][64] bf16

  static attention_block random(std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0.0f, 2.0f);
    attention_block b;
    for (unsigned i = 0; i < Rows * dim; ++i) b.q.push_back(bf16_from_f32_reference(n(rng)));
    for (unsigned i = 0; i < positions * dim; ++i) {
      b.k.push_back(e4m3_from_f32_reference(n(rng)));
      b.v.push_back(e4m3_from_f32_reference(n(rng)));
    }
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (unsigned i = 0; i < Rows * positions; ++i) b.p.push_back(bf16_from_f32_reference(u(rng)));
    return b;
  }
  double qk_exact(unsigned row, unsigned pos) const {
    double s = 0;
    for (unsigned d = 0; d < dim; ++d) s += static_cast<double>(f32_from_bf16(q[row * dim + d])) * f32_from_e4m3(k[pos * dim + d]);
    return s;
  }
  double pv_exact(unsigned row, unsigned d) const {
    double s = 0;
    for (unsigned pos = 0; pos < positions; ++pos) s += static_cast<double>(f32_from_bf16(p[row * positions + pos])) * f32_from_e4m3(v[pos * dim + d]);
    return s;
  }
};

}  // namespace netra::testing
