// netra/dsl/arch/gfx1151/ops.hpp — target_ops<gfx1151> (Ryzen AI Max+, RDNA 3.5, wave32): the
// common AMD operations at wave32 (ds_bpermute addresses lane (address / 4) mod 32), except the
// xor shuffle, which is a VALU instruction for every mask a butterfly uses (row_xmask DPP for
// 1..8, v_permlanex16 for 16: gfx1151/cross_lane.hpp; the masks are constants once the butterfly
// is unrolled, so the switch folds away); BF16 and OCP E4M3 packing in software (RDNA 3.5 has
// neither conversion instruction).
#pragma once
#include "netra/dsl/arch/amdgcn/ops.hpp"
#include "netra/dsl/arch/gfx1151/cross_lane.hpp"
#include "netra/dsl/arch/software_convert.hpp"

namespace netra {
template <> struct target_ops<gfx1151> : amdgcn_ops<gfx1151>, software_convert_ops {
  /// Lane i receives `value` of lane i ^ lane_mask (lane_mask < 32).
  static NETRA_DEVICE u32 xor_shuffle(u32 value, u32 lane_mask) {
    switch (lane_mask) {
      case 1: return gfx1151_isa::dpp_row_xmask<1>(value);
      case 2: return gfx1151_isa::dpp_row_xmask<2>(value);
      case 4: return gfx1151_isa::dpp_row_xmask<4>(value);
      case 8: return gfx1151_isa::dpp_row_xmask<8>(value);
      case 16: return gfx1151_isa::v_permlanex16_b32_swap_rows(value);
      default: return amdgcn_ops<gfx1151>::xor_shuffle(value, lane_mask);
    }
  }
};
}  // namespace netra
