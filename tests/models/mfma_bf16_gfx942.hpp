// tests/models/mfma_bf16_gfx942.hpp — host model of gfx942's BF16 matrix instruction
// v_mfma_f32_16x16x16_bf16, written from the CDNA3 ISA document's 16x16 MFMA operand layout
// (§7.1; the same distribution as the AMD matrix instruction calculator prints for cdna3),
// independently of dsl/matrix_fragment_targets.hpp:
//   A (16 x 16): lane l supplies row l mod 16 for K group floor(l / 16); its two registers hold
//     K 4 floor(l / 16) + 0 .. 3, two BF16 per register, the lower K in the low half.
//   B (16 x 16): lane l supplies column l mod 16, the same K values.
//   C, D: register i of lane l is element (4 floor(l / 16) + i, l mod 16).
// Numerics: products and sums in double (exact for BF16 products at this size), plus C.
#pragma once
#include <array>
#include <cstdint>

#include "models/matrix_bf16.hpp"

namespace netra::models {

using wave_ab2_bf16 = std::array<std::array<std::uint32_t, 2>, 64>;

inline wave_d_bf16 mfma_f32_16x16x16_bf16(const wave_ab2_bf16& a, const wave_ab2_bf16& b, const wave_d_bf16& c) {
  double A[16][16] = {}, B[16][16] = {};
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned v = 0; v < 4; ++v) {
      A[lane % 16][4 * (lane / 16) + v] = bf16_half(a[lane][v / 2], v % 2);
      B[4 * (lane / 16) + v][lane % 16] = bf16_half(b[lane][v / 2], v % 2);
    }
  wave_d_bf16 d{};
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = 4 * (lane / 16) + i, col = lane % 16;
      double s = c[lane][i];
      for (unsigned k = 0; k < 16; ++k) s += A[row][k] * B[k][col];
      d[lane][i] = s;
    }
  return d;
}

}  // namespace netra::models
