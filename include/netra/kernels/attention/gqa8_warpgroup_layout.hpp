// netra/kernels/attention/gqa8_warpgroup_layout.hpp — where contracts::attention_gqa8's
// WarpgroupMma stage one (gqa8_stage_one_warpgroup.hpp) puts its matrix operands in LDS: the
// warpgroup matrix unit's no-swizzle core matrices (8 rows x 16 bytes, 128 contiguous bytes; a
// descriptor names the distance between core matrices adjacent in K and in M / N).
//   Q (A of Q K^T, 64 rows a warpgroup) and a K block (B of Q K^T, 64 positions): K-major, k-step
//     4c + s of the pair plan (gqa8_wave_plan.hpp) holds head-dim elements 64c + 16t + 4s + 2h + e
//     (t < 4, h, e < 2) at core column 2 (4c + s) + h, pair slot t; core columns 128 bytes apart,
//     8-row groups 4096 bytes apart. k-step k's descriptor starts 256 k bytes in.
//   A V block (B of P V: K = 64 positions, N = 256 elements): position p of element d at core
//     column p / 8 (128 bytes apart), element group d / 8 (1040 bytes apart: one 16-byte bank group
//     past 1024, so eight consecutive groups' rows land in distinct banks); k-step kk (positions
//     16 kk .. 16 kk + 15, in order) starts 256 kk bytes in.
// tests/kernels/test_attention_gqa8_warpgroup_layout.cpp composes these with a host model of the
// descriptor reads and gets S = Q K^T and O = P V with the pair plan's k-steps.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::kernels::gqa8_warpgroup_layout {
inline constexpr u32 core_bytes = 128, k_major_group_bytes = 4096, v_group_bytes = 1040;
inline constexpr u32 v_operand_bytes = (256 / 8) * v_group_bytes;

/// Byte offset of pair t (elements 64c + 16t + 4s + 2h, + 1) of k-step 4c + s in row r of Q / K.
NETRA_HOST_DEVICE constexpr u32 k_major_offset(u32 r, u32 step, u32 h, u32 t) {
  return (r / 8) * k_major_group_bytes + (2 * step + h) * core_bytes + (r % 8) * 16 + 4 * t;
}
/// Byte offset of head-dim element d of row r of Q / K.
NETRA_HOST_DEVICE constexpr u32 k_major_element_offset(u32 r, u32 d) {
  return k_major_offset(r, 4 * (d / 64) + (d % 16) / 4, (d % 4) / 2, (d % 64) / 16) + 2 * (d % 2);
}
/// Byte offset of position p of element d in a V block.
NETRA_HOST_DEVICE constexpr u32 v_offset(u32 d, u32 p) { return (d / 8) * v_group_bytes + (p / 8) * core_bytes + (d % 8) * 16 + (p % 8) * 2; }
}  // namespace netra::kernels::gqa8_warpgroup_layout
