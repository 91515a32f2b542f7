// tests/oracles/moe_routing_inputs.hpp — deterministic inputs for the routing tests: random BF16
// data and adversarial rows (NaN, ±Inf, ±0, subnormals, saturation, ties, amax = 0).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "netra/dsl/convert.hpp"

namespace netra::oracles {

/// splitmix64: small, deterministic, good enough for test data.
struct rng {
  std::uint64_t s;
  explicit rng(std::uint64_t seed) : s(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  double normal() {
    const double u1 = uniform() + 0x1p-60, u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
};

inline std::uint16_t bf16_of(float x) { return bf16_from_f32_reference(x); }
inline constexpr std::uint16_t bf16_nan = 0x7FC0, bf16_inf = 0x7F80, bf16_neg_inf = 0xFF80, bf16_neg_zero = 0x8000,
                               bf16_max = 0x7F7F, bf16_min_subnormal = 0x0001;

/// Kinds of act_quant rows ([gate | up], 1024 BF16 values).
enum class act_row : int {
  random,           // gate ~ N(0, 2), up ~ N(0, 1)
  nan_group,        // one NaN gate in group 1; group 0 has gate = -Inf (SiLU = NaN)
  inf_group,        // an infinite product in group 2, an overflowing product in group 3
  zero_groups,      // groups 0 and 2 all signed zeros (amax = 0), groups 1 and 3 random
  tiny_groups,      // subnormal and tiny BF16 values: amax below 2^-60 (the divider's prescale)
  saturation,       // the BF16 maximum and near-maximum products beside tiny ones
  exact_ties,       // exact y values at E4M3 rounding midpoints (gate = 32: SiLU(32) = 32 exactly)
  wide_range,       // random exponents across the whole BF16 range, random signs
  huge_negative,    // gate <= -100 (SiLU = -0) mixed with ordinary values
  kinds
};
inline constexpr int act_row_kinds = static_cast<int>(act_row::kinds);

inline void fill_act_row(std::uint16_t* row, act_row kind, std::uint64_t seed) {
  rng r(seed);
  std::uint16_t* gate = row;
  std::uint16_t* up = row + 512;
  for (int i = 0; i < 512; ++i) {
    gate[i] = bf16_of(static_cast<float>(2.0 * r.normal()));
    up[i] = bf16_of(static_cast<float>(r.normal()));
  }
  switch (kind) {
    case act_row::random: break;
    case act_row::nan_group:
      gate[128 + r.below(128)] = bf16_nan;
      gate[r.below(128)] = bf16_neg_inf;
      break;
    case act_row::inf_group:
      gate[256 + r.below(128)] = bf16_inf;
      up[256 + 5] = bf16_of(1.0f);
      gate[256 + 5] = bf16_inf;  // Inf * 1 = Inf
      gate[384 + 7] = bf16_max;
      up[384 + 7] = bf16_of(4.0f);  // overflows FP32 -> Inf
      break;
    case act_row::zero_groups:  // SiLU(±0) = ±0, so every product of groups 0 and 2 is a signed zero
      for (int g : {0, 2})
        for (int i = 128 * g; i < 128 * g + 128; ++i) {
          gate[i] = r.below(2) ? bf16_neg_zero : 0;
          if (r.below(4) == 0) up[i] = r.below(2) ? bf16_neg_zero : 0;
        }
      break;
    case act_row::tiny_groups: {  // gate = 32 (SiLU = 32 exactly), so y = 32 * up
      auto tiny = [&](int lo, int span) {
        return bf16_of(std::ldexp(static_cast<float>(1.0 + r.uniform()), lo + static_cast<int>(r.below(span))) *
                       (r.below(2) ? 1.0f : -1.0f));
      };
      for (int i = 0; i < 512; ++i) gate[i] = bf16_of(32.0f);
      for (int i = 0; i < 128; ++i) up[i] = tiny(-133, 63);           // y in 2^[-128, -65]: amax < 2^-60
      for (int i = 128; i < 256; ++i) up[i] = bf16_min_subnormal;      // y = 2^-128 everywhere
      for (int i = 256; i < 384; ++i) up[i] = tiny(-133, 60);
      up[300] = bf16_of(0x1p-65f);                                     // amax = 2^-60: no prescale
      for (int i = 384; i < 512; ++i) up[i] = tiny(-133, 55);
      up[450] = bf16_of(-0x1p-66f);                                    // amax = 2^-61: prescaled
      break;
    }
    case act_row::saturation:
      gate[3] = bf16_of(32.0f);
      up[3] = bf16_of(1e37f);  // y near the BF16 maximum
      gate[200] = bf16_max;
      up[200] = bf16_of(1.0f);  // SiLU(max) = max
      gate[201] = bf16_max;
      up[201] = bf16_of(-0.5f);
      gate[202] = bf16_of(32.0f);
      up[202] = bf16_of(1e-30f);  // far below scale: E4M3 zero
      for (int i = 400; i < 512; ++i) up[i] = bf16_of(static_cast<float>(r.normal()) * 1e30f);
      break;
    case act_row::exact_ties:
      // y = 32 * up exactly; amax = 448 in each group so scale = 1 and y / scale = y.
      for (int i = 0; i < 512; ++i) {
        gate[i] = bf16_of(32.0f);
        static const float ties[] = {1.0625f, 1.1875f, 17.0f, 19.0f, 0.0029296875f, 0.0048828125f, -1.0625f, -0.0029296875f,
                                     464.0f / 1.0f, 240.0f, 0.015625f * 1.0625f, 3.0f};
        float y = ties[r.below(12)];
        if (y > 448.0f) y = 440.0f;
        up[i] = bf16_of(y / 32.0f);
      }
      for (int g = 0; g < 4; ++g) up[128 * g + 9] = bf16_of(448.0f / 32.0f);
      up[128 + 10] = bf16_of(-448.0f / 32.0f);  // a tie in magnitude
      break;
    case act_row::wide_range:
      for (int i = 0; i < 1024; ++i) {
        const int e = -133 + static_cast<int>(r.below(260));
        const float v = std::ldexp(static_cast<float>(1.0 + r.uniform()), e) * (r.below(2) ? 1.0f : -1.0f);
        row[i] = bf16_of(v);
        if (std::isinf(f32_from_bf16(row[i]))) row[i] = bf16_max;
      }
      break;
    case act_row::huge_negative:
      for (int i = 0; i < 512; i += 3) gate[i] = bf16_of(-100.0f - static_cast<float>(r.below(1000)));
      break;
    case act_row::kinds: break;
  }
}

/// A hidden-state row of 2048 BF16 values ~ N(0, scale).
inline void fill_normal(std::uint16_t* v, int n, double scale, std::uint64_t seed) {
  rng r(seed);
  for (int i = 0; i < n; ++i) v[i] = bf16_of(static_cast<float>(scale * r.normal()));
}

}  // namespace netra::oracles
