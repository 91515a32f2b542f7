// tests/oracles/argmax_rows.hpp — adversarial and random FP32 rows for argmax tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace netra::oracles {

/// The row kinds every argmax test walks through; `kind % row_kinds` picks one.
enum class row_kind : int {
  random, all_neg_inf, nan_first, nan_middle, nan_last, several_nans, negative_nan, ties_across_chunks, signed_zeros,
  zero_then_negative_zero, subnormals, several_pos_inf, all_equal, max_at_chunk_edges, huge_and_neg_inf, count
};
inline constexpr int row_kinds = static_cast<int>(row_kind::count);

struct xorshift {
  std::uint64_t s;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f; }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }
};

/// Fills row[0, n) with kind `k`; `chunk` is the chunk length of the contract under test, used
/// to put values on chunk boundaries.
inline void fill_row(float* row, std::int64_t n, row_kind k, std::uint64_t seed, std::int64_t chunk) {
  xorshift r{seed * 0x9E3779B97F4A7C15ull + 1};
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::int64_t j = 0; j < n; ++j) row[j] = r.uniform();
  switch (k) {
    case row_kind::random: break;
    case row_kind::all_neg_inf:
      for (std::int64_t j = 0; j < n; ++j) row[j] = -inf;
      break;
    case row_kind::nan_first: row[0] = nan; break;
    case row_kind::nan_middle: row[r.below(n)] = nan; break;
    case row_kind::nan_last: row[n - 1] = nan; break;
    case row_kind::several_nans:
      for (int i = 0; i < 5; ++i) row[r.below(n)] = i % 2 ? nan : -nan;
      break;
    case row_kind::negative_nan: {
      std::uint32_t bits = 0xFFC00001u;  // negative, payload set
      float v;
      std::memcpy(&v, &bits, 4);
      row[r.below(n)] = v;
      row[r.below(n)] = 2.0f;
      break;
    }
    case row_kind::ties_across_chunks:
      for (int i = 0; i < 6; ++i) row[r.below(n)] = 1.5f;
      break;
    case row_kind::signed_zeros:
      for (std::int64_t j = 0; j < n; ++j) row[j] = (r.next() & 1) ? 0.0f : -0.0f;
      break;
    case row_kind::zero_then_negative_zero:
      for (std::int64_t j = 0; j < n; ++j) row[j] = -1.0f;
      row[n / 2] = -0.0f;
      row[n / 3] = 0.0f;
      row[n - 1] = 0.0f;
      break;
    case row_kind::subnormals:
      for (std::int64_t j = 0; j < n; ++j) row[j] = std::ldexp(r.uniform(), -140);
      break;
    case row_kind::several_pos_inf:
      for (int i = 0; i < 4; ++i) row[r.below(n)] = inf;
      row[r.below(n)] = std::numeric_limits<float>::max();
      break;
    case row_kind::all_equal:
      for (std::int64_t j = 0; j < n; ++j) row[j] = 0.25f;
      break;
    case row_kind::max_at_chunk_edges:
      for (std::int64_t c = chunk; c < n; c += chunk) {
        row[c - 1] = 3.0f;
        row[c] = 3.0f;
      }
      break;
    case row_kind::huge_and_neg_inf:
      for (std::int64_t j = 0; j < n; ++j) row[j] = (r.next() & 3) ? -inf : -std::numeric_limits<float>::max();
      break;
    case row_kind::count: break;
  }
}

}  // namespace netra::oracles
