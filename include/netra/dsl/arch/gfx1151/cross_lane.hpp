// netra/dsl/arch/gfx1151/cross_lane.hpp — the RDNA 3 cross-lane instructions a wave32 has and gfx9
// does not, one wrapper per instruction, immediates range-checked at compile time:
//   DPP row_xmask (gfx10+; replaces gfx9's row_bcast): inside each row of 16 lanes, lane i reads
//   lane i ^ mask; v_permlanex16_b32: lane i reads lane (i + 16) mod 32 (the other row) at a
//   selected position, here the identity (so xor 16 of a wave32 is one VALU instruction, no LDS
//   crossbar). The same value for every target-neutral xor: xor 1..8 through row_xmask, 16 through
//   permlanex16 (tests/dsl/test_target_lane_maps.cpp checks the selections against tests/models/wmma.hpp).
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::gfx1151_isa {
/// v_permlanex16_b32's lane selects (4 bits per lane of a row, lanes 0..7 in lo, 8..15 in hi)
/// that make each lane read the same position in the other row.
inline constexpr u32 permlanex16_same_position_lo = 0x76543210u, permlanex16_same_position_hi = 0xFEDCBA98u;
}  // namespace netra::gfx1151_isa

#if defined(NETRA_COMPILER_HIP)
namespace netra::gfx1151_isa {
/// v_mov_b32_dpp row_xmask:Mask (DPP control 0x160 + Mask): lane i receives lane (i & ~15) | ((i & 15) ^ Mask).
template <u32 Mask> NETRA_DEVICE u32 dpp_row_xmask(u32 value) {
  static_assert(Mask >= 1 && Mask <= 15, "netra::gfx1151_isa::dpp_row_xmask: the mask is a 4-bit lane xor inside a row of 16 (1..15)");
  return static_cast<u32>(__builtin_amdgcn_update_dpp(0, static_cast<int>(value), 0x160 + Mask, 0xF, 0xF, false));
}
/// v_permlanex16_b32 with the identity selects: lane i receives lane i ^ 16 (the other row of 16).
NETRA_DEVICE u32 v_permlanex16_b32_swap_rows(u32 value) {
  return static_cast<u32>(__builtin_amdgcn_permlanex16(static_cast<int>(value), static_cast<int>(value), static_cast<int>(permlanex16_same_position_lo),
                                                       static_cast<int>(permlanex16_same_position_hi), false, false));
}
}  // namespace netra::gfx1151_isa
#endif
