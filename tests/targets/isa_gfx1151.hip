// gfx1151 device compile check (tests/targets.cmake): the WMMA fragment and the wave32 xor
// shuffle compile for gfx1151 and emit v_wmma_f32_16x16x16_bf16, row_xmask DPP and
// v_permlanex16_b32 (no LDS crossbar for a butterfly).
#include "netra/dsl/matrix_fragment_targets.hpp"
#include "netra/dsl/wave_reduce.hpp"

extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(32, 32)))
netra_check_wmma(const netra::u32* ab, float* out) {
  using s = netra::wmma_f32_16x16x16_bf16_w32;
  const netra::u32 l = netra::target_ops<netra::gfx1151>::lane_id();
  netra::u32 a[8], b[8];
  for (netra::u32 i = 0; i < 8; ++i) a[i] = ab[16 * l + i], b[i] = ab[16 * l + 8 + i];
  const float c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float d[s::d_items];
  netra::mma<s>(d, a, b, c);
  for (netra::u32 i = 0; i < s::d_items; ++i) out[8 * l + i] = d[i];
}

extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(32, 32)))
netra_check_wave32_sum(const float* in, float* out) {
  const netra::u32 l = netra::target_ops<netra::gfx1151>::lane_id();
  out[l] = netra::wave_sum_f32<netra::gfx1151>(in[l]);
}
