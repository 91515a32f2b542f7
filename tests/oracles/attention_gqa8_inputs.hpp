// tests/oracles/attention_gqa8_inputs.hpp — calls of contracts::attention_gqa8 for the host and
// GPU tests: random and adversarial contents over a slot pool whose unindexed slots hold NaN
// (E4M3 0x7F) so that any read of a slot a row does not index shows up in the output.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "oracles/attention_gqa8.hpp"

namespace netra::oracles {

enum class gqa8_fill {
  random,          // N(0, 1) q, N(0, 1.5) K/V
  equal_scores,    // every K row identical: all weights equal
  spike,           // one position per request aligned with q and large: it dominates
  saturated,       // K/V codes at +-448 (0x7E / 0xFE)
  subnormal,       // K/V codes 0x01..0x07 / 0x81..0x87
  bitwise,         // small-integer Q and K, one non-zero V per (request, KV head, d): exact dot products and P V sums
};

struct gqa8_shape {
  int tq = 1, page_size = 1;
  std::vector<std::int64_t> lengths;  // KV length per request
  float k_scale = 1.0f, v_scale = 1.0f;
  gqa8_fill fill = gqa8_fill::random;
  int out_of_pool_every = 0;  // > 0: every n-th page-table entry points outside the pool (masked)
};

inline std::uint8_t e4m3(float x) { return e4m3_from_f32_reference(x); }

inline gqa8_case make_case(const gqa8_shape& shape, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n1(0.0f, 1.0f), n15(0.0f, 1.5f);
  gqa8_case c;
  c.tq = shape.tq, c.page_size = shape.page_size, c.batch = static_cast<int>(shape.lengths.size());
  c.k_scale = shape.k_scale, c.v_scale = shape.v_scale;
  c.q_tokens = static_cast<std::int64_t>(c.batch) * c.tq;
  std::int64_t pages = 0;
  for (std::int64_t l : shape.lengths) pages += (l + c.page_size - 1) / c.page_size;
  const std::int64_t pool_pages = pages + pages / 4 + 3;  // unindexed pages hold NaN
  c.slots = pool_pages * c.page_size;
  c.k.assign(static_cast<std::size_t>(c.slots) * 2 * 256, 0x7F);
  c.v.assign(c.k.size(), 0x7F);
  std::vector<std::int64_t> order(static_cast<std::size_t>(pool_pages));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  c.qo_indptr.push_back(0);
  c.kv_indptr.push_back(0);
  std::size_t next = 0;
  for (int b = 0; b < c.batch; ++b) {
    const std::int64_t l = shape.lengths[static_cast<std::size_t>(b)], np = (l + c.page_size - 1) / c.page_size;
    for (std::int64_t i = 0; i < np; ++i) c.kv_indices.push_back(order[next++]);
    c.qo_indptr.push_back(c.qo_indptr.back() + c.tq);
    c.kv_indptr.push_back(static_cast<std::int32_t>(c.kv_indices.size()));
    c.last_page_len.push_back(static_cast<std::int32_t>(np == 0 ? 0 : l - (np - 1) * c.page_size));
  }
  // Contents of the indexed slots.
  c.q.resize(static_cast<std::size_t>(c.q_tokens) * 16 * 256);
  for (auto& x : c.q) x = bf16_from_f32_reference(shape.fill == gqa8_fill::bitwise ? static_cast<float>(static_cast<int>(rng() % 7) - 3) : n1(rng));
  std::uniform_int_distribution<int> small(-4, 4);
  for (int b = 0; b < c.batch; ++b) {
    const std::int64_t l = shape.lengths[static_cast<std::size_t>(b)];
    std::vector<std::int64_t> hot(2 * 256, -1);  // bitwise: the one position with a non-zero V per (kv head, d)
    if (l > 0)
      for (auto& h : hot) h = static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(l));
    for (std::int64_t p = 0; p < l; ++p) {
      const std::int64_t slot = slot_of(c, b, p);
      for (int kvh = 0; kvh < 2; ++kvh)
        for (int d = 0; d < 256; ++d) {
          std::uint8_t kc = e4m3(n15(rng)), vc = e4m3(n15(rng));
          switch (shape.fill) {
            case gqa8_fill::random: break;
            case gqa8_fill::equal_scores: kc = e4m3(0.25f * static_cast<float>((d % 7) - 3)); break;
            case gqa8_fill::spike:
              if (p == l / 2) kc = e4m3(q_at(c, c.qo_indptr[b], kvh * 8, d) > 0 ? 448.0f : -448.0f);
              else kc = e4m3(0.01f * n1(rng));
              break;
            case gqa8_fill::saturated: kc = rng() % 2 ? 0x7E : 0xFE, vc = rng() % 2 ? 0x7E : 0xFE; break;
            case gqa8_fill::subnormal: kc = static_cast<std::uint8_t>(1 + rng() % 7) | (rng() % 2 ? 0x80 : 0), vc = static_cast<std::uint8_t>(1 + rng() % 7) | (rng() % 2 ? 0x80 : 0); break;
            case gqa8_fill::bitwise:
              kc = e4m3(static_cast<float>(small(rng)));
              vc = hot[static_cast<std::size_t>(kvh * 256 + d)] == p ? e4m3(static_cast<float>(small(rng)) * 0.5f) : 0;
              break;
          }
          c.k[(static_cast<std::size_t>(slot) * 2 + kvh) * 256 + d] = kc;
          c.v[(static_cast<std::size_t>(slot) * 2 + kvh) * 256 + d] = vc;
        }
    }
  }
  if (shape.out_of_pool_every > 0)
    for (std::size_t i = 0; i < c.kv_indices.size(); i += static_cast<std::size_t>(shape.out_of_pool_every))
      c.kv_indices[i] = i % 2 ? -1 : pool_pages + 7;
  return c;
}

}  // namespace netra::oracles
