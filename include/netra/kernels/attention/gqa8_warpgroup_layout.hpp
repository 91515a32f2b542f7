// netra/kernels/attention/gqa8_warpgroup_layout.hpp — where the warpgroup stage ones put their matrix
// operands in LDS (contracts::attention_gqa8's WarpgroupMma verify, gqa8_stage_one_warpgroup.hpp,
// head dim D = 256; contracts::attention_gqa4_extend_native's, extend_native_warpgroup.hpp, D = 128):
// the warpgroup matrix unit's no-swizzle core matrices (8 rows x 16 bytes, 128 contiguous bytes; a
// descriptor names the distance between core matrices adjacent in K and in M / N).
//   Q (A of Q K^T, 64 rows a warpgroup) and a K block (B of Q K^T, 64 positions): K-major, k-step
//     4c + s of the per-warp plans (gqa8_wave_plan.hpp's pair plan, extend_plan.hpp's sm90a plan)
//     holds head-dim elements 64c + 16t + 4s + 2h + e (t < 4, h, e < 2) at core column
//     2 (4c + s) + h, pair slot t; core columns 128 bytes apart, 8-row groups 16 D bytes apart.
//     k-step k's descriptor starts 256 k bytes in.
//   A V block (B of P V: K = 64 positions, N = D elements): position p of element d at core
//     column p / 8 (128 bytes apart), element group d / 8 (1040 bytes apart: one 16-byte bank group
//     past 1024, so eight consecutive groups' rows land in distinct banks); k-step kk (positions
//     16 kk .. 16 kk + 15, in order) starts 256 kk bytes in.
// tests/kernels/test_attention_gqa8_warpgroup_layout.cpp composes these with a host model of the
// descriptor reads and gets S = Q K^T and O = P V with the plans' k-steps, at both head dims.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::kernels::gqa8_warpgroup_layout {
inline constexpr u32 core_bytes = 128, v_group_bytes = 1040;
/// Bytes between 8-row groups of a K-major operand of head dim D (its rows' 2 D bytes, 8 of them).
template <u32 D = 256> inline constexpr u32 k_major_group_bytes_of = 16 * D;
inline constexpr u32 k_major_group_bytes = k_major_group_bytes_of<256>;
/// Bytes of a V operand of head dim D (also the 64-position K operand's 16 D x 8: it fits).
template <u32 D = 256> inline constexpr u32 v_operand_bytes_of = (D / 8) * v_group_bytes;
inline constexpr u32 v_operand_bytes = v_operand_bytes_of<256>;

/// Byte offset of pair t (elements 64c + 16t + 4s + 2h, + 1) of k-step 4c + s in row r of Q / K.
template <u32 D = 256> NETRA_HOST_DEVICE constexpr u32 k_major_offset(u32 r, u32 step, u32 h, u32 t) {
  return (r / 8) * k_major_group_bytes_of<D> + (2 * step + h) * core_bytes + (r % 8) * 16 + 4 * t;
}
/// Byte offset of head-dim element d of row r of Q / K.
template <u32 D = 256> NETRA_HOST_DEVICE constexpr u32 k_major_element_offset(u32 r, u32 d) {
  return k_major_offset<D>(r, 4 * (d / 64) + (d % 16) / 4, (d % 4) / 2, (d % 64) / 16) + 2 * (d % 2);
}
/// Byte offset of position p of element d in a V block.
NETRA_HOST_DEVICE constexpr u32 v_offset(u32 d, u32 p) { return (d / 8) * v_group_bytes + (p / 8) * core_bytes + (d % 8) * 16 + (p % 8) * 2; }
}  // namespace netra::kernels::gqa8_warpgroup_layout
