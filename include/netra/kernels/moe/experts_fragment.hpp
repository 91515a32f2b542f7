// netra/kernels/moe/experts_fragment.hpp — the decode expert kernels' block tile: 16 weight rows x
// one 128-K scale block x the 16 route columns of a chunk, on the target's E4M3 instruction
// (dsl/fragment/target_shapes.hpp); its lane maps are the fragment layer's piece maps
// (dsl/fragment/block_tile.hpp), which derive what is spelled out below for the two targets.
//
// Block tile. D(16 rows x C columns) = W(16 x 128) * X(128 x C) for one scale block, where W rows
// are weight rows (output features) and X columns are routes (activations of one token each).
// Every lane loads 16-byte pieces of contiguous K ("pieces"), and A/B register words are taken
// whole from those pieces. A and B get the same K permutation, so the dot product over the block
// is unchanged (tests/dsl/test_fragment_pieces.cpp and tests/kernels/test_moe_experts_model.cpp
// compose these maps with the instruction models).
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
#include "netra/dsl/fragment/block_tile.hpp"
#include "netra/dsl/fragment/target_shapes.hpp"

namespace netra::kernels::moe_experts {

using fragment::piece;
using fragment::word_source;

/// The block tile of a target: one 128-K scale block, 16 columns (expert_weights::block), on the
/// target's FP8 instruction (gfx942: four v_mfma_f32_16x16x32_fp8_fp8, E4M3FNUZ).
template <class Target>
using block_fragment = fragment::block_tile<typename fragment::matrix_instructions<Target>::fp8, moe::expert_weights::block, 16>;

inline constexpr u32 no_route = 0xFFFFFFFFu;

}  // namespace netra::kernels::moe_experts
