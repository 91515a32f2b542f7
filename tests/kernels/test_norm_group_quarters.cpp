// kernels/norm/group_quarters.hpp on the host: its stages (the pairs, the stage of mask 8 on the
// sent pair, the stages 4, 2, 1 on the kept one, the lane's half) run over every lane of a wave32
// and a wave64 with shuffles modelled as partner = lane ^ mask, on random, adversarial (NaN, Inf,
// zeros, signs, one huge value) and all-equal magnitudes. Lane quarter s of each 16-lane group must
// hold the amax (bf16x2_magnitude_max's order) of slot s's 16 chunks; source_of(lane, s) must name
// a lane of the same group that holds slot s; exactly one lane a group and slot stores the scale.
#include <doctest/doctest.h>

#include <array>
#include <random>
#include <vector>

#include "netra/kernels/norm/group_quarters.hpp"

using namespace netra;

namespace {
template <class Target> void check_wave(std::uint32_t seed) {
  using Q = kernels::group_quarters<Target, 50>;
  constexpr u32 W = Target::wave_size;
  std::mt19937 rng(seed);
  const std::array<u16, 8> specials = {0x7FC1, 0xFFC0, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x7F7F, 0x0001};
  std::vector<std::array<std::array<u32, 4>, 4>> y(W);
  for (u32 l = 0; l < W; ++l)
    for (u32 s = 0; s < 4; ++s)
      for (u32 e = 0; e < 4; ++e) {
        u32 lo = rng() & 0xFFFFu, hi = rng() & 0xFFFFu;
        if (rng() % 16 == 0) lo = specials[rng() % specials.size()];
        if (seed % 3 == 0) lo = hi = 0x3F80;  // every magnitude equal
        y[l][s][e] = lo | (hi << 16);
      }
  // the stages, every lane in step
  std::vector<typename Q::pairs> p(W);
  std::vector<u32> kept(W), own(W);
  for (u32 l = 0; l < W; ++l) {
    u32 rows[4][4];
    for (u32 s = 0; s < 4; ++s)
      for (u32 e = 0; e < 4; ++e) rows[s][e] = y[l][s][e];
    p[l] = Q::pairs::of(rows);
  }
  for (u32 l = 0; l < W; ++l) kept[l] = max_u16x2(p[l].kept((l & 8u) != 0), p[l ^ 8].sent(((l ^ 8) & 8u) != 0));  // upper: lane bit 3
  for (u32 mask = 4; mask >= 1; mask >>= 1) {
    std::vector<u32> next(W);
    for (u32 l = 0; l < W; ++l) next[l] = max_u16x2(kept[l], kept[l ^ mask]);
    kept = next;
  }
  for (u32 l = 0; l < W; ++l) own[l] = Q::own_half(kept[l], l);
  long mismatches = 0, bad_sources = 0, scale_stores = 0;
  for (u32 l = 0; l < W; ++l) {
    const u32 s = Q::slot_of_lane(l), first = l & ~15u;
    u32 want = 0;
    for (u32 m = first; m < first + 16; ++m)
      for (u32 e = 0; e < 4; ++e) want = max_of(want, bf16x2_magnitude_max(y[m][s][e]));
    mismatches += own[l] != want;
    for (u32 t = 0; t < 4; ++t) {
      const u32 src = Q::source_of(l, t);
      bad_sources += (src & ~15u) != first || Q::slot_of_lane(src) != t;
      scale_stores += Q::stores_scale(l, t);
    }
  }
  CHECK(mismatches == 0);
  CHECK(bad_sources == 0);
  CHECK(scale_stores == static_cast<long>(W / 16 * 4));  // one lane a group and slot
}
}  // namespace

TEST_CASE("group_quarters: lane quarter s holds slot s's group amax on wave32 and wave64") {
  for (std::uint32_t seed = 1; seed <= 24; ++seed) {
    check_wave<sm90a>(seed);
    check_wave<gfx950>(seed);
  }
}
