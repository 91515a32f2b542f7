// The two-stage argmax decomposition, modelled on the host with the kernels' own lane maps
// (argmax_stage_one::lane_offset/vectors_in, the DSL key and the modelled wave reductions), equals the
// row-wise torch oracle bit for bit on adversarial and random rows, for both targets' wave sizes,
// for the reference shape and for shapes with a tail chunk.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "models/cross_lane.hpp"
#include "netra/kernels/sampling/argmax.hpp"
#include "oracles/argmax.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;

namespace {
// The kernels' algorithm on the host: per lane maxNum in load order and a NaN flag, then the
// first occurrence of the max (or the first NaN) scanning registers from last to first; the
// modelled wave butterfly; stage two's reduction of the row's keys in 16-byte pairs.
template <class Contract> std::int64_t two_stage_model(const float* row, std::vector<std::uint64_t>& keys) {
  using target = typename Contract::target;
  using one = kernels::argmax_stage_one<Contract>;
  using two = kernels::argmax_stage_two<Contract>;
  constexpr unsigned W = target::wave_size;
  for (std::uint32_t chunk = 0; chunk < Contract::chunks; ++chunk) {
    std::array<std::uint64_t, W> lane_keys{};
    for (std::uint32_t lane = 0; lane < W; ++lane) {
      const std::uint32_t first_column = chunk * Contract::chunk_length + 4 * lane;
      auto in_range = [&](std::uint32_t k) { return lane + k * W < one::vectors_in(chunk); };
      float m = -std::numeric_limits<float>::infinity();
      bool saw_nan = false;
      for (std::uint32_t k = 0; k < one::vectors_per_lane; ++k)
        for (std::uint32_t e = 0; e < 4 && in_range(k); ++e) {
          const float x = row[first_column + one::lane_offset(k, e)];
          m = std::fmax(m, x);  // IEEE maxNum, as max.f32 / v_max_f32
          saw_nan |= x != x;
        }
      std::uint32_t first = one::no_value;
      for (std::uint32_t k = one::vectors_per_lane; k-- > 0;)
        for (std::uint32_t e = 4; e-- > 0 && in_range(k);) {
          const float x = row[first_column + one::lane_offset(k, e)];
          if (saw_nan ? x != x : x == m) first = one::lane_offset(k, e);
        }
      const std::uint32_t order = saw_nan ? 0xFFFFFFFFu : argmax_order(__builtin_bit_cast(std::uint32_t, m));
      lane_keys[lane] = first == one::no_value ? argmax_key_identity : argmax_key(order, first_column + first);
    }
    keys[chunk] = models::wave_max_u64<target>(lane_keys)[0];
  }
  std::array<std::uint64_t, W> lane_best{};
  for (std::uint32_t lane = 0; lane < W; ++lane)
    for (std::uint32_t k = 0; k < two::pairs_per_lane; ++k) {
      const std::uint32_t pair = lane + k * W;
      if (pair < two::key_pairs) lane_best[lane] = std::max({lane_best[lane], keys[2 * pair], keys[2 * pair + 1]});
    }
  return argmax_key_index(models::wave_max_u64<target>(lane_best)[0]);
}

template <class Contract> void check_rows(int rows) {
  std::vector<float> row(Contract::n);
  std::vector<std::uint64_t> keys(Contract::chunks);
  for (int i = 0; i < rows; ++i) {
    const auto kind = static_cast<oracles::row_kind>(i % oracles::row_kinds);
    oracles::fill_row(row.data(), Contract::n, kind, static_cast<std::uint64_t>(i), Contract::chunk_length);
    const std::int64_t expect = oracles::argmax_row(row.data(), Contract::n);
    const std::int64_t got = two_stage_model<Contract>(row.data(), keys);
    INFO("row ", i, " kind ", static_cast<int>(kind));
    REQUIRE(got == expect);
  }
}
}  // namespace

TEST_CASE("reference shape, gfx950 mapping (wave64): 1050 rows") { check_rows<contracts::argmax_reference<gfx950>>(1050); }
TEST_CASE("reference shape, sm90a mapping (warp32): 1050 rows") { check_rows<contracts::argmax_reference<sm90a>>(1050); }
TEST_CASE("tail chunk, gfx950 mapping") { check_rows<contracts::argmax<gfx950, 1000, 6, 4>>(3000); }
TEST_CASE("tail chunk, sm90a mapping") { check_rows<contracts::argmax<sm90a, 4100, 10, 8, 2>>(3000); }
TEST_CASE("one vector per chunk, several chunks per lane pair") { check_rows<contracts::argmax<sm90a, 256, 64, 8>>(3000); }
TEST_CASE("one wave per workgroup on sm90a (the bench variant)") { check_rows<contracts::argmax<sm90a, 8192, 16, 8, 1>>(3000); }
