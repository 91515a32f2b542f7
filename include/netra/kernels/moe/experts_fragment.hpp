// netra/kernels/moe/experts_fragment.hpp — what the decode expert kernels share: the per-target
// lane maps of one "block tile" (16 weight rows x one 128-K scale block x the columns of a chunk),
// and the scan of the route metadata that finds an expert's columns.
//
// Block tile. D(16 rows x C columns) = W(16 x 128) * X(128 x C) for one scale block, where W rows
// are weight rows (output features) and X columns are routes (activations of one token each).
// The kernel chooses which memory K goes to which register byte: every lane loads 16-byte
// pieces of contiguous K ("pieces"), and A/B register words are taken whole from those pieces.
// A and B get the same K permutation, so the dot product over the block is unchanged
// (tests/kernels/test_moe_experts_model.cpp composes these maps with the instruction models).
//
// gfx950 (wave64, one v_mfma_f32_16x16x128_f8f6f4 per block and 16 columns):
//   weight piece v (v = 0, 1) of lane l: row l % 16, k = 16 * (l / 16) + 64 * v
//   act piece v of lane l:               column l % 16, the same k
//   A word i = word i % 4 of weight piece i / 4; B word i = word i % 4 of act piece i / 4
//   (so byte b of a lane holds k = 16 * (l / 16) + 64 * (b / 16) + b % 16 in both operands)
//   D item i of lane l: row 4 * (l / 16) + i, column l % 16 (the lane's own B column).
//   A column's block is spread over lanes c, c + 16, c + 32, c + 48: amax joins them with xor 16, 32.
// sm90a (warp32, g = l >> 2, t = l & 3; four mma.m16n8k32 per block and n8 tile, two tiles):
//   weight piece v (v = 0..3) of lane l: row g + 8 * (v & 1), k = 64 * (v >> 1) + 16t
//   act piece v (v = 0, 1) of lane l, tile n: column 8n + g, k = 64v + 16t
//   mma q = 2c + j (c = 0, 1; j = 0, 1): a = {piece 2c word 2j, piece 2c+1 word 2j,
//   piece 2c word 2j+1, piece 2c+1 word 2j+1}, b = {act piece c word 2j, act piece c word 2j+1}
//   (mma q covers k = 64c + 16t + 8j + 0..7 of every lane: its A and B bytes agree in K)
//   D item i of lane l, tile n: row g + 8 * (i >> 1), column 8n + 2t + (i & 1); the scale of that
//   column lives in lane 4 * (2t + (i & 1)), the lane whose B column it is.
//   A column's block is spread over lanes 4g .. 4g + 3: amax joins them with xor 1, 2.
#pragma once
#include "netra/contracts/moe/expert_weights.hpp"
#include "netra/dsl/matrix_fragment.hpp"

namespace netra::kernels::moe_experts {

/// A 16-byte piece: 16 contiguous K (bytes of E4M3, or values for activations) of one row
/// (weights) or one column (activations).
struct piece {
  u32 index;  // weight row in the tile, or activation column in the chunk
  u32 k;      // first K of the piece inside the 128-K block
};
/// Where a register word comes from: word `word` (0..3, 4 bytes of K each) of piece `piece`.
struct word_source {
  u32 piece;
  u32 word;
};

template <class Target> struct block_fragment {
  static_assert(is_built_target_v<Target>, "netra::kernels::moe_experts::block_fragment: no lane map for this target");
};

template <> struct block_fragment<gfx950> {
  using shape = mfma_f32_16x16x128_e4m3;
  static constexpr u32 wave = 64;
  static constexpr u32 rows = 16;
  static constexpr u32 tile_columns = 16;
  static constexpr u32 tiles = 1;
  static constexpr u32 chunk_columns = tile_columns * tiles;
  static constexpr u32 weight_pieces = 2;  // per lane per block
  static constexpr u32 act_pieces = 2;     // per lane per block per tile
  static constexpr u32 mmas = 1;           // per block per tile
  static constexpr u32 amax_masks = 2;
  static constexpr bool d_column_is_b_column = true;
  NETRA_HOST_DEVICE static constexpr u32 amax_mask(u32 i) { return 16u << i; }
  NETRA_HOST_DEVICE static constexpr piece weight_piece(u32 lane, u32 v) { return {lane % 16, 16 * (lane / 16) + 64 * v}; }
  NETRA_HOST_DEVICE static constexpr piece act_piece(u32 lane, u32 tile, u32 v) {
    return {tile * tile_columns + lane % 16, 16 * (lane / 16) + 64 * v};
  }
  NETRA_HOST_DEVICE static constexpr word_source a_word(u32, u32 i) { return {i / 4, i % 4}; }
  NETRA_HOST_DEVICE static constexpr word_source b_word(u32, u32 i) { return {i / 4, i % 4}; }
  /// (row, column in the chunk) of D item i of lane l in tile n.
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 tile, u32 item) {
    const fragment_element e = shape::d_element(lane, item);
    return {e.row, tile * tile_columns + e.col};
  }
  /// The lane whose B column is column `column` of a tile (any of them; the lowest).
  NETRA_HOST_DEVICE static constexpr u32 b_lane_of(u32 column) { return column; }
};

