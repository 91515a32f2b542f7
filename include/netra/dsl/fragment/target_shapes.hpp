// netra/dsl/fragment/target_shapes.hpp — which matrix instruction a target's kernels use for each
// operand type: the one per-target choice of the fragment layer. Kernels name
// `matrix_instructions<Target>::e4m3` / `::bf16` (and build block tiles and piece maps on it), so
// that no kernel names a target; `::fp8` is the instruction of the target's own FP8 format
// (native_fp8_t: E4M3FN on gfx950 / sm90a, where it is `::e4m3`; E4M3FNUZ on gfx942).
//   gfx950 (wave64): v_mfma_f32_16x16x128_f8f6f4 (E4M3 x E4M3), v_mfma_f32_16x16x32_bf16;
//   sm90a  (warp32): mma.sync m16n8k32 e4m3, mma.sync m16n8k16 bf16;
//   gfx942 (wave64): v_mfma_f32_16x16x32_fp8_fp8 (E4M3FNUZ: fp8, no OCP E4M3 shape),
//                    v_mfma_f32_16x16x16_bf16;
//   gfx1151 (wave32): v_wmma_f32_16x16x16_bf16 (bf16 only: no FP8 matrix instruction).
#pragma once
#include "netra/dsl/matrix_fragment.hpp"
#include "netra/dsl/matrix_fragment_bf16.hpp"
#include "netra/dsl/matrix_fragment_targets.hpp"

namespace netra::fragment {

template <class Target> struct matrix_instructions {
  static_assert(dependent_false_v<Target>, "netra::fragment::matrix_instructions: no matrix instructions for this target (gfx950, sm90a, gfx942, gfx1151)");
};
template <> struct matrix_instructions<gfx950> {
  using e4m3 = mfma_f32_16x16x128_e4m3;
  using fp8 = e4m3;
  using bf16 = mfma_f32_16x16x32_bf16;
};
template <> struct matrix_instructions<sm90a> {
  using e4m3 = mma_m16n8k32_e4m3;
  using fp8 = e4m3;
  using bf16 = mma_m16n8k16_bf16;
};
template <> struct matrix_instructions<gfx942> {
  using fp8 = mfma_f32_16x16x32_fnuz;
  using bf16 = mfma_f32_16x16x16_bf16;
};
template <> struct matrix_instructions<gfx1151> {
  using bf16 = wmma_f32_16x16x16_bf16_w32;
};

}  // namespace netra::fragment
