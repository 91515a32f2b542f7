// tests/oracles/moe_routing.hpp — the routing contracts of the decode MoE block written plainly:
// act_quant, the router (softmax -> top-8 -> renormalised weights) and the shared-expert gate.
// No code is shared with the kernels: float comparisons where the kernels use integer keys,
// plain loops in the orders the contracts document. What the oracles do call is the contracts'
// own definitions: dsl/math.hpp (exp/silu/sigmoid: the functions *are* the specification) and the
// dsl/convert.hpp *_reference conversions.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "netra/contracts/moe/route_layout.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/math.hpp"

namespace netra::oracles {

inline float bf16_value(std::uint16_t h) { return f32_from_bf16(h); }
inline std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline const float canonical_nan = float_of(0x7FC00000u);

// ---- act_quant ---------------------------------------------------------------------------------

/// One row of act_quant: `row` holds 1024 BF16 values [gate | up]; writes 512 E4M3 bytes and 4
/// FP32 scales (in another FP8 format: its maximum for 448, its NaN byte for 0x7F).
template <class Format = fp8::e4m3fn> void act_quant_row(const std::uint16_t* row, std::uint8_t* q, float* scales) {
  std::uint16_t y[512];
  for (int i = 0; i < 512; ++i) {
    const float product = silu_f32(bf16_value(row[i])) * bf16_value(row[512 + i]);
    y[i] = bf16_from_f32_reference(product);
  }
  for (int g = 0; g < 4; ++g) {
    bool has_nan = false, has_inf = false;
    float amax = 0.0f;
    for (int i = 128 * g; i < 128 * (g + 1); ++i) {
      const float v = bf16_value(y[i]);
      if (std::isnan(v)) has_nan = true;
      else if (std::isinf(v)) has_inf = true;
      else if (std::fabs(v) > amax) amax = std::fabs(v);
    }
    float scale;
    if (has_nan) scale = canonical_nan;
    else if (has_inf) scale = INFINITY;
    else scale = amax / fp8_max_v<Format>;
    scales[g] = scale;
    for (int i = 128 * g; i < 128 * (g + 1); ++i) {
      const float v = bf16_value(y[i]);
      if (has_nan || has_inf) q[i] = Format::nan_code;
      else if (amax == 0.0f) q[i] = fp8_from_f32_reference<Format>(v);
      else q[i] = fp8_from_f32_reference<Format>(v / scale);
    }
  }
}

/// act_quant over `rows` rows with an input row stride in elements.
template <class Format = fp8::e4m3fn> void act_quant(const std::uint16_t* in, std::int64_t rows, std::int64_t row_stride, std::uint8_t* q, float* scales) {
  for (std::int64_t r = 0; r < rows; ++r) act_quant_row<Format>(in + r * row_stride, q + r * 512, scales + r * 4);
}

// ---- dot products of BF16 rows -----------------------------------------------------------------

/// Sum of 32 partials in the contracts' halving tree: for b = 16, 8, 4, 2, 1: s[i] += s[i + b]
/// (i < b). Every pair of partials whose indices differ in bit 4 is added first, then bit 3, ...
inline float halving_tree_32(float s[32]) {
  for (int b = 16; b >= 1; b /= 2)
    for (int i = 0; i < b; ++i) s[i] = s[i] + s[i + b];
  return s[0];
}

/// Sum of 32 partials in the butterfly order of dsl/wave_reduce.hpp restricted to 32 lanes:
/// for m = 1, 2, 4, 8, 16: s[i] = s[i] + s[i ^ m] for every i; the result is s[0].
inline float butterfly_32(const float in[32]) {
  float s[32];
  for (int i = 0; i < 32; ++i) s[i] = in[i];
  for (int m = 1; m < 32; m *= 2) {
    float t[32];
    for (int i = 0; i < 32; ++i) t[i] = s[i] + s[i ^ m];
    for (int i = 0; i < 32; ++i) s[i] = t[i];
  }
  return s[0];
}

// ---- shared-expert gate ------------------------------------------------------------------------

/// g = sigmoid(dot(hidden, w)) with the shared-gate contract's order: 32 partials, partial j the
/// sequential sum over k = 64j .. 64j + 63 of hidden[k] * w[k] (each product exact in FP32),
/// starting from +0; the 32 partials reduced in the 32-lane butterfly order; then sigmoid; a NaN
/// result is the canonical NaN 0x7FC00000.
inline float shared_gate_logit(const std::uint16_t* hidden, const std::uint16_t* w) {
  float partial[32];
  for (int j = 0; j < 32; ++j) {
    float acc = 0.0f;
    for (int k = 64 * j; k < 64 * j + 64; ++k) acc = std::fma(bf16_value(hidden[k]), bf16_value(w[k]), acc);
    partial[j] = acc;
  }
  return butterfly_32(partial);
}
inline float shared_gate_weight(const std::uint16_t* hidden, const std::uint16_t* w) {
  const float g = sigmoid_f32(shared_gate_logit(hidden, w));
  return std::isnan(g) ? canonical_nan : g;
}

// ---- router ------------------------------------------------------------------------------------

/// Route metadata of one token: slots 0..7 (ids, weights) in descending order.
struct top8 {
  std::int32_t ids[8];
  float weights[8];
};

/// The router's probabilities p_x of one token, in the contract's order:
///   m = max of the 256 logits; any NaN logit, or m = ±Inf, makes the token non-finite (false);
///   e_x = exp_f32(l_x - m); S = 32-lane butterfly over partials S_j = sequential sum of
///   e_x for x = 8j .. 8j + 7 (from +0); p_x = e_x / S.
inline bool route_probabilities(const float* logits, float* p) {
  float m = -INFINITY;
  for (int x = 0; x < 256; ++x) {
    if (std::isnan(logits[x])) return false;
    if (logits[x] > m) m = logits[x];
  }
  if (std::isinf(m)) return false;
  float e[256], partial[32];
  for (int x = 0; x < 256; ++x) e[x] = exp_f32(logits[x] - m);
  for (int j = 0; j < 32; ++j) {
    float acc = 0.0f;
    for (int x = 8 * j; x < 8 * j + 8; ++x) acc = acc + e[x];
    partial[j] = acc;
  }
  const float s = butterfly_32(partial);
  for (int x = 0; x < 256; ++x) p[x] = e[x] / s;
  return true;
}

/// softmax -> top-8 (descending probability; equal probabilities: lower expert first) ->
/// weights renormalised over the 8: s8 = sequential sum of the 8 selected p in slot order;
/// w_i = p_i / s8. A non-finite token gets ids 0..7 and canonical NaN weights.
inline top8 route_token(const float* logits) {
  top8 out{};
  float p[256];
  if (!route_probabilities(logits, p)) {
    for (int i = 0; i < 8; ++i) {
      out.ids[i] = i;
      out.weights[i] = canonical_nan;
    }
    return out;
  }
  bool taken[256] = {};
  for (int i = 0; i < 8; ++i) {
    int best = -1;
    for (int x = 0; x < 256; ++x)
      if (!taken[x] && (best < 0 || p[x] > p[best])) best = x;
    taken[best] = true;
    out.ids[i] = best;
    out.weights[i] = p[best];
  }
  float s8 = 0.0f;
  for (int i = 0; i < 8; ++i) s8 = s8 + out.weights[i];
  for (int i = 0; i < 8; ++i) out.weights[i] = out.weights[i] / s8;
  return out;
}

/// The exact router's logits: logit[t][e] = sum over the 256 K-slices of 8 values, slice
/// i = 32 g + l covering k = 8i .. 8i + 7; slice partial = sequential fma over its 8 k from +0;
/// the 32 slices of a group g combined in the halving tree; the 8 group sums added sequentially
/// ((((G0 + G1) + G2) + ...) + G7).
inline float router_exact_logit(const std::uint16_t* hidden, const std::uint16_t* w) {
  float total = 0.0f;
  for (int g = 0; g < 8; ++g) {
    float slice[32];
    for (int l = 0; l < 32; ++l) {
      float acc = 0.0f;
      const int k0 = 8 * (32 * g + l);
      for (int k = k0; k < k0 + 8; ++k) acc = std::fma(bf16_value(hidden[k]), bf16_value(w[k]), acc);
      slice[l] = acc;
    }
    const float group_sum = halving_tree_32(slice);
    total = g == 0 ? group_sum : total + group_sum;
  }
  return total;
}

/// FP64 reference logit and the sum of |products| (the scale of the bounded policy).
struct logit64 {
  double value, magnitude;
};
inline logit64 router_logit64(const std::uint16_t* hidden, const std::uint16_t* w) {
  double v = 0, mag = 0;
  for (int k = 0; k < 2048; ++k) {
    const double prod = static_cast<double>(bf16_value(hidden[k])) * static_cast<double>(bf16_value(w[k]));
    v += prod;
    mag += std::fabs(prod);
  }
  return {v, mag};
}

}  // namespace netra::oracles
