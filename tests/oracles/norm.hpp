// tests/oracles/norm.hpp — the normalization contracts (contracts/norm/norm.hpp) written plainly:
// RMSNorm, residual add + RMSNorm, gated RMSNorm, BF16 or block-E4M3 output. No code is shared
// with the kernel: the sum's slices and butterflies as loops over arrays in the documented order,
// the E4M3 groups by IEEE division. What the oracle calls is the contract's own definitions:
// dsl/math.hpp (fma, silu), dsl/rsqrt.hpp and the dsl/convert.hpp *_reference conversions.
// Also the rows the tests feed (random and adversarial), shared by host and GPU tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "netra/contracts/norm/signature.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/rsqrt.hpp"

namespace netra::oracles {

inline std::uint32_t norm_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// The sum of squares of one row of n BF16 values (n = 2048 or 128) in the contract's order.
inline float norm_sum_of_squares(const std::uint16_t* v, int n) {
  const int chunks = n / 8, slices = chunks < 64 ? chunks : 64, half = slices < 32 ? slices : 32;
  std::vector<float> acc(static_cast<std::size_t>(slices), 0.0f);
  for (int q = 0; q < slices; ++q)
    for (int c = q; c < chunks; c += slices)
      for (int e = 0; e < 8; ++e) {
        const float x = f32_from_bf16(v[8 * c + e]);
        acc[static_cast<std::size_t>(q)] = fma_rn(x, x, acc[static_cast<std::size_t>(q)]);
      }
  float total = 0.0f;
  for (int h = 0; h < slices / half; ++h) {
    std::vector<float> s(acc.begin() + h * half, acc.begin() + (h + 1) * half);
    for (int m = 1; m < half; m *= 2) {
      std::vector<float> t(s.size());
      for (int i = 0; i < half; ++i) t[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i)] + s[static_cast<std::size_t>(i ^ m)];
      s = t;
    }
    total = h == 0 ? s[0] : total + s[0];
  }
  return total;
}

/// One group of 128 BF16 values -> 128 E4M3 bytes and the group's scale (act_quant's rules).
inline float e4m3_group(const std::uint16_t* y, std::uint8_t* q) {
  bool has_nan = false, has_inf = false;
  float amax = 0.0f;
  for (int i = 0; i < 128; ++i) {
    const float v = f32_from_bf16(y[i]);
    if (std::isnan(v)) has_nan = true;
    else if (std::isinf(v)) has_inf = true;
    else if (std::fabs(v) > amax) amax = std::fabs(v);
  }
  const float scale = has_nan ? bit_cast<float>(0x7FC00000u) : has_inf ? INFINITY : amax / 448.0f;
  for (int i = 0; i < 128; ++i) {
    const float v = f32_from_bf16(y[i]);
    q[i] = has_nan || has_inf ? 0x7F : amax == 0.0f ? e4m3_from_f32_reference(v) : e4m3_from_f32_reference(v / scale);
  }
  return scale;
}

/// A whole call. Tokens T, C = n * heads; x, residual, gate with token strides in elements;
/// residual is updated in place (add_rms); out_bf16 [T, C] or (fp8) out_e4m3 [T, C] + scales [T, C / 128].
struct norm_call {
  norm_kind kind = norm_kind::rms;
  norm_weight weight_form = norm_weight::plain;
  bool fp8_out = false;
  float eps = 1e-6f;
  std::int64_t tokens = 0;
  const std::uint16_t* x = nullptr;
  std::int64_t x_stride = 0;
  std::uint16_t* residual = nullptr;
  std::int64_t residual_stride = 0;
  const std::uint16_t* gate = nullptr;
  std::int64_t gate_stride = 0;
  const std::uint16_t* weight = nullptr;
  int n() const { return kind == norm_kind::gated ? 128 : 2048; }
  int heads() const { return kind == norm_kind::gated ? 32 : 1; }
  std::int64_t cols() const { return static_cast<std::int64_t>(n()) * heads(); }
};

