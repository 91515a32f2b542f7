// tests/models/mma_sync.hpp — host model of mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32,
// written from the PTX ISA's "Matrix Fragments for mma.m16n8k32" (8-bit A/B, FP32 C/D), checked
// on the H200 (docs/target-notes.md §7), independently of dsl/matrix_fragment.hpp:
//   groupID = laneid >> 2, threadID_in_group = laneid % 4.
//   A (16 x 32, row): a0..a3 hold 16 elements a_i (4 per register, low byte first);
//     row = groupID for a_i in a0 and a2, groupID + 8 for a_i in a1 and a3;
//     col = threadID_in_group * 4 + (i & 3) for i < 8, + 16 for i >= 8.
//   B (32 x 8, col): b0, b1 hold 8 elements b_i;
//     row = threadID_in_group * 4 + (i & 3) for i < 4, + 16 for i >= 4; col = groupID.
//   C, D (16 x 8): c0..c3; row = groupID for c0, c1, groupID + 8 for c2, c3;
//     col = threadID_in_group * 2 + (i & 1).
// Numerics: exact products and sums in double, rounded once to float, plus C (Hopper emulates the
// instruction through FP16 HMMA: every E4M3 value is exact in FP16; its FP32 accumulation order
// is unspecified, bounded by the comparison policy).
#pragma once
#include <array>
#include <cstdint>

#include "netra/dsl/convert.hpp"

namespace netra::models {

using warp_a = std::array<std::array<std::uint32_t, 4>, 32>;
using warp_b = std::array<std::array<std::uint32_t, 2>, 32>;
using warp_c = std::array<std::array<float, 4>, 32>;

inline warp_c mma_m16n8k32_e4m3(const warp_a& a, const warp_b& b, const warp_c& c) {
  double A[16][32] = {}, B[32][8] = {};
  for (unsigned lane = 0; lane < 32; ++lane) {
    const unsigned group = lane >> 2, tig = lane % 4;
    for (unsigned i = 0; i < 16; ++i) {
      const unsigned reg = i / 4;
      const unsigned row = (reg == 0 || reg == 2) ? group : group + 8;
      const unsigned col = tig * 4 + (i & 3) + (i >= 8 ? 16 : 0);
      A[row][col] = static_cast<double>(f32_from_e4m3(static_cast<std::uint8_t>(a[lane][reg] >> (8 * (i % 4)))));
    }
    for (unsigned i = 0; i < 8; ++i) {
      const unsigned row = tig * 4 + (i & 3) + (i >= 4 ? 16 : 0);
      B[row][group] = static_cast<double>(f32_from_e4m3(static_cast<std::uint8_t>(b[lane][i / 4] >> (8 * (i % 4)))));
    }
  }
  warp_c d{};
  for (unsigned lane = 0; lane < 32; ++lane) {
    const unsigned group = lane >> 2, tig = lane % 4;
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = i < 2 ? group : group + 8, col = tig * 2 + (i & 1);
      double s = 0;
      for (unsigned k = 0; k < 32; ++k) s += A[row][k] * B[k][col];
      d[lane][i] = static_cast<float>(s + static_cast<double>(c[lane][i]));
    }
  }
  return d;
}

}  // namespace netra::models
