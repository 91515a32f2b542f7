// gfx942 device compile check (tests/targets.cmake): the FNUZ packing, the FNUZ widening and the
// FP8 and BF16 MFMA fragments compile for gfx942 and emit their instructions (v_med3_f32 clamp,
// v_cvt_pk_fp8_f32, v_cvt_pk_f32_fp8, v_mfma_f32_16x16x32_fp8_fp8, v_mfma_f32_16x16x16_bf16); OCP
// E4M3 packing stays in software (no v_cvt_pk_fp8_f32 for it).
#include "netra/dsl/convert_fp8_bf16.hpp"
#include "netra/dsl/fp8_pack.hpp"
#include "netra/dsl/matrix_fragment_targets.hpp"

extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(64, 64)))
netra_check_fnuz_pack(const float* in, netra::u32* out) {
  const netra::u32 l = netra::target_ops<netra::gfx942>::lane_id();
  out[l] = netra::pack_fp8x2<netra::fp8::e4m3fnuz, netra::gfx942>(in[2 * l], in[2 * l + 1]);
}

extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(64, 64)))
netra_check_fnuz_mfma(const netra::u32* ab, float* out) {
  using s = netra::mfma_f32_16x16x32_fnuz;
  const netra::u32 l = netra::target_ops<netra::gfx942>::lane_id();
  const netra::u32 a[2] = {ab[4 * l], ab[4 * l + 1]}, b[2] = {ab[4 * l + 2], ab[4 * l + 3]};
  const float c[4] = {0, 0, 0, 0};
  float d[s::d_items];
  netra::mma<s>(d, a, b, c);
  for (netra::u32 i = 0; i < s::d_items; ++i) out[4 * l + i] = d[i];
}

extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(64, 64)))
netra_check_fnuz_widen_bf16_mfma(const netra::u32* ab, float* out) {
  using s = netra::mfma_f32_16x16x16_bf16;
  const netra::u32 l = netra::target_ops<netra::gfx942>::lane_id();
  const netra::bf16x4 k = netra::fp8x4_to_bf16x4<netra::gfx942>(ab[2 * l]);
  const netra::u32 a[2] = {k.lo, k.hi}, b[2] = {ab[2 * l + 1], ab[2 * l + 129]};
  const float c[4] = {0, 0, 0, 0};
  float d[s::d_items];
  netra::mma<s>(d, a, b, c);
  for (netra::u32 i = 0; i < s::d_items; ++i) out[4 * l + i] = d[i];
}
