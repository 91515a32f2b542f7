// tests/models/mfma.hpp — host models of the gfx950 FP8 MFMA instructions, written from the
// CDNA3/CDNA4 ISA documents' description of the matrix operands (and the sources cited in
// docs/target-notes.md §2), independently of dsl/matrix_fragment.hpp. Given every lane's A, B and C
// registers the model returns every lane's D.
//
// Operand distribution (wave64, lane l; "K group" = which slice of K a lane supplies):
//   16x16 shapes:  A lane l supplies row (l mod 16) of A for K group floor(l / 16);
//                  B lane l supplies column (l mod 16) of B for the same K group;
//                  D/C register i of lane l is element (4 floor(l / 16) + i, l mod 16).
//   32x32x64:      A lane l supplies row (l mod 32) for K group floor(l / 32), bytes 0..15 at
//                  K 16g + (0..15) and bytes 16..31 at K 32 + 16g + (0..15) [S: AMD blog, Fig. 9];
//                  D/C register 4i + r is element (8i + 4 floor(l / 32) + r, l mod 32).
//   16x16x32 fp8:  8 bytes per lane; byte b of K group g is K 8g + b.
//   16x16x128:     32 bytes per lane; which K inside the group byte b is, is NOT documented
//                  anywhere we could read ([I] in docs/target-notes.md §2). The model takes it as a
//                  parameter: `halves` (bytes 0..15 at K 16g + b, bytes 16..31 at K 64 + 16g + b
//                  - 16: the 32x32x64 pattern, the natural reading) or `contiguous` (K 32g + b).
//                  A and B use the same order (symmetric operands, as in every documented MFMA).
// Numerics: E4M3 (OCP E4M3FN, dsl/convert.hpp decoding) products and sums in double, rounded once
// to float, plus C. Exact for the small-integer data the layout tests use; real hardware sums in
// FP32 in an unspecified order (the comparison policy bounds that).
#pragma once
#include <array>
#include <cstdint>

#include "netra/dsl/convert.hpp"

namespace netra::models {

template <unsigned Words> using lane_words = std::array<std::array<std::uint32_t, Words>, 64>;
template <unsigned Items> using lane_floats = std::array<std::array<float, Items>, 64>;

inline std::uint8_t byte_of(const std::uint32_t* words, unsigned b) { return static_cast<std::uint8_t>(words[b / 4] >> (8 * (b % 4))); }
inline double e4m3_value(std::uint8_t v) { return static_cast<double>(f32_from_e4m3(v)); }

enum class k_order_16x16x128 { halves, contiguous };

/// v_mfma_f32_16x16x128_f8f6f4, cbsz = blgp = 0 (E4M3 x E4M3), no scales.
template <k_order_16x16x128 Order>
lane_floats<4> v_mfma_f32_16x16x128_e4m3(const lane_words<8>& a, const lane_words<8>& b, const lane_floats<4>& c) {
  double A[16][128] = {}, B[128][16] = {};
  for (unsigned l = 0; l < 64; ++l) {
    const unsigned g = l / 16;
    for (unsigned byte = 0; byte < 32; ++byte) {
      const unsigned k = Order == k_order_16x16x128::halves ? (byte < 16 ? 16 * g + byte : 64 + 16 * g + (byte - 16)) : 32 * g + byte;
      A[l % 16][k] = e4m3_value(byte_of(a[l].data(), byte));
      B[k][l % 16] = e4m3_value(byte_of(b[l].data(), byte));
    }
  }
  lane_floats<4> d{};
  for (unsigned l = 0; l < 64; ++l)
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = 4 * (l / 16) + i, col = l % 16;
      double s = 0;
      for (unsigned k = 0; k < 128; ++k) s += A[row][k] * B[k][col];
      d[l][i] = static_cast<float>(s + static_cast<double>(c[l][i]));
    }
  return d;
}

/// v_mfma_f32_32x32x64_f8f6f4, cbsz = blgp = 0 (E4M3 x E4M3), no scales.
inline lane_floats<16> v_mfma_f32_32x32x64_e4m3(const lane_words<8>& a, const lane_words<8>& b, const lane_floats<16>& c) {
  double A[32][64] = {}, B[64][32] = {};
  for (unsigned l = 0; l < 64; ++l) {
    const unsigned g = l / 32;
    for (unsigned byte = 0; byte < 32; ++byte) {
      const unsigned k = byte < 16 ? 16 * g + byte : 32 + 16 * g + (byte - 16);
      A[l % 32][k] = e4m3_value(byte_of(a[l].data(), byte));
      B[k][l % 32] = e4m3_value(byte_of(b[l].data(), byte));
    }
  }
  lane_floats<16> d{};
  for (unsigned l = 0; l < 64; ++l)
    for (unsigned i = 0; i < 4; ++i)
      for (unsigned r = 0; r < 4; ++r) {
        const unsigned row = 8 * i + 4 * (l / 32) + r, col = l % 32;
        double s = 0;
        for (unsigned k = 0; k < 64; ++k) s += A[row][k] * B[k][col];
        d[l][4 * i + r] = static_cast<float>(s + static_cast<double>(c[l][4 * i + r]));
      }
  return d;
}

/// v_mfma_f32_16x16x32_fp8_fp8, cbsz = abid = blgp = 0. Format: how the hardware reads the bytes
/// (E4M3FN on gfx950, E4M3FNUZ on gfx942: dsl/fp8_format.hpp).
template <class Format = fp8::e4m3fn>
lane_floats<4> v_mfma_f32_16x16x32_fp8_fp8(const lane_words<2>& a, const lane_words<2>& b, const lane_floats<4>& c) {
  double A[16][32] = {}, B[32][16] = {};
  for (unsigned l = 0; l < 64; ++l)
    for (unsigned byte = 0; byte < 8; ++byte) {
      const unsigned k = 8 * (l / 16) + byte;
      A[l % 16][k] = static_cast<double>(f32_from_fp8<Format>(byte_of(a[l].data(), byte)));
      B[k][l % 16] = static_cast<double>(f32_from_fp8<Format>(byte_of(b[l].data(), byte)));
    }
  lane_floats<4> d{};
  for (unsigned l = 0; l < 64; ++l)
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = 4 * (l / 16) + i, col = l % 16;
      double s = 0;
      for (unsigned k = 0; k < 32; ++k) s += A[row][k] * B[k][col];
      d[l][i] = static_cast<float>(s + static_cast<double>(c[l][i]));
    }
  return d;
}

}  // namespace netra::models
