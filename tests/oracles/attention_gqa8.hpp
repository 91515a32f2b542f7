// tests/oracles/attention_gqa8.hpp — the host oracles of contracts::attention_gqa8.
//   reference(): the contract's semantics in FP64 on the dequantized values (E4M3 * scale), with
//     each output's comparison bound (the contract's policy) and whether the row is written.
//   netra_order(): netra's association order, bit for bit, for a plan and a (slices, BlockWarps)
//     split: blocks of 64, lane partial sums and butterflies of the plan, warp merge in warp
//     order, slice merge in slice order. The one thing it cannot repeat is the matrix unit's
//     summation; it takes each dot product as exact (FP64 rounded once), which is what the
//     hardware returns when the inputs make every dot product and every P V sum exact
//     (inputs::bitwise_case: small-integer Q and K, one non-zero V per head-dim element).
// Both take their rows on all host threads (each row's arithmetic is the serial one: the same
// values whatever the thread count).
#pragma once
#include <cmath>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "netra/dsl/attention_fragment.hpp"
#include "netra/dsl/online_softmax.hpp"

namespace netra::oracles {

struct gqa8_case {
  int tq = 1, page_size = 1, batch = 0;
  std::int64_t slots = 0, q_tokens = 0;
  float k_scale = 1.0f, v_scale = 1.0f;
  std::vector<std::uint16_t> q;    // [q_tokens][16][256] BF16
  std::vector<std::uint8_t> k, v;  // [slots][2][256] E4M3
  std::vector<std::int64_t> qo_indptr;
  std::vector<std::int32_t> kv_indptr;
  std::vector<std::int64_t> kv_indices;
  std::vector<std::int32_t> last_page_len;  // page size 16
};

constexpr int gqa8_q_heads = 16, gqa8_kv_heads = 2, gqa8_dim = 256;

struct gqa8_request {
  std::int64_t first_token = 0, length = 0;
  bool writable = false;
};
inline gqa8_request request_of(const gqa8_case& c, int b) {
  gqa8_request r;
  r.first_token = c.qo_indptr[b];
  r.writable = c.qo_indptr[b + 1] - r.first_token == c.tq && r.first_token >= 0 && r.first_token + c.tq <= c.q_tokens;
  const std::int64_t entries = std::max<std::int64_t>(0, static_cast<std::int64_t>(c.kv_indptr[b + 1]) - c.kv_indptr[b]);
  if (c.page_size == 1) r.length = entries;
  else r.length = entries == 0 ? 0 : c.page_size * (entries - 1) + std::min<std::int64_t>(c.page_size, std::max<std::int64_t>(0, c.last_page_len[b]));
  return r;
}
/// Pool slot of position p of request b, or -1 (masked).
inline std::int64_t slot_of(const gqa8_case& c, int b, std::int64_t p) {
  const std::int64_t entry = c.kv_indptr[b] + p / c.page_size;
  if (entry < 0 || entry >= static_cast<std::int64_t>(c.kv_indices.size())) return -1;
  const std::int64_t page = c.kv_indices[entry];
  if (page < 0 || page >= c.slots / c.page_size) return -1;
  return page * c.page_size + p % c.page_size;
}
inline double q_at(const gqa8_case& c, std::int64_t token, int head, int d) {
  return f32_from_bf16(c.q[(token * gqa8_q_heads + head) * gqa8_dim + d]);
}
inline std::uint8_t kv_at(const std::vector<std::uint8_t>& pool, std::int64_t slot, int kv_head, int d) {
  return pool[(slot * gqa8_kv_heads + kv_head) * gqa8_dim + d];
}

struct gqa8_expected {
  std::vector<double> out;    // [q_tokens][16][256]
  std::vector<double> bound;  // the contract's comparison bound per element
  std::vector<bool> written;  // rows of requests the call writes
};

/// f(i) for i in [0, n) on every host thread (each i once; f writes only what i owns).
template <class F> void for_each_row(std::size_t n, F f) {
  const std::size_t threads = std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) f(i);
  };
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < threads; ++k) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

