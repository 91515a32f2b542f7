// tests/models/matrix_bf16.hpp — host models of the BF16 matrix instructions the router uses,
// written from the ISA documents as register -> matrix unpacking rules, independently of
// dsl/matrix_fragment_bf16.hpp:
//   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (PTX ISA, "Matrix Fragments for
//   mma.m16n8k16 with floating point type"): groupID = lane >> 2, threadID_in_group = lane % 4;
//     A (16 x 16): registers a0..a3 hold a_0..a_7, two per register, low half first;
//       row = groupID for a_0, a_1, a_4, a_5 and groupID + 8 for a_2, a_3, a_6, a_7;
//       col = threadID_in_group * 2 + (i & 1), + 8 for a_4 .. a_7.
//     B (16 x 8): b0, b1 hold b_0..b_3; row = threadID_in_group * 2 + (i & 1), + 8 for b_2, b_3;
//       col = groupID.
//     C, D (16 x 8): row = groupID for c0, c1, groupID + 8 for c2, c3; col = threadID_in_group * 2 + (i & 1).
//   v_mfma_f32_16x16x32_bf16 (CDNA3/CDNA4 ISA 16x16 MFMA layout, 8 BF16 per lane, K group
//   l / 16): A register pair lane l: row l % 16, K 8 (l / 16) .. + 7 (low half first in each
//   dword); B likewise with columns; D item i of lane l: row 4 (l / 16) + i, column l % 16.
// Numerics: products and sums in double (exact for BF16 products and these sizes), plus C.
#pragma once
#include <array>
#include <cstdint>

#include "netra/dsl/convert.hpp"

namespace netra::models {

inline double bf16_half(std::uint32_t word, unsigned half) {
  return static_cast<double>(f32_from_bf16(static_cast<std::uint16_t>(word >> (16 * half))));
}

using warp_a_bf16 = std::array<std::array<std::uint32_t, 4>, 32>;
using warp_b_bf16 = std::array<std::array<std::uint32_t, 2>, 32>;
using warp_d_bf16 = std::array<std::array<double, 4>, 32>;

inline warp_d_bf16 mma_m16n8k16_bf16(const warp_a_bf16& a, const warp_b_bf16& b, const warp_d_bf16& c) {
  double A[16][16] = {}, B[16][8] = {};
  for (unsigned lane = 0; lane < 32; ++lane) {
    const unsigned group = lane >> 2, tig = lane % 4;
    for (unsigned i = 0; i < 8; ++i) {
      const unsigned row = (i == 2 || i == 3 || i == 6 || i == 7) ? group + 8 : group;
      const unsigned col = tig * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      A[row][col] = bf16_half(a[lane][i / 2], i % 2);
    }
    for (unsigned i = 0; i < 4; ++i) B[tig * 2 + (i & 1) + (i >= 2 ? 8 : 0)][group] = bf16_half(b[lane][i / 2], i % 2);
  }
  warp_d_bf16 d{};
  for (unsigned lane = 0; lane < 32; ++lane) {
    const unsigned group = lane >> 2, tig = lane % 4;
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = i < 2 ? group : group + 8, col = tig * 2 + (i & 1);
      double s = c[lane][i];
      for (unsigned k = 0; k < 16; ++k) s += A[row][k] * B[k][col];
      d[lane][i] = s;
    }
  }
  return d;
}

/// A / B registers of a 16x16xK BF16 MFMA: K / 8 words per lane (K / 4 values of K group l / 16).
template <unsigned K> using wave_ab_bf16_k = std::array<std::array<std::uint32_t, K / 8>, 64>;
using wave_ab_bf16 = wave_ab_bf16_k<32>;
using wave_d_bf16 = std::array<std::array<double, 4>, 64>;

/// The 16x16 MFMA layout with K / 4 BF16 values per lane: A lane l row l % 16, K (K / 4)(l / 16) + i
/// (value i in half i % 2 of word i / 2); B likewise by column; D item i of lane l at
/// (4 (l / 16) + i, l % 16). K = 32: v_mfma_f32_16x16x32_bf16 (gfx950); K = 16:
/// v_mfma_f32_16x16x16_bf16 (gfx942, tests/models/mfma_bf16_gfx942.hpp).
template <unsigned K> wave_d_bf16 mfma_f32_16x16xk_bf16(const wave_ab_bf16_k<K>& a, const wave_ab_bf16_k<K>& b, const wave_d_bf16& c) {
  constexpr unsigned per_lane = K / 4;
  double A[16][K] = {}, B[K][16] = {};
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned i = 0; i < per_lane; ++i) {
      A[lane % 16][per_lane * (lane / 16) + i] = bf16_half(a[lane][i / 2], i % 2);
      B[per_lane * (lane / 16) + i][lane % 16] = bf16_half(b[lane][i / 2], i % 2);
    }
  wave_d_bf16 d{};
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = 4 * (lane / 16) + i, col = lane % 16;
      double s = c[lane][i];
      for (unsigned k = 0; k < K; ++k) s += A[row][k] * B[k][col];
      d[lane][i] = s;
    }
  return d;
}
inline wave_d_bf16 mfma_f32_16x16x32_bf16(const wave_ab_bf16& a, const wave_ab_bf16& b, const wave_d_bf16& c) { return mfma_f32_16x16xk_bf16<32>(a, b, c); }

}  // namespace netra::models
