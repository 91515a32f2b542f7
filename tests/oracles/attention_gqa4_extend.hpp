// tests/oracles/attention_gqa4_extend.hpp — the host oracles and calls of
// contracts::attention_gqa4_extend.
//   make_case(): random and adversarial contents over a slot pool whose unindexed slots hold NaN
//     (E4M3 0x7F), so that any read of a slot a row does not index shows up in the output.
//   reference(): the contract's semantics in FP64 on the dequantized values, with each output's
//     comparison bound and whether the row is written.
//   netra_order(): netra's order bit for bit (the prefix through netra_order_row of the GQA8
//     oracle over the pair view, then stage two's FP32 extension block); prefix dot products and
//     P V sums taken as exact (extend_fill::bitwise makes them so), the extension's are repeated.
#pragma once
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "oracles/attention_gqa8.hpp"

namespace netra::oracles {

constexpr int ext_q_heads = 32, ext_kv_heads = 8, ext_dim = 128, ext_max = 12;
constexpr float ext_softmax_scale = 0.0883883461356163f;

enum class extend_fill { random, equal_scores, spike, saturated, subnormal, bitwise };

struct extend_shape {
  int page_size = 1;
  std::vector<std::int64_t> prefixes;  // prefix length per request
  std::vector<int> extents;            // extension length per request (1..12)
  float k_scale = 1.0f, v_scale = 1.0f;
  extend_fill fill = extend_fill::random;
  int out_of_pool_every = 0;  // > 0: every n-th page-table entry points outside the pool (masked)
};

struct extend_case {
  int page_size = 1, batch = 0;
  std::int64_t slots = 0, q_tokens = 0;
  float k_scale = 1.0f, v_scale = 1.0f;
  std::vector<std::uint16_t> q, k_ext, v_ext;  // [q_tokens][32][128], [q_tokens][8][128] BF16
  std::vector<std::uint8_t> k, v;              // [slots][8][128] E4M3
  std::vector<std::int64_t> qo_indptr, kv_indices;
  std::vector<std::int32_t> kv_indptr, last_page_len;
};

inline std::int64_t prefix_of(const extend_case& c, int b) {
  const std::int64_t entries = std::max<std::int64_t>(0, static_cast<std::int64_t>(c.kv_indptr[b + 1]) - c.kv_indptr[b]);
  if (c.page_size == 1) return entries;
  return entries == 0 ? 0 : c.page_size * (entries - 1) + std::min<std::int64_t>(c.page_size, std::max<std::int64_t>(0, c.last_page_len[b]));
}
inline bool writable(const extend_case& c, int b) {
  const std::int64_t first = c.qo_indptr[b], n = c.qo_indptr[b + 1] - first;
  return n >= 1 && n <= ext_max && first >= 0 && first + n <= c.q_tokens;
}
inline std::int64_t slot_of(const extend_case& c, int b, std::int64_t p) {
  const std::int64_t entry = c.kv_indptr[b] + p / c.page_size;
  if (entry < 0 || entry >= static_cast<std::int64_t>(c.kv_indices.size())) return -1;
  const std::int64_t page = c.kv_indices[entry];
  return page < 0 || page >= c.slots / c.page_size ? -1 : page * c.page_size + p % c.page_size;
}
inline float q_at(const extend_case& c, std::int64_t token, int h, int d) { return f32_from_bf16(c.q[(token * ext_q_heads + h) * ext_dim + d]); }
inline float ext_at(const std::vector<std::uint16_t>& x, std::int64_t token, int kvh, int d) {
  return f32_from_bf16(x[(token * ext_kv_heads + kvh) * ext_dim + d]);
}
inline float pool_at(const std::vector<std::uint8_t>& x, std::int64_t slot, int kvh, int d) {
  return f32_from_e4m3(x[(slot * ext_kv_heads + kvh) * ext_dim + d]);
}

inline extend_case make_case(const extend_shape& shape, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n1(0.0f, 1.0f), n15(0.0f, 1.5f);
  std::uniform_int_distribution<int> small(-4, 4);
  extend_case c;
  c.page_size = shape.page_size, c.batch = static_cast<int>(shape.prefixes.size()), c.k_scale = shape.k_scale, c.v_scale = shape.v_scale;
  std::int64_t pages = 0;
  for (std::int64_t l : shape.prefixes) pages += (l + c.page_size - 1) / c.page_size;
  const std::int64_t pool_pages = pages + pages / 4 + 3;
  c.slots = pool_pages * c.page_size;
  c.k.assign(static_cast<std::size_t>(c.slots) * ext_kv_heads * ext_dim, 0x7F);
  c.v.assign(c.k.size(), 0x7F);
  std::vector<std::int64_t> order(static_cast<std::size_t>(pool_pages));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  c.qo_indptr.push_back(0), c.kv_indptr.push_back(0);
  std::size_t next = 0;
  for (int b = 0; b < c.batch; ++b) {
    const std::int64_t l = shape.prefixes[static_cast<std::size_t>(b)], np = (l + c.page_size - 1) / c.page_size;
    for (std::int64_t i = 0; i < np; ++i) c.kv_indices.push_back(order[next++]);
    c.qo_indptr.push_back(c.qo_indptr.back() + shape.extents[static_cast<std::size_t>(b)]);
    c.kv_indptr.push_back(static_cast<std::int32_t>(c.kv_indices.size()));
    c.last_page_len.push_back(static_cast<std::int32_t>(np == 0 ? 0 : l - (np - 1) * c.page_size));
  }
  c.q_tokens = c.qo_indptr.back();
  const bool exact = shape.fill == extend_fill::bitwise;
  auto bf16 = [](float x) { return bf16_from_f32_reference(x); };
  c.q.resize(static_cast<std::size_t>(c.q_tokens) * ext_q_heads * ext_dim);
  for (auto& x : c.q) x = bf16(exact ? static_cast<float>(static_cast<int>(rng() % 7) - 3) : n1(rng));
  c.k_ext.resize(static_cast<std::size_t>(c.q_tokens) * ext_kv_heads * ext_dim);
  c.v_ext.resize(c.k_ext.size());
  for (std::size_t i = 0; i < c.k_ext.size(); ++i) {
    c.k_ext[i] = bf16(exact ? static_cast<float>(small(rng)) : shape.fill == extend_fill::equal_scores ? 0.25f * static_cast<float>(i % 7) - 0.75f : n15(rng));
    c.v_ext[i] = bf16(exact ? static_cast<float>(small(rng)) * 0.5f : n15(rng));
  }
  auto e4m3 = [](float x) { return e4m3_from_f32_reference(x); };
  for (int b = 0; b < c.batch; ++b) {
    const std::int64_t l = shape.prefixes[static_cast<std::size_t>(b)];
    std::vector<std::int64_t> hot(ext_kv_heads * ext_dim, -1);  // bitwise: the one prefix position with a non-zero V
    if (l > 0)
      for (auto& h : hot) h = static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(l));
    for (std::int64_t p = 0; p < l; ++p) {
      const std::int64_t slot = slot_of(c, b, p);
      for (int kvh = 0; kvh < ext_kv_heads; ++kvh)
        for (int d = 0; d < ext_dim; ++d) {
          std::uint8_t kc = e4m3(n15(rng)), vc = e4m3(n15(rng));
          const auto sign = [&] { return static_cast<std::uint8_t>(rng() % 2 ? 0x80 : 0); };
          switch (shape.fill) {
            case extend_fill::random: break;
            case extend_fill::equal_scores: kc = e4m3(0.25f * static_cast<float>((d % 7) - 3)); break;
            case extend_fill::spike:
              kc = p == l / 2 ? e4m3(q_at(c, c.qo_indptr[b], 4 * kvh, d) > 0 ? 448.0f : -448.0f) : e4m3(0.01f * n1(rng));
              break;
            case extend_fill::saturated: kc = 0x7E | sign(), vc = 0x7E | sign(); break;
            case extend_fill::subnormal: kc = static_cast<std::uint8_t>(1 + rng() % 7) | sign(), vc = static_cast<std::uint8_t>(1 + rng() % 7) | sign(); break;
            case extend_fill::bitwise:
              kc = e4m3(static_cast<float>(small(rng)));
              vc = hot[static_cast<std::size_t>(kvh * ext_dim + d)] == p ? e4m3(static_cast<float>(small(rng)) * 0.5f) : 0;
              break;
          }
          c.k[(static_cast<std::size_t>(slot) * ext_kv_heads + kvh) * ext_dim + d] = kc;
          c.v[(static_cast<std::size_t>(slot) * ext_kv_heads + kvh) * ext_dim + d] = vc;
        }
    }
  }
  if (shape.out_of_pool_every > 0)
    for (std::size_t i = 0; i < c.kv_indices.size(); i += static_cast<std::size_t>(shape.out_of_pool_every))
      c.kv_indices[i] = i % 2 ? -1 : pool_pages + 7;
  return c;
}