template <> struct block_fragment<sm90a> {
  using shape = mma_m16n8k32_e4m3;
  static constexpr u32 wave = 32;
  static constexpr u32 rows = 16;
  static constexpr u32 tile_columns = 8;
  static constexpr u32 tiles = 2;
  static constexpr u32 chunk_columns = tile_columns * tiles;
  static constexpr u32 weight_pieces = 4;
  static constexpr u32 act_pieces = 2;
  static constexpr u32 mmas = 4;
  static constexpr u32 amax_masks = 2;
  static constexpr bool d_column_is_b_column = false;
  NETRA_HOST_DEVICE static constexpr u32 amax_mask(u32 i) { return 1u << i; }
  NETRA_HOST_DEVICE static constexpr piece weight_piece(u32 lane, u32 v) { return {(lane >> 2) + 8 * (v & 1), 64 * (v >> 1) + 16 * (lane & 3)}; }
  NETRA_HOST_DEVICE static constexpr piece act_piece(u32 lane, u32 tile, u32 v) {
    return {tile * tile_columns + (lane >> 2), 64 * v + 16 * (lane & 3)};
  }
  NETRA_HOST_DEVICE static constexpr word_source a_word(u32 q, u32 i) {
    return {2 * (q >> 1) + (i & 1), 2 * (q & 1) + (i >> 1)};
  }
  NETRA_HOST_DEVICE static constexpr word_source b_word(u32 q, u32 i) { return {q >> 1, 2 * (q & 1) + i}; }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 tile, u32 item) {
    const fragment_element e = shape::d_element(lane, item);
    return {e.row, tile * tile_columns + e.col};
  }
  NETRA_HOST_DEVICE static constexpr u32 b_lane_of(u32 column) { return 4 * column; }
};

/// Invariants every lane map must satisfy (checked at compile time for both targets).
template <class F> constexpr bool block_fragment_is_consistent() {
  using s = typename F::shape;
  static_assert(F::wave == s::wave_size, "block_fragment: wave size differs from the instruction's");
  static_assert(F::rows == s::m && F::tile_columns == s::n, "block_fragment: tile is one instruction wide and high");
  static_assert(F::weight_pieces * 16 * F::wave == F::rows * 128, "block_fragment: weight pieces cover the 16 x 128 block once");
  static_assert(F::act_pieces * 16 * F::wave == F::tile_columns * 128, "block_fragment: act pieces cover the 128 x C block once");
  static_assert(F::mmas * s::k == 128, "block_fragment: the instructions of a block cover its 128 K");
  static_assert(F::mmas * s::a_words * F::wave == F::weight_pieces * 4 * F::wave, "block_fragment: every weight word feeds one A word");
  return true;
}
static_assert(block_fragment_is_consistent<block_fragment<gfx950>>());
static_assert(block_fragment_is_consistent<block_fragment<sm90a>>());

inline constexpr u32 no_route = 0xFFFFFFFFu;

}  // namespace netra::kernels::moe_experts
