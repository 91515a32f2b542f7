// netra/dsl/fragment/block_scaled.hpp — block-scaled accumulation over a block tile
// (dsl/fragment/block_tile.hpp): for each K block b, in order, the lane's A pieces of the block
// (gather), d = A_b * B_b from +0 (multiply), and d combined with the block's row scale s_A and
// its column scale s_B (that of the D item's column, fetched from the lane whose B column it is
// when the shape puts D columns elsewhere) by the contract's policy:
//   scale_policy::fma_chain:       acc = fma(d, s_A * s_B, acc), acc from the caller (+0);
//   scale_policy::sum_of_products: q_b = d * (s_B * s_A); acc = q_0, then acc + q_b.
// Every lane of the wave calls it (the column scales travel by shuffle).
#pragma once
#include "netra/dsl/arch/target_ops.hpp"
#include "netra/dsl/fragment/block_tile.hpp"
#include "netra/dsl/fragment/register_tile.hpp"
#include "netra/dsl/math.hpp"

namespace netra::fragment {

enum class scale_policy : u8 { fma_chain, sum_of_products };

/// The value `own` of the lane whose B column is the column of D item `item` of tile `tile`
/// (the lane's own where the shape's D columns are its B columns). Every lane must call it.
template <class Tile, class Target> NETRA_DEVICE u32 from_column_lane(u32 own, u32 lane, u32 tile, u32 item) {
  if constexpr (Tile::d_column_is_b_column) {
    return own;
  } else {
    const u32 column = Tile::d_element(lane, tile, item).col - tile * Tile::tile_columns;
    return target_ops<Target>::broadcast(own, Tile::b_lane_of(column));
  }
}
template <class Tile, class Target> NETRA_DEVICE float column_scale(float own, u32 lane, u32 tile, u32 item) {
  return bit_cast<float>(from_column_lane<Tile, Target>(bit_cast<u32>(own), lane, tile, item));
}

/// acc over `Blocks` blocks of tile `tile`: gather(b, a) fills the lane's A pieces of block b
/// (u32x4 a[Tile::weight_pieces]), act[b] are its B pieces, row_scale(b) s_A, col_scale_own[b]
/// the lane's own B column's s_B.
template <class Tile, class Target, scale_policy Policy, u32 Blocks, class Gather, class Acts, class RowScale>
NETRA_DEVICE void block_scaled_accumulate(float (&acc)[Tile::shape::d_items], u32 lane, u32 tile, Gather gather, const Acts (&act)[Blocks],
                                          RowScale row_scale, const float (&col_scale_own)[Blocks]) {
  using S = typename Tile::shape;
  NETRA_UNROLL
  for (u32 b = 0; b < Blocks; ++b) {
    u32x4 a[Tile::weight_pieces];
    gather(b, a);
    const float sa = row_scale(b);
    float d[S::d_items];
    NETRA_UNROLL
    for (u32 i = 0; i < S::d_items; ++i) d[i] = 0.0f;
    multiply<S, Tile::mmas>(d, a, act[b]);
    NETRA_UNROLL
    for (u32 i = 0; i < S::d_items; ++i) {
      const float sb = column_scale<Tile, Target>(col_scale_own[b], lane, tile, i);
      if constexpr (Policy == scale_policy::fma_chain) {
        acc[i] = fma_rn(d[i], mul_rn(sa, sb), acc[i]);
      } else {
        const float q = mul_rn(d[i], mul_rn(sb, sa));
        acc[i] = b == 0 ? q : add_rn(acc[i], q);
      }
    }
  }
}

}  // namespace netra::fragment