/// f(b, first, t, h, prefix) for every row the call writes: request b (first token `first`,
/// prefix length `prefix`), extension token t, query head h.
template <class F> void for_each_written_row(const extend_case& c, F f) {
  for (int b = 0; b < c.batch; ++b) {
    if (!writable(c, b)) continue;
    const std::int64_t first = c.qo_indptr[b], count = c.qo_indptr[b + 1] - first, prefix = prefix_of(c, b);
    for (std::int64_t t = 0; t < count; ++t)
      for (int h = 0; h < ext_q_heads; ++h) f(b, first, t, h, prefix);
  }
}

/// FP64 semantics and the contract's bound (contracts/attention/gqa4_extend.hpp).
inline gqa8_expected reference(const extend_case& c) {
  gqa8_expected e;
  const std::size_t n = static_cast<std::size_t>(c.q_tokens) * ext_q_heads * ext_dim;
  e.out.assign(n, 0.0), e.bound.assign(n, 0.0), e.written.assign(n, false);
  const double scale = ext_softmax_scale, u = std::ldexp(1.0, -9) + std::ldexp(1.0, -22);
  for_each_written_row(c, [&](int b, std::int64_t first, std::int64_t t, int h, std::int64_t prefix) {
    const int kvh = h / 4;
    std::vector<double> s;
    std::vector<std::int64_t> at;  // >= 0: a prefix slot; < 0: extension token -1 - at
    double delta = 0;
    auto add = [&](double dot, double absdot, double score_scale, std::int64_t where) {
      const double x = dot * score_scale;
      s.push_back(x), at.push_back(where);
      delta = std::fmax(delta, score_scale * std::ldexp(absdot, -15) + std::fabs(x) * std::ldexp(1.0, -23));
    };
    for (std::int64_t p = 0; p < prefix; ++p) {
      const std::int64_t slot = slot_of(c, b, p);
      if (slot < 0) continue;
      double dot = 0, absdot = 0;
      for (int d = 0; d < ext_dim; ++d) {
        const double x = static_cast<double>(q_at(c, first + t, h, d)) * pool_at(c.k, slot, kvh, d);
        dot += x, absdot += std::fabs(x);
      }
      add(dot, absdot, c.k_scale * scale, slot);
    }
    for (std::int64_t j = 0; j <= t; ++j) {
      double dot = 0, absdot = 0;
      for (int d = 0; d < ext_dim; ++d) {
        const double x = static_cast<double>(q_at(c, first + t, h, d)) * ext_at(c.k_ext, first + j, kvh, d);
        dot += x, absdot += std::fabs(x);
      }
      add(dot, absdot, scale, -1 - (first + j));
    }
    double m = -INFINITY, l = 0;
    for (double x : s) m = std::fmax(m, x);
    std::vector<double> w(s.size());
    for (std::size_t j = 0; j < s.size(); ++j) l += (w[j] = std::exp(s[j] - m));
    const double rho = std::exp(2 * delta) * (1 + u) / (1 - u) - 1;
    for (int d = 0; d < ext_dim; ++d) {
      double o = 0, vinf = 0;
      for (std::size_t j = 0; j < s.size(); ++j) {
        const double val = at[j] >= 0 ? static_cast<double>(pool_at(c.v, at[j], kvh, d)) * c.v_scale : ext_at(c.v_ext, -1 - at[j], kvh, d);
        o += w[j] * val, vinf = std::fmax(vinf, std::fabs(val));
      }
      const std::size_t i = (static_cast<std::size_t>(first + t) * ext_q_heads + h) * ext_dim + d;
      e.out[i] = o / l;
      e.bound[i] = std::ldexp(std::fabs(e.out[i]), -8) +
                   vinf * (rho + (static_cast<double>(s.size()) / 4.0 + 256) * std::ldexp(1.0, -24) + std::ldexp(1.0, -20));
      e.written[i] = true;
    }
  });
  return e;
}