inline void norm_reference(const norm_call& c, std::vector<std::uint16_t>& out_bf16, std::vector<std::uint8_t>& out_e4m3,
                           std::vector<float>& scales) {
  const int n = c.n();
  const std::int64_t C = c.cols();
  out_bf16.assign(static_cast<std::size_t>(c.tokens * C), 0);
  out_e4m3.assign(c.fp8_out ? static_cast<std::size_t>(c.tokens * C) : 0, 0);
  scales.assign(c.fp8_out ? static_cast<std::size_t>(c.tokens * C / 128) : 0, 0.0f);
  std::vector<std::uint16_t> v(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < c.tokens; ++t)
    for (int h = 0; h < c.heads(); ++h) {
      const std::int64_t base = static_cast<std::int64_t>(h) * n;
      for (int i = 0; i < n; ++i) {
        const std::uint16_t xi = c.x[t * c.x_stride + base + i];
        if (c.kind == norm_kind::add_rms) {
          std::uint16_t& r = c.residual[t * c.residual_stride + base + i];
          r = bf16_from_f32_reference(f32_from_bf16(xi) + f32_from_bf16(r));
          v[static_cast<std::size_t>(i)] = r;
        } else {
          v[static_cast<std::size_t>(i)] = xi;
        }
      }
      const float rs = rsqrt_f32(norm_sum_of_squares(v.data(), n) / static_cast<float>(n) + c.eps);
      std::uint16_t* y = out_bf16.data() + t * C + base;
      for (int i = 0; i < n; ++i) {
        const float w = f32_from_bf16(c.weight[i]);
        const float normed = f32_from_bf16(v[static_cast<std::size_t>(i)]) * rs;
        float yi;
        if (c.kind == norm_kind::gated) yi = (normed * w) * silu_f32(f32_from_bf16(c.gate[t * c.gate_stride + base + i]));
        else if (c.weight_form == norm_weight::zero_centred) yi = normed * (1.0f + w);
        else yi = normed * w;
        y[i] = bf16_from_f32_reference(yi);
      }
      if (c.fp8_out)
        for (int g = 0; g < n / 128; ++g)
          scales[static_cast<std::size_t>((t * C + base) / 128 + g)] = e4m3_group(y + 128 * g, out_e4m3.data() + t * C + base + 128 * g);
    }
}

/// The oracle's outputs of one call (the residual it was given is updated in place).
struct norm_outputs {
  std::vector<std::uint16_t> y;
  std::vector<std::uint8_t> q;
  std::vector<float> scales;
};
inline norm_outputs norm_expected(const norm_call& c) {
  norm_outputs o;
  norm_reference(c, o.y, o.q, o.scales);
  return o;
}

// ---- inputs ------------------------------------------------------------------------------------

/// Row kinds the tests feed: random of several magnitudes and the contract's adversarial rows.
enum class norm_row : int { random, small, all_zero, huge_overflow, huge_finite, subnormal, plus_inf, minus_inf, nan, mixed_signs_zero, kinds };
inline constexpr int norm_row_kinds = static_cast<int>(norm_row::kinds);

inline std::uint64_t norm_mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/// A finite BF16 value of magnitude about 2^[lo, hi) and random sign.
inline std::uint16_t norm_random_bf16(std::uint64_t r, int lo, int hi) {
  const int e = lo + static_cast<int>(r % static_cast<std::uint64_t>(hi - lo));
  const std::uint32_t mantissa = static_cast<std::uint32_t>((r >> 8) & 0x7F);
  const std::uint32_t sign = static_cast<std::uint32_t>((r >> 20) & 1) << 15;
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(127 + e) << 7) | mantissa);
}
/// Fills n values of one row of `kind`; `seed` varies values and the special value's position.
inline void fill_norm_row(std::uint16_t* v, int n, norm_row kind, std::uint64_t seed) {
  for (int i = 0; i < n; ++i) {
    const std::uint64_t r = norm_mix(seed * 131 + static_cast<std::uint64_t>(i));
    v[i] = kind == norm_row::small ? norm_random_bf16(r, -40, -10) : norm_random_bf16(r, -6, 3);
  }
  const int at = static_cast<int>(norm_mix(seed) % static_cast<std::uint64_t>(n));
  switch (kind) {
    case norm_row::all_zero: for (int i = 0; i < n; ++i) v[i] = 0; break;
    case norm_row::mixed_signs_zero: for (int i = 0; i < n; ++i) v[i] = (i % 3 == 0) ? 0x8000 : 0; break;
    case norm_row::huge_overflow: v[at] = 0x5F80; break;  // 2^64: x^2 overflows
    case norm_row::huge_finite: v[at] = 0x5D80; break;    // 2^60
    case norm_row::subnormal:
      for (int i = 0; i < n; ++i) v[i] = static_cast<std::uint16_t>((norm_mix(seed + static_cast<std::uint64_t>(i)) & 0x807F) | 1);
      break;
    case norm_row::plus_inf: v[at] = 0x7F80; break;
    case norm_row::minus_inf: v[at] = 0xFF80; break;
    case norm_row::nan: v[at] = 0x7FC1; break;
    default: break;
  }
}
/// BF16 weights: plain near 1, zero-centred near 0 (the checkpoint's forms), random signs for
/// both in a few places.
inline void fill_norm_weight(std::uint16_t* w, int n, norm_weight form, std::uint64_t seed) {
  for (int i = 0; i < n; ++i) {
    const std::uint64_t r = norm_mix(seed * 7 + static_cast<std::uint64_t>(i));
    const float base = form == norm_weight::plain ? 1.0f : 0.0f;
    const float jitter = static_cast<float>(static_cast<int>(r % 2001) - 1000) / 4000.0f;
    w[i] = bf16_from_f32_reference(base + jitter);
  }
}

}  // namespace netra::oracles
