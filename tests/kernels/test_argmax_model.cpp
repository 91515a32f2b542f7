// The two-stage argmax decomposition, modelled on the host with the kernels' own lane maps
// (argmax_stage_one::column/vectors_in, the DSL key and the modelled wave reductions), equals the
// row-wise torch oracle bit for bit on adversarial and random rows, for both targets' wave sizes,
// for the reference shape and for shapes with a tail chunk.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "models/cross_lane.hpp"
#include "netra/kernels/sampling/argmax.hpp"
#include "oracles/argmax.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;

namespace {
template <class Contract> std::int64_t two_stage_model(const float* row, std::vector<std::uint64_t>& keys) {
  using target = typename Contract::target;
  using one = kernels::argmax_stage_one<Contract>;
  using two = kernels::argmax_stage_two<Contract>;
  constexpr unsigned W = target::wave_size;
  for (std::uint32_t chunk = 0; chunk < Contract::chunks; ++chunk) {
    std::array<std::uint64_t, W> lane_keys{};
    for (std::uint32_t lane = 0; lane < W; ++lane) {
      std::uint32_t best_order = 0, best_column = 0xFFFFFFFFu;
      for (std::uint32_t k = 0; k < one::vectors_per_lane; ++k) {
        if (lane + k * W >= one::vectors_in(chunk)) continue;
        for (std::uint32_t e = 0; e < 4; ++e) {
          const std::uint32_t col = one::column(chunk, lane, k, e);
          const std::uint32_t order = argmax_order(__builtin_bit_cast(std::uint32_t, row[col]));
          if (order > best_order) {
            best_order = order;
            best_column = col;
          }
        }
      }
      lane_keys[lane] = argmax_key(best_order, best_column);
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
TEST_CASE("tail chunk, sm90a mapping") { check_rows<contracts::argmax<sm90a, 4100, 10, 8>>(3000); }
TEST_CASE("one vector per chunk, several chunks per lane pair") { check_rows<contracts::argmax<sm90a, 256, 64, 8>>(3000); }