/// The (request, token) pairs of the rows a call writes.
inline std::vector<std::pair<int, int>> written_tokens(const gqa8_case& c) {
  std::vector<std::pair<int, int>> rows;
  for (int b = 0; b < c.batch; ++b)
    if (request_of(c, b).writable)
      for (int t = 0; t < c.tq; ++t) rows.emplace_back(b, t);
  return rows;
}

/// FP64 semantics and the contract's bound (contracts/attention/gqa8_paged.hpp). One task per
/// (request, token, KV head): its visible positions' K and V dequantized once for its 8 heads.
inline gqa8_expected reference(const gqa8_case& c) {
  gqa8_expected e;
  const std::size_t n = static_cast<std::size_t>(c.q_tokens) * gqa8_q_heads * gqa8_dim;
  e.out.assign(n, 0.0), e.bound.assign(n, 0.0), e.written.assign(n, false);
  const double score_scale = static_cast<double>(c.k_scale) / 16.0, u = std::ldexp(1.0, -9) + std::ldexp(1.0, -22);
  const std::vector<std::pair<int, int>> rows = written_tokens(c);
  for (const auto& [b, t] : rows)
    for (std::size_t i = 0; i < static_cast<std::size_t>(gqa8_q_heads) * gqa8_dim; ++i)
      e.written[static_cast<std::size_t>(request_of(c, b).first_token + t) * gqa8_q_heads * gqa8_dim + i] = true;
  for_each_row(rows.size() * gqa8_kv_heads, [&](std::size_t task) {
    const auto [b, t] = rows[task / gqa8_kv_heads];
    const int kvh = static_cast<int>(task % gqa8_kv_heads);
    const gqa8_request r = request_of(c, b);
    const std::int64_t token = r.first_token + t, visible = std::min(r.length, r.length - c.tq + t + 1);
    std::vector<double> k, v;  // [visible unmasked positions][256]
    for (std::int64_t p = 0; p < visible; ++p) {
      const std::int64_t slot = slot_of(c, b, p);
      if (slot < 0) continue;
      for (int d = 0; d < gqa8_dim; ++d) {
        k.push_back(f32_from_e4m3(kv_at(c.k, slot, kvh, d)));
        v.push_back(static_cast<double>(f32_from_e4m3(kv_at(c.v, slot, kvh, d))) * c.v_scale);
      }
    }
    const std::size_t positions = k.size() / gqa8_dim;
    for (int h = kvh * 8; h < kvh * 8 + 8; ++h) {
      std::vector<double> s;
      double delta = 0;
      for (std::size_t j = 0; j < positions; ++j) {
        double dot = 0, absdot = 0;
        for (int d = 0; d < gqa8_dim; ++d) {
          const double x = q_at(c, token, h, d) * k[j * gqa8_dim + d];
          dot += x, absdot += std::fabs(x);
        }
        s.push_back(dot * score_scale);
        delta = std::fmax(delta, score_scale * std::ldexp(absdot, -15) + std::fabs(dot * score_scale) * std::ldexp(1.0, -24));
      }
      double m = -INFINITY;
      for (double x : s) m = std::fmax(m, x);
      double l = 0;
      std::vector<double> w(s.size());
      for (std::size_t j = 0; j < s.size(); ++j) l += (w[j] = std::exp(s[j] - m));
      const double rho = std::exp(2 * delta) * (1 + u) / (1 - u) - 1;
      for (int d = 0; d < gqa8_dim; ++d) {
        double o = 0, vinf = 0;
        for (std::size_t j = 0; j < s.size(); ++j) {
          const double val = v[j * gqa8_dim + d];
          o += w[j] * val;
          vinf = std::fmax(vinf, std::fabs(val));
        }
        const std::size_t at = (static_cast<std::size_t>(token) * gqa8_q_heads + h) * gqa8_dim + d;
        e.out[at] = s.empty() ? 0.0 : o / l;
        e.bound[at] = std::ldexp(std::fabs(e.out[at]), -8) + vinf * (rho + (r.length / 4.0 + 256) * std::ldexp(1.0, -24) + std::ldexp(1.0, -20));
      }
    }
  });
  return e;
}

