// netra/dsl/fragment/register_tile.hpp — operand pieces held in registers and the products over
// them: a lane's pieces of one operand for a run of `steps` instructions along K
// (dsl/fragment/operand_pieces.hpp), the register words each instruction takes from them, and
// acc = A * B + acc over the run, instruction by instruction.
//   register_tile<Map, Steps>: u32x4 piece[Map::pieces(Steps)], piece v as Map::piece_of(l, v).
//   operand_words<Map>(w, pieces, q): instruction q's words; `pieces` is any array whose
//     element v is indexable by word (u32x4, or u32[4] for words built in registers).
//   multiply<Shape, Steps>(acc, a, b):  one instruction tile;
//   multiply<Shape, Steps>(acc[n], a, b[n]): Tiles instruction tiles sharing A, in instruction
//     order (instruction q of every tile before q + 1; A's words gathered once per instruction).
#pragma once
#include "netra/dsl/fragment/operand_pieces.hpp"
#include "netra/dsl/vector_types.hpp"

namespace netra::fragment {

template <class Map, u32 Steps> struct register_tile {
  static constexpr u32 pieces = Map::pieces(Steps);
  u32x4 piece[pieces];
  NETRA_HOST_DEVICE constexpr const u32x4& operator[](u32 v) const { return piece[v]; }
};

template <class Map, class Pieces> NETRA_DEVICE void operand_words(u32 (&w)[Map::words], const Pieces& pieces, u32 q) {
  NETRA_UNROLL
  for (u32 i = 0; i < Map::words; ++i) w[i] = pieces[Map::word_of(q, i).piece][Map::word_of(q, i).word];
}

/// acc = A * B + acc over instructions 0 .. Steps - 1 of one tile.
template <class Shape, u32 Steps, class APieces, class BPieces>
NETRA_DEVICE void multiply(float (&acc)[Shape::d_items], const APieces& a, const BPieces& b) {
  NETRA_UNROLL
  for (u32 q = 0; q < Steps; ++q) {
    u32 aw[Shape::a_words], bw[Shape::b_words];
    operand_words<a_pieces<Shape>>(aw, a, q);
    operand_words<b_pieces<Shape>>(bw, b, q);
    mma<Shape>(acc, aw, bw, acc);
  }
}

/// acc[n] = A * B[n] + acc[n] for Tiles instruction tiles along N that share A.
template <class Shape, u32 Steps, u32 Tiles, class APieces, class BPieces>
NETRA_DEVICE void multiply(float (&acc)[Tiles][Shape::d_items], const APieces& a, const BPieces (&b)[Tiles]) {
  NETRA_UNROLL
  for (u32 q = 0; q < Steps; ++q) {
    u32 aw[Shape::a_words];
    operand_words<a_pieces<Shape>>(aw, a, q);
    NETRA_UNROLL
    for (u32 n = 0; n < Tiles; ++n) {
      u32 bw[Shape::b_words];
      operand_words<b_pieces<Shape>>(bw, b[n], q);
      mma<Shape>(acc[n], aw, bw, acc[n]);
    }
  }
}

}  // namespace netra::fragment
