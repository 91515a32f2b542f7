// netra/dsl/fragment/block_tile.hpp — a block tile: D(M rows x Columns) = A(M x BlockK) *
// B(BlockK x Columns) as `mmas` instructions of one shape along K and `tiles` instruction tiles
// along the columns, with the operand-piece maps of dsl/fragment/operand_pieces.hpp.
// (The decode expert kernels' tile: 16 weight rows x one 128-K scale block x 16 route columns;
// attention's Q K^T is the same with A = Q rows, B = K columns, BlockK = head dim.)
//   weight_piece(l, v) / act_piece(l, n, v): the lane's A / B pieces (index, first k in the block);
//   a_word(q, i) / b_word(q, i):            instruction q's register words from those pieces;
//   d_element(l, n, i):                      (row, column in the tile) of D item i of tile n;
//   b_lane_of(c):                            the lowest lane whose B column is column c of a tile;
//   amax_mask(i):                            xor masks joining the lanes that share a B column
//                                            (their groups), e.g. for a column's amax.
#pragma once
#include "netra/dsl/fragment/operand_pieces.hpp"

namespace netra::fragment {

template <class Shape, u32 BlockK, u32 Columns> struct block_tile {
  using shape = Shape;
  using a_map = a_pieces<Shape>;
  using b_map = b_pieces<Shape>;
  static constexpr u32 wave = Shape::wave_size;
  static constexpr u32 rows = Shape::m;
  static constexpr u32 tile_columns = Shape::n;
  static constexpr u32 tiles = Columns / Shape::n;
  static constexpr u32 chunk_columns = Columns;
  static constexpr u32 block_k = BlockK;
  static constexpr u32 mmas = BlockK / Shape::k;  // instructions per block and tile
  static constexpr u32 weight_pieces = a_map::pieces(mmas);  // per lane and block
  static constexpr u32 act_pieces = b_map::pieces(mmas);     // per lane, block and tile
  static constexpr u32 amax_masks = b_map::groups == 1 ? 0 : b_map::groups == 2 ? 1 : b_map::groups == 4 ? 2 : 3;

  NETRA_HOST_DEVICE static constexpr bool d_column_matches_b_column() {
    for (u32 l = 0; l < wave; ++l)
      for (u32 i = 0; i < Shape::d_items; ++i)
        if (Shape::d_element(l, i).col != b_map::element(l, 0).index) return false;
    return true;
  }
  /// True when every D item's column is the lane's own B column (no shuffle for column data).
  static constexpr bool d_column_is_b_column = d_column_matches_b_column();

  NETRA_HOST_DEVICE static constexpr u32 amax_mask(u32 i) { return b_map::group_stride << i; }
  NETRA_HOST_DEVICE static constexpr piece weight_piece(u32 lane, u32 v) { return a_map::piece_of(lane, v); }
  NETRA_HOST_DEVICE static constexpr piece act_piece(u32 lane, u32 tile, u32 v) {
    const piece p = b_map::piece_of(lane, v);
    return {tile * tile_columns + p.index, p.k};
  }
  NETRA_HOST_DEVICE static constexpr word_source a_word(u32 q, u32 i) { return a_map::word_of(q, i); }
  NETRA_HOST_DEVICE static constexpr word_source b_word(u32 q, u32 i) { return b_map::word_of(q, i); }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 tile, u32 item) {
    const fragment_element e = Shape::d_element(lane, item);
    return {e.row, tile * tile_columns + e.col};
  }
  NETRA_HOST_DEVICE static constexpr u32 b_lane_of(u32 column) { return b_map::lane_of(column, 0); }

  static_assert(BlockK % Shape::k == 0 && Columns % Shape::n == 0, "netra::fragment::block_tile: whole instructions along K and the columns");
  static_assert(weight_pieces * 16 * wave == a_map::replicas * rows * BlockK * Shape::input_bits / 8,
                "netra::fragment::block_tile: A pieces cover the block once per replica");
  static_assert(act_pieces * 16 * wave == b_map::replicas * tile_columns * BlockK * Shape::input_bits / 8,
                "netra::fragment::block_tile: B pieces cover the block once per replica");
  static_assert(mmas * Shape::a_words == weight_pieces * 4 && mmas * Shape::b_words == act_pieces * 4,
                "netra::fragment::block_tile: every piece word feeds one register word");
};

}  // namespace netra::fragment
