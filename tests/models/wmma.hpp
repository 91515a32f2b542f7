// tests/models/wmma.hpp — host model of the RDNA 3 / 3.5 (gfx11) BF16 WMMA instruction at
// wave32, written from the RDNA3 ISA's description of its operands (and AMD GPUOpen's WMMA
// article), independently of dsl/matrix_fragment_targets.hpp:
//   v_wmma_f32_16x16x16_bf16 (wave32): A is 16 x 16, held in 8 VGPRs: lane r (0..15) holds row r,
//   element k in the half k % 2 (low first) of VGPR k / 2; lanes 16..31 must hold a copy of lanes
//   0..15. B likewise, lane c holding column c. C/D: VGPR i of lanes 0..15 holds row 2i, of lanes
//   16..31 row 2i + 1, at column lane % 16.
// Numerics: BF16 products and sums in double (exact for the small-integer test data), plus C.
// A wave whose upper half does not repeat its lower half has no defined result: the model says so.
#pragma once
#include <array>
#include <cstdint>
#include <optional>

#include "netra/dsl/convert.hpp"

namespace netra::models {

using wave32_words8 = std::array<std::array<std::uint32_t, 8>, 32>;
using wave32_floats8 = std::array<std::array<float, 8>, 32>;

/// C and D items of type T (float as the instruction; double for tests that sum exactly).
template <class T>
std::optional<std::array<std::array<T, 8>, 32>> v_wmma_f32_16x16x16_bf16_w32(const wave32_words8& a, const wave32_words8& b, const std::array<std::array<T, 8>, 32>& c) {
  for (unsigned lane = 0; lane < 16; ++lane)
    if (a[lane] != a[lane + 16] || b[lane] != b[lane + 16]) return std::nullopt;
  double A[16][16] = {}, B[16][16] = {};
  for (unsigned lane = 0; lane < 16; ++lane)
    for (unsigned k = 0; k < 16; ++k) {
      A[lane][k] = static_cast<double>(f32_from_bf16(static_cast<std::uint16_t>(a[lane][k / 2] >> (16 * (k % 2)))));
      B[k][lane] = static_cast<double>(f32_from_bf16(static_cast<std::uint16_t>(b[lane][k / 2] >> (16 * (k % 2)))));
    }
  std::array<std::array<T, 8>, 32> d{};
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned v = 0; v < 8; ++v) {
      const unsigned row = 2 * v + (lane < 16 ? 0 : 1), col = lane % 16;
      double s = static_cast<double>(c[lane][v]);
      for (unsigned k = 0; k < 16; ++k) s += A[row][k] * B[k][col];
      d[lane][v] = static_cast<T>(s);
    }
  return d;
}

/// RDNA 3 cross-lane selections at wave32 (source lane of each lane), from the ISA:
///   DPP row_xmask:m  lane i reads lane (i & ~15) | ((i & 15) ^ m);
///   v_permlanex16_b32 with selects (lo, hi): lane i reads, in the other row of 16, the lane
///   whose position is nibble (i % 16) of the 64-bit select hi:lo.
inline unsigned row_xmask_source(unsigned lane, unsigned mask) { return (lane & ~15u) | ((lane & 15u) ^ mask); }
inline unsigned permlanex16_source(unsigned lane, std::uint32_t sel_lo, std::uint32_t sel_hi) {
  const unsigned p = lane % 16;
  const unsigned nibble = p < 8 ? (sel_lo >> (4 * p)) & 15u : (sel_hi >> (4 * (p - 8))) & 15u;
  return ((lane & 16u) ^ 16u) | nibble;
}

}  // namespace netra::models
