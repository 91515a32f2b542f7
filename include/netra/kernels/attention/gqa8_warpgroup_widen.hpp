// netra/kernels/attention/gqa8_warpgroup_widen.hpp — the widening items of the warpgroup stage ones
// (gqa8_stage_one_warpgroup.hpp, D = 256; extend_native_warpgroup.hpp, D = 128): a staged E4M3
// K or V block widened to BF16 into the matrix unit's operand layout (gqa8_warpgroup_layout.hpp).
//   K item (position pos, chunk group c): the position's 16-byte chunks 4c .. 4c + 3 (chunk(t)
//     returns the staged bytes of chunk 4c + t) become k-steps 4c .. 4c + 3 of row pos: eight
//     16-byte stores (elements 64c + 16t + 4s + 2h + e at pair slot t of core column 2 (4c + s) + h).
//   V item (element group dg, position group pg): the 8 bytes of elements 8 dg .. 8 dg + 7 of
//     positions 8 pg .. 8 pg + 7 (half(pos) returns a pointer to them) become one core matrix:
//     bytes regrouped into position pairs per element, widened, eight 16-byte stores.
#pragma once
#include "netra/dsl/convert_e4m3_bf16.hpp"
#include "netra/kernels/attention/gqa8_warpgroup_layout.hpp"

namespace netra::kernels {

template <class Target, u32 D, class Chunk> NETRA_DEVICE void widen_k_item(u8* wide, u32 pos, u32 c, Chunk chunk) {
  u32x4 x[4];
  NETRA_UNROLL
  for (u32 t = 0; t < 4; ++t) x[t] = chunk(t);
  NETRA_UNROLL
  for (u32 s = 0; s < 4; ++s) {
    bf16x4 b[4];
    NETRA_UNROLL
    for (u32 t = 0; t < 4; ++t) b[t] = e4m3x4_to_bf16x4<Target>(x[t][static_cast<int>(s)]);
    *reinterpret_cast<u32x4*>(wide + gqa8_warpgroup_layout::k_major_offset<D>(pos, 4 * c + s, 0, 0)) = {b[0].lo, b[1].lo, b[2].lo, b[3].lo};
    *reinterpret_cast<u32x4*>(wide + gqa8_warpgroup_layout::k_major_offset<D>(pos, 4 * c + s, 1, 0)) = {b[0].hi, b[1].hi, b[2].hi, b[3].hi};
  }
}

template <class Target, class Half> NETRA_DEVICE void widen_v_item(u8* wide, u32 dg, u32 pg, Half half) {
  u32 x[8][2];
  NETRA_UNROLL
  for (u32 k = 0; k < 8; ++k) {
    const u32* src = half(8 * pg + k);
    x[k][0] = src[0], x[k][1] = src[1];
  }
  u32 rows[8][4];  // rows[e][u]: element 8 dg + e, positions 8 pg + 2u, + 1
  NETRA_UNROLL
  for (u32 e = 0; e < 8; e += 2)
    NETRA_UNROLL
    for (u32 u = 0; u < 4; ++u) {
      const u32 a = x[2 * u][e / 4], b = x[2 * u + 1][e / 4], sh = 8 * (e % 4);
      const u32 bytes = ((a >> sh) & 0xFFu) | ((b >> sh) & 0xFFu) << 8 | ((a >> (sh + 8)) & 0xFFu) << 16 | ((b >> (sh + 8)) & 0xFFu) << 24;
      const bf16x4 w = e4m3x4_to_bf16x4<Target>(bytes);
      rows[e][u] = w.lo, rows[e + 1][u] = w.hi;
    }
  NETRA_UNROLL
  for (u32 e = 0; e < 8; ++e)
    *reinterpret_cast<u32x4*>(wide + gqa8_warpgroup_layout::v_offset(8 * dg + e, 8 * pg)) = {rows[e][0], rows[e][1], rows[e][2], rows[e][3]};
}

}  // namespace netra::kernels