/// netra's order for plan `Plan` with `slices` slices (BlockWarps 1, the served mapping).
template <class Plan> std::vector<std::uint16_t> netra_order(const extend_case& c, int slices) {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(c.q_tokens) * ext_q_heads * ext_dim, 0);
  const float score_scale = c.k_scale * ext_softmax_scale;
  for_each_written_row(c, [&](int b, std::int64_t first, std::int64_t t, int h, std::int64_t prefix) {
    const int kvh = h / 4;
    const std::int64_t token = first + t;
    auto score = [&](std::int64_t p) {
      const std::int64_t slot = slot_of(c, b, p);
      if (slot < 0) return negative_infinity();
      double dot = 0;
      for (int d = 0; d < ext_dim; ++d) dot += static_cast<double>(q_at(c, token, h, d)) * pool_at(c.k, slot, kvh, d);
      return mul_rn(static_cast<float>(dot), score_scale);
    };
    auto value = [&](std::int64_t p, int d) { return static_cast<double>(pool_at(c.v, slot_of(c, b, p), kvh, d)); };
    row_state st = netra_order_row<Plan>(prefix, slices, 1, static_cast<unsigned>(h % 8), ext_dim, score, value);
    float s[ext_max];
    float m_block = negative_infinity();
    for (std::int64_t j = 0; j <= t; ++j) {
      float acc = 0.0f;
      for (int d = 0; d < ext_dim; ++d) acc = add_rn(acc, mul_rn(q_at(c, token, h, d), ext_at(c.k_ext, first + j, kvh, d)));
      s[j] = mul_rn(acc, ext_softmax_scale);
      m_block = max_of(m_block, s[j]);
    }
    const float m_new = max_of(st.st.m, m_block);
    float l_block = 0.0f;
    for (std::int64_t j = 0; j <= t; ++j) l_block = add_rn(l_block, softmax_weight(s[j], m_new));
    const softmax_merge_factors f = softmax_merge(st.st, {m_new, l_block});
    for (int d = 0; d < ext_dim; ++d) {
      float o_block = 0.0f;
      for (std::int64_t j = 0; j <= t; ++j) o_block = add_rn(o_block, mul_rn(softmax_weight(s[j], m_new), ext_at(c.v_ext, first + j, kvh, d)));
      const float o = softmax_merge_value(mul_rn(st.o[static_cast<std::size_t>(d)], c.v_scale), o_block, f);
      out[(static_cast<std::size_t>(token) * ext_q_heads + h) * ext_dim + d] = bf16_from_f32_reference(softmax_finish(o, f.merged.l, 1.0f));
    }
  });
  return out;
}

}  // namespace netra::oracles