/// A comparison of outputs with reference(): elements checked (written rows), beyond the bound,
/// NaN, unwritten elements that differ from `poison`, max |err| and the cosine.
struct gqa8_summary {
  std::size_t checked = 0, beyond = 0, nan = 0, untouched_bad = 0;
  double max_err = 0, dot = 0, n_ref = 0, n_got = 0;
  double cosine() const { return dot / std::sqrt(n_ref * n_got); }
};
inline gqa8_summary compare(const gqa8_expected& e, const std::vector<std::uint16_t>& got, std::uint16_t poison) {
  gqa8_summary s;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!e.written[i]) {
      s.untouched_bad += got[i] != poison;
      continue;
    }
    const double g = f32_from_bf16(got[i]);
    s.nan += g != g;
    const double err = std::fabs(g - e.out[i]);
    s.beyond += !(err <= e.bound[i]);
    s.max_err = std::fmax(s.max_err, err);
    s.dot += g * e.out[i], s.n_ref += e.out[i] * e.out[i], s.n_got += g * g;
    ++s.checked;
  }
  return s;
}

/// The (m, l, o) of one query row over positions [0, length) in netra's order for plan `Plan`:
/// `slices` slices of round_up(ceil(length / slices), 64 block_warps) positions, warp w of a slice
/// walking its blocks w, w + block_warps, ...; the warps merged in warp order, the slices in slice
/// order. score(p) is the scaled FP32 score of position p (-inf: masked, never read again);
/// value(p, d) the FP32 value element d of a position with a non-zero weight (unscaled); `row` is
/// the row inside its wave (the plan's lane partial sums). Dot products are the caller's.
struct row_state {
  softmax_stats st;
  std::vector<float> o;
};
template <class Plan, class Score, class Value>
row_state netra_order_row(std::int64_t length, int slices, int block_warps, unsigned row, int dim, Score score, Value value) {
  const std::int64_t len = std::min<std::int64_t>(length, std::int64_t{1} << 30);
  const std::int64_t chunk = ((std::max<std::int64_t>(1, (len + slices - 1) / slices) + 64 * block_warps - 1) / (64 * block_warps)) * 64 * block_warps;
  row_state total{softmax_empty(), std::vector<float>(static_cast<std::size_t>(dim), 0.0f)};
  for (int sl = 0; sl < slices; ++sl) {
    const std::int64_t start = sl * chunk, end = std::min(start + chunk, length);
    const std::int64_t blocks = start < end ? (end - start + 63) / 64 : 0;
    std::vector<row_state> waves;
    for (int w = 0; w < block_warps; ++w) {
      row_state ws{softmax_empty(), std::vector<float>(static_cast<std::size_t>(dim), 0.0f)};
      for (std::int64_t blk = w; blk < blocks; blk += block_warps) {
        float s[64], pb[64];
        float m_block = negative_infinity();
        for (int pos = 0; pos < 64; ++pos) {
          const std::int64_t at = start + 64 * blk + pos;
          s[pos] = at < end ? score(at) : negative_infinity();
          m_block = max_of(m_block, s[pos]);
        }
        const float m_new = max_of(ws.st.m, m_block);
        for (int pos = 0; pos < 64; ++pos) pb[pos] = f32_from_bf16(bf16_from_f32_reference(softmax_weight(s[pos], m_new)));
        // Lane partials (items in order), then the two butterflies of the plan.
        const unsigned base = Plan::stats_lane(row), m0 = Plan::row_mask(0), m1 = Plan::row_mask(1);
        float part[4];
        for (unsigned k = 0; k < 4; ++k) {
          const unsigned lane = base ^ (k & 1 ? m0 : 0) ^ (k & 2 ? m1 : 0);
          float acc = 0.0f;
          for (unsigned i = 0; i < Plan::scores; ++i) acc = add_rn(acc, pb[Plan::score_of(lane, i).col]);
          part[k] = acc;
        }
        const float l_block = add_rn(add_rn(part[0], part[1]), add_rn(part[2], part[3]));
        const softmax_merge_factors f = softmax_merge(ws.st, {m_new, l_block});
        ws.st = f.merged;
        for (int d = 0; d < dim; ++d) {
          double pv = 0;
          for (int pos = 0; pos < 64; ++pos)
            if (s[pos] != negative_infinity() && pb[pos] != 0.0f) pv += static_cast<double>(pb[pos]) * value(start + 64 * blk + pos, d);
          ws.o[static_cast<std::size_t>(d)] = static_cast<float>(static_cast<double>(mul_rn(ws.o[static_cast<std::size_t>(d)], f.alpha)) + pv);
        }
      }
      waves.push_back(ws);
    }
    row_state st = waves[0];
    for (int w = 1; w < block_warps; ++w) {
      const softmax_merge_factors f = softmax_merge(st.st, waves[w].st);
      for (int d = 0; d < dim; ++d) st.o[d] = softmax_merge_value(st.o[d], waves[w].o[d], f);
      st.st = f.merged;
    }
    if (sl == 0) {
      total = st;
    } else {
      const softmax_merge_factors f = softmax_merge(total.st, st.st);
      for (int d = 0; d < dim; ++d) total.o[d] = softmax_merge_value(total.o[d], st.o[d], f);
      total.st = f.merged;
    }
  }
  return total;
}

