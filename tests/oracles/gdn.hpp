// tests/oracles/gdn.hpp — the gdn contracts' semantics written plainly (contracts/gdn/*.hpp):
// the conv update, the precompute and the gated delta rule step, on host arrays. Shares only the
// DSL's reproducible scalar functions (exp_f32, silu_f32, sigmoid_f32, softplus_f32, sqrt_rn,
// bf16 conversion) with the kernels, as every netra oracle does.
#pragma once
#include <cstdint>
#include <vector>

#include "netra/contracts/gdn/model.hpp"
#include "netra/dsl/activation.hpp"
#include "netra/dsl/convert.hpp"

namespace netra::oracles::gdn_ref {
using netra::gdn::channels;
constexpr std::size_t D = channels, H = netra::gdn::heads_qk, HV = netra::gdn::heads_v, K = netra::gdn::key_dim, V = netra::gdn::value_dim;
constexpr std::size_t conv_slot = D * 3;
constexpr std::size_t state_slot = HV * V * K;

inline float bf(std::uint16_t h) { return f32_from_bf16(h); }
inline std::uint16_t to_bf(float x) { return bf16_from_f32_reference(x); }

/// Index of history value (channel c, position j) inside one conv slot image.
inline std::size_t conv_index(std::uint32_t layout, std::size_t c, std::size_t j) {
  return layout == gdn::conv_layout::channel_major ? c * 3 + j : j * D + c;
}
/// The slot a request's index names: itself when in [0, slots - 2], else the sentinel.
inline std::size_t resolve_slot(std::int32_t s, std::int64_t slots) {
  return s >= 0 && s < slots - 1 ? static_cast<std::size_t>(s) : static_cast<std::size_t>(slots - 1);
}
inline bool real_slot(std::int32_t s, std::int64_t slots) { return s >= 0 && s < slots - 1; }

/// Conv update of one request b (rows b T .. b T + T - 1). Writes y rows; windows (when non-null)
/// [b, t] images; the final history into `final_state` (a slot image) when non-null.
inline void conv_request(const std::uint16_t* x, std::size_t x_stride, const std::uint16_t* weight, const std::uint16_t* slot_image,
                         std::uint32_t layout, std::size_t b, std::size_t T, std::uint16_t* y, std::uint16_t* windows,
                         std::uint16_t* final_state) {
  for (std::size_t c = 0; c < D; ++c) {
    std::uint16_t h[3] = {slot_image[conv_index(layout, c, 0)], slot_image[conv_index(layout, c, 1)], slot_image[conv_index(layout, c, 2)]};
    for (std::size_t t = 0; t < T; ++t) {
      const std::size_t row = b * T + t;
      const std::uint16_t xc = x[row * x_stride + c];
      float acc = mul_rn(bf(weight[c * 4 + 0]), bf(h[0]));
      acc = fma_rn(bf(weight[c * 4 + 1]), bf(h[1]), acc);
      acc = fma_rn(bf(weight[c * 4 + 2]), bf(h[2]), acc);
      acc = fma_rn(bf(weight[c * 4 + 3]), bf(xc), acc);
      y[row * D + c] = to_bf(silu_f32(acc));
      h[0] = h[1];
      h[1] = h[2];
      h[2] = xc;
      if (windows)
        for (std::size_t j = 0; j < 3; ++j) windows[row * conv_slot + conv_index(layout, c, j)] = h[j];
    }
    if (final_state)
      for (std::size_t j = 0; j < 3; ++j) final_state[conv_index(layout, c, j)] = h[j];
  }
}

/// Precompute of one row: q, k (16 x 128 each), decay, beta (32 each).
inline void precompute_row(const std::uint16_t* y_row, const std::uint16_t* a_row, const std::uint16_t* b_row, const float* a_log,
                           const float* dt_bias, float* q, float* k, float* decay, float* beta) {
  for (std::size_t s = 0; s < 2 * H; ++s) {
    const std::uint16_t* x = y_row + s * K;
    float partial[32];
    for (std::size_t l = 0; l < 32; ++l) {
      float p = mul_rn(bf(x[4 * l]), bf(x[4 * l]));
      for (std::size_t e = 1; e < 4; ++e) p = fma_rn(bf(x[4 * l + e]), bf(x[4 * l + e]), p);
      partial[l] = p;
    }
    for (std::size_t m = 1; m < 32; m <<= 1) {
      float next[32];
      for (std::size_t l = 0; l < 32; ++l) next[l] = add_rn(partial[l], partial[l ^ m]);
      for (std::size_t l = 0; l < 32; ++l) partial[l] = next[l];
    }
    const float inv = div_rn(1.0f, sqrt_rn(add_rn(partial[0], gdn::l2_eps)));
    for (std::size_t i = 0; i < K; ++i) {
      const float n = mul_rn(bf(x[i]), inv);
      if (s < H) q[s * K + i] = mul_rn(n, gdn::q_scale);
      else k[(s - H) * K + i] = n;
    }
  }
  for (std::size_t hv = 0; hv < HV; ++hv) {
    const float d = exp_f32(-mul_rn(exp_f32(a_log[hv]), softplus_f32(add_rn(bf(a_row[hv]), dt_bias[hv])))), s = sigmoid_f32(bf(b_row[hv]));
    decay[hv] = d != d ? bit_cast<float>(0x7FC00000u) : d;
    beta[hv] = s != s ? bit_cast<float>(0x7FC00000u) : s;
  }
}

/// dot over i = 0..127 in the contract's order: four fma chains of 32, (p0 + p1) + (p2 + p3).
/// `x` is a state column (stride 1 over i), `y` a key/query vector.
inline float dot(const float* x, const float* y) {
  float p[4];
  for (std::size_t r = 0; r < 4; ++r) {
    float acc = mul_rn(x[32 * r], y[32 * r]);
    for (std::size_t i = 32 * r + 1; i < 32 * r + 32; ++i) acc = fma_rn(x[i], y[i], acc);
    p[r] = acc;
  }
  return add_rn(add_rn(p[0], p[1]), add_rn(p[2], p[3]));
}

/// One gated delta step on the state of one v head, S[j * K + i] (value column j, key i).
/// `out` (V values, BF16 bits) is written when non-null.
inline void step(float* S, float a, float beta, const float* k, const float* q, const std::uint16_t* v, std::uint16_t* out) {
  for (std::size_t j = 0; j < V; ++j) {
    float* col = S + j * K;
    for (std::size_t i = 0; i < K; ++i) col[i] = mul_rn(a, col[i]);
    const float u = mul_rn(beta, sub_rn(bf(v[j]), dot(col, k)));
    for (std::size_t i = 0; i < K; ++i) col[i] = fma_rn(k[i], u, col[i]);
    if (out) out[j] = to_bf(dot(col, q));
  }
}

/// Widen a stored state slot (FP32 or BF16 bits) to FP32, and store it back per storage.
inline std::vector<float> widen(const void* slot, std::uint32_t storage, std::size_t count) {
  std::vector<float> s(count);
  for (std::size_t e = 0; e < count; ++e)
    s[e] = storage == gdn::state_storage::fp32 ? static_cast<const float*>(slot)[e] : bf(static_cast<const std::uint16_t*>(slot)[e]);
  return s;
}
inline void narrow(const std::vector<float>& s, std::uint32_t storage, void* slot) {
  for (std::size_t e = 0; e < s.size(); ++e) {
    if (storage == gdn::state_storage::fp32) static_cast<float*>(slot)[e] = s[e];
    else static_cast<std::uint16_t*>(slot)[e] = to_bf(s[e]);
  }
}

/// The token-local inputs of a batch as the recurrent core reads them.
struct token_inputs {
  const float* q;            // [rows, 16, 128]
  const float* k;            // [rows, 16, 128]
  const std::uint16_t* v;    // conv output rows (v at channel 4096 + 128 hv)
  std::size_t v_stride;
  const float* decay;        // [rows, 32]
  const float* beta;         // [rows, 32]
};

/// Runs n tokens of request b, v head hv, on S (FP32, [V, K]); outputs into out rows when non-null.
inline void run_head(float* S, const token_inputs& in, std::size_t b, std::size_t T, std::size_t hv, std::size_t n, std::uint16_t* out) {
  const std::size_t head = hv / (HV / H);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t row = b * T + t;
    step(S, in.decay[row * HV + hv], in.beta[row * HV + hv], in.k + (row * H + head) * K, in.q + (row * H + head) * K,
         in.v + row * in.v_stride + gdn::v_offset + hv * V, out ? out + (row * HV + hv) * V : nullptr);
  }
}
}  // namespace netra::oracles::gdn_ref
