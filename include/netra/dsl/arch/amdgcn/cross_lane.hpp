// netra/dsl/arch/amdgcn/cross_lane.hpp — cross-lane instructions of a gfx9 (CDNA) wave64, one wrapper
// per instruction, named after it. Immediate fields are range-checked at compile time.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::amdgcn_isa {
/// ds_bpermute_b32: lane i receives `value` of lane (byte_address[i] / 4) % 64 (a pull).
/// Goes through the LDS crossbar without allocating LDS; counted by lgkmcnt.
NETRA_DEVICE u32 ds_bpermute_b32(u32 byte_address, u32 value) {
  return static_cast<u32>(__builtin_amdgcn_ds_bpermute(static_cast<int>(byte_address), static_cast<int>(value)));
}

/// ds_swizzle_b32 in bit-mask mode over groups of 32 lanes:
/// source lane = ((lane & and_mask) | or_mask) ^ xor_mask.
template <u32 AndMask, u32 OrMask, u32 XorMask> NETRA_DEVICE u32 ds_swizzle_b32_bitmask(u32 value) {
  static_assert(AndMask < 32 && OrMask < 32 && XorMask < 32, "netra::amdgcn_isa::ds_swizzle_b32: masks are 5-bit fields");
  constexpr int pattern = static_cast<int>((XorMask << 10) | (OrMask << 5) | AndMask);
  return static_cast<u32>(__builtin_amdgcn_ds_swizzle(static_cast<int>(value), pattern));
}

/// v_mov_b32_dpp with a DPP control word (quad_perm 0x00-0xFF, row_shl 0x101-0x10F,
/// row_shr 0x111-0x11F, row_ror 0x121-0x12F, row_mirror 0x140, row_half_mirror 0x141).
template <u32 Ctrl, u32 RowMask = 0xF, u32 BankMask = 0xF, bool BoundCtrl = false>
NETRA_DEVICE u32 update_dpp(u32 old, u32 value) {
  static_assert(Ctrl <= 0xFF || (Ctrl >= 0x101 && Ctrl <= 0x10F) || (Ctrl >= 0x111 && Ctrl <= 0x11F) ||
                    (Ctrl >= 0x121 && Ctrl <= 0x12F) || Ctrl == 0x140 || Ctrl == 0x141,
                "netra::amdgcn_isa::update_dpp: DPP control outside the gfx9 set (quad_perm, row_shl/shr/ror, mirrors)");
  static_assert(RowMask <= 0xF && BankMask <= 0xF, "netra::amdgcn_isa::update_dpp: row/bank masks are 4-bit fields");
  return static_cast<u32>(__builtin_amdgcn_update_dpp(static_cast<int>(old), static_cast<int>(value), Ctrl, RowMask, BankMask, BoundCtrl));
}

/// v_readlane_b32: the value of lane `Lane`, in an SGPR.
template <u32 Lane> NETRA_DEVICE u32 v_readlane_b32(u32 value) {
  static_assert(Lane < 64, "netra::amdgcn_isa::v_readlane_b32: lane outside the wave64");
  return static_cast<u32>(__builtin_amdgcn_readlane(static_cast<int>(value), Lane));
}

/// v_readfirstlane_b32: the value of the first active lane, in an SGPR.
NETRA_DEVICE u32 v_readfirstlane_b32(u32 value) {
  return static_cast<u32>(__builtin_amdgcn_readfirstlane(static_cast<int>(value)));
}
}  // namespace netra::amdgcn_isa
