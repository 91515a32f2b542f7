// tests/oracles/argmax.hpp — torch.argmax(dim=-1) on one FP32 row, written with ordinary float
// comparisons (no ordered keys): the first NaN wins; otherwise the first strict maximum, so ties
// keep the lowest index and +0.0 == -0.0; a row of -inf gives 0.
#pragma once
#include <cmath>
#include <cstdint>

namespace netra::oracles {
inline std::int64_t argmax_row(const float* row, std::int64_t n) {
  std::int64_t best = 0;
  float value = row[0];
  if (std::isnan(value)) return 0;
  for (std::int64_t j = 1; j < n; ++j) {
    const float x = row[j];
    if (std::isnan(x)) return j;
    if (x > value) {
      value = x;
      best = j;
    }
  }
  return best;
}
}  // namespace netra::oracles
