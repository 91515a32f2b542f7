// netra/dsl/matrix_fragment_targets.hpp — matrix fragments of gfx942 (CDNA3 MFMA: FP8 as
// E4M3FNUZ, and BF16) and gfx1151 (RDNA 3.5 WMMA, wave32), in the conventions of dsl/matrix_fragment.hpp
// (a_element / b_element / d_element maps; fragment_mma<Shape> next to each target's raw
// wrappers). Tags as in docs/target-notes.md; tests/models/target_matrix.hpp models each
// instruction from the ISA documents and tests/dsl/test_target_lane_maps.cpp checks that maps,
// models and a plain matmul agree.
#pragma once
#include "netra/dsl/fp8_format.hpp"
#include "netra/dsl/matrix_fragment.hpp"

namespace netra {

/// v_mfma_f32_16x16x32_fp8_fp8 on gfx942 (wave64): the same operand distribution as the
/// instruction of that name on gfx950 (mfma_f32_16x16x32_fp8_fp8: A row l % 16, byte b at
/// K 8 (l / 16) + b; B column l % 16, same K; D item i at (4 (l / 16) + i, l % 16)) [S: CDNA3 ISA
/// §7, the 16x16 layouts], but the bytes are E4M3FNUZ: the same byte is half the value of E4M3FN
/// (dsl/fp8_format.hpp), so operands written for gfx950 must not be reused here.
struct mfma_f32_16x16x32_fnuz : mfma_f32_16x16x32_fp8_fp8 {
  using target = gfx942;
  using fp8_format = fp8::e4m3fnuz;
  static constexpr const char* instruction = "v_mfma_f32_16x16x32_fp8_fp8 (gfx942: E4M3FNUZ)";
};

/// v_mfma_f32_16x16x16_bf16 on gfx942 (wave64; the gfx90a "_1k" form, renamed on CDNA3): D(16x16)
/// = A(16x16) * B(16x16) + C, BF16 operands, FP32 accumulation; gfx942's widest BF16 MFMA (it has
/// no 16x16x32 BF16 form: that is gfx950's).
///   A: lane l holds row l % 16 and the 4 K values 4 (l / 16) + v (v = 0..3, value v in bits
///      16 (v % 2) of word v / 2) [S: CDNA3 ISA §7.1, the 16x16 MFMA layouts; AMD matrix
///      instruction calculator, cdna3 v_mfma_f32_16x16x16_bf16].
///   B: lane l holds column l % 16, the same K values.
///   D: item i of lane l is D[4 (l / 16) + i][l % 16] (as for every 16x16 MFMA).
struct mfma_f32_16x16x16_bf16 : fragment_shape<16, 16, 16, 64, 16> {
  using target = gfx942;
  static constexpr const char* instruction = "v_mfma_f32_16x16x16_bf16 (gfx942)";
  static constexpr u32 a_values = a_bytes / 2, b_values = b_bytes / 2;
  NETRA_HOST_DEVICE static constexpr fragment_element a_element(u32 lane, u32 value) { return {lane % 16, 4 * (lane / 16) + value}; }
  NETRA_HOST_DEVICE static constexpr fragment_element b_element(u32 lane, u32 value) { return {4 * (lane / 16) + value, lane % 16}; }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 item) { return {4 * (lane / 16) + item, lane % 16}; }
};

/// v_wmma_f32_16x16x16_bf16 on gfx1151 (wave32): D(16x16) = A(16x16) * B(16x16) + C.
///   A: lane l holds row l % 16, all 16 K values: value v (bits 16 (v % 2) of word v / 2) is
///      K = v; lanes 16..31 must hold the same values as lanes 0..15 [S: RDNA3 ISA §7.9, AMD
///      GPUOpen "How to accelerate AI applications on RDNA 3 using WMMA"].
///   B: lane l holds column l % 16, value v at K = v, likewise repeated.
///   D: item i of lane l is D[2i + l / 16][l % 16] (rows interleaved between the two halves)
///      [S: RDNA3 ISA; ROCm/FlyDSL PR #485, checked on a gfx1151].
/// Not a fragment_shape: every element of A and B is held by two lanes (a_values = K, not
/// M K / W), so the maps are onto, two to one, for A and B, and a bijection for D (the piece
/// maps' replicas: dsl/fragment/operand_pieces.hpp).
struct wmma_f32_16x16x16_bf16_w32 {
  using target = gfx1151;
  static constexpr const char* instruction = "v_wmma_f32_16x16x16_bf16 (wave32)";
  static constexpr u32 m = 16, n = 16, k = 16, wave_size = 32, input_bits = 16;
  static constexpr u32 a_values = 16, b_values = 16, a_words = 8, b_words = 8;
  static constexpr u32 d_items = m * n / wave_size;  // 8
  NETRA_HOST_DEVICE static constexpr fragment_element a_element(u32 lane, u32 value) { return {lane % 16, value}; }
  NETRA_HOST_DEVICE static constexpr fragment_element b_element(u32 lane, u32 value) { return {value, lane % 16}; }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 item) { return {2 * item + lane / 16, lane % 16}; }
};

/// The fragment shapes of this file (for the fragment layer's piece maps: dsl/fragment/operand_pieces.hpp).
template <class Shape> inline constexpr bool is_target_fragment_shape_v = same_v<Shape, mfma_f32_16x16x32_fnuz> || same_v<Shape, mfma_f32_16x16x16_bf16> ||
                                                     same_v<Shape, wmma_f32_16x16x16_bf16_w32>;

}  // namespace netra

#if defined(NETRA_COMPILER_HIP)
#include "netra/dsl/arch/gfx942/mfma_fragment.hpp"
#include "netra/dsl/arch/gfx1151/wmma_fragment.hpp"
#endif