/// netra's association order for plan `Plan` with `slices` slices and `block_warps` warps per
/// slice; BF16 outputs for written rows, 0 elsewhere. Dot products taken as exact (see above).
template <class Plan> std::vector<std::uint16_t> netra_order(const gqa8_case& c, int slices, int block_warps) {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(c.q_tokens) * gqa8_q_heads * gqa8_dim, 0);
  const float score_scale = c.k_scale * 0.0625f;
  const std::vector<std::pair<int, int>> rows = written_tokens(c);
  for_each_row(rows.size() * gqa8_q_heads, [&](std::size_t task) {
    const auto [b, t] = rows[task / gqa8_q_heads];
    const gqa8_request r = request_of(c, b);
    const int h = static_cast<int>(task % gqa8_q_heads), kvh = h / 8, hr = h % 8;
    const std::int64_t token = r.first_token + t, visible_end = r.length - c.tq + t + 1;
    auto score = [&](std::int64_t at) {
      const std::int64_t slot = slot_of(c, b, at);
      if (slot < 0 || at >= visible_end) return negative_infinity();
      double dot = 0;
      for (int d = 0; d < gqa8_dim; ++d) dot += q_at(c, token, h, d) * f32_from_e4m3(kv_at(c.k, slot, kvh, d));
      return mul_rn(static_cast<float>(dot), score_scale);
    };
    auto value = [&](std::int64_t at, int d) { return static_cast<double>(f32_from_e4m3(kv_at(c.v, slot_of(c, b, at), kvh, d))); };
    const row_state total = netra_order_row<Plan>(r.length, slices, block_warps, static_cast<unsigned>(hr), gqa8_dim, score, value);
    for (int d = 0; d < gqa8_dim; ++d)
      out[(static_cast<std::size_t>(token) * gqa8_q_heads + h) * gqa8_dim + d] = bf16_from_f32_reference(softmax_finish(total.o[d], total.st.l, c.v_scale));
  });
  return out;
}

}  // namespace netra::oracles
