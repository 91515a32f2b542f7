// netra/dsl/fragment/lds_tile.hpp — shared-memory (LDS) tiles and their bank layout.
//   lds_f32_tile<Rows, Stride>: Rows rows of FP32, `Stride` floats apart (16-byte aligned rows);
//     store_d<Shape>(tile, acc[n], lane) writes the D fragments of Tiles instruction tiles side by
//     side (tile n at columns n * N ..): items 2h, 2h + 1 with one 8-byte store where the shape
//     puts them in adjacent columns of a row (d_pairs_adjacent), else one 4-byte store each.
//   lds_piece(base, row_bytes, index, k): the 16-byte piece at (row `index`, byte k) of rows
//     `row_bytes` apart, e.g. a weight tile the copy engine staged (dsl/bulk_copy.hpp).
//   Bank model (store_d_wavefronts): an LDS access is served in wavefronts, each taking one
//   4-byte word from each of Target::lds_banks banks (bank = word address mod banks); an access
//   needs max(ceil(bytes / (4 banks)), the most distinct words any bank receives) of them.
#pragma once
#include "netra/dsl/matrix_fragment.hpp"
#include "netra/dsl/vector_types.hpp"

namespace netra::fragment {

/// Two adjacent FP32 values of one LDS row: one 8-byte access.
struct alignas(8) f32x2 {
  float first, second;
};

/// True when items 2h and 2h + 1 of every lane's D fragment are columns c, c + 1 (c even) of one row.
template <class Shape> NETRA_HOST_DEVICE constexpr bool d_pairs_adjacent() {
  for (u32 lane = 0; lane < Shape::wave_size; ++lane)
    for (u32 h = 0; 2 * h + 1 < Shape::d_items; ++h) {
      const fragment_element a = Shape::d_element(lane, 2 * h), b = Shape::d_element(lane, 2 * h + 1);
      if (b.row != a.row || b.col != a.col + 1 || a.col % 2 != 0) return false;
    }
  return true;
}

template <u32 Rows, u32 Stride> struct lds_f32_tile {
  static_assert(Stride % 4 == 0, "netra::fragment::lds_f32_tile: rows must be 16-byte aligned (Stride a multiple of 4 floats)");
  static constexpr u32 rows = Rows, stride = Stride;
  u32x4 v[Rows][Stride / 4];
  NETRA_HOST_DEVICE float* row(u32 r) { return reinterpret_cast<float*>(v[r]); }
};

template <class Shape, u32 Tiles, u32 Rows, u32 Stride>
NETRA_DEVICE void store_d(lds_f32_tile<Rows, Stride>& tile, const float (&acc)[Tiles][Shape::d_items], u32 lane) {
  static_assert(Tiles * Shape::n <= Stride && Shape::m <= Rows, "netra::fragment::store_d: the D tiles do not fit the LDS tile");
  if constexpr (d_pairs_adjacent<Shape>()) {
    NETRA_UNROLL
    for (u32 n = 0; n < Tiles; ++n)
      NETRA_UNROLL
      for (u32 h = 0; 2 * h < Shape::d_items; ++h) {
        const fragment_element d = Shape::d_element(lane, 2 * h);
        *reinterpret_cast<f32x2*>(tile.row(d.row) + Shape::n * n + d.col) = f32x2{acc[n][2 * h], acc[n][2 * h + 1]};
      }
  } else {
    NETRA_UNROLL
    for (u32 n = 0; n < Tiles; ++n)
      NETRA_UNROLL
      for (u32 i = 0; i < Shape::d_items; ++i) {
        const fragment_element d = Shape::d_element(lane, i);
        tile.row(d.row)[Shape::n * n + d.col] = acc[n][i];
      }
  }
}

/// Wavefronts of one store_d access (tile n, pair or item h) under the bank model above.
template <class Shape, u32 Stride, u32 Banks> NETRA_HOST_DEVICE constexpr u32 store_d_wavefronts(u32 n, u32 h) {
  constexpr bool pairs = d_pairs_adjacent<Shape>();
  constexpr u32 words = pairs ? 2 : 1;
  u32 worst = 0;
  for (u32 bank = 0; bank < Banks; ++bank) {
    u32 distinct = 0;
    for (u32 l = 0; l < Shape::wave_size; ++l)
      for (u32 j = 0; j < words; ++j) {
        const fragment_element d = Shape::d_element(l, pairs ? 2 * h : h);
        const u32 word = d.row * Stride + Shape::n * n + d.col + j;
        if (word % Banks != bank) continue;
        bool seen = false;  // the same word from an earlier lane is one access
        for (u32 l2 = 0; l2 < l; ++l2)
          for (u32 j2 = 0; j2 < words; ++j2) {
            const fragment_element e = Shape::d_element(l2, pairs ? 2 * h : h);
            seen = seen || e.row * Stride + Shape::n * n + e.col + j2 == word;
          }
        distinct += seen ? 0 : 1;
      }
    worst = max_of(worst, distinct);
  }
  return max_of(worst, ceil_div(Shape::wave_size * words, Banks));
}

/// The 16-byte piece at row `index`, byte `k` of rows `row_bytes` apart starting at `base`.
NETRA_DEVICE u32x4 lds_piece(const u8* base, u32 row_bytes, u32 index, u32 k) {
  return *reinterpret_cast<const u32x4*>(base + index * row_bytes + k);
}

}  // namespace netra::fragment
