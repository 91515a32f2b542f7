// netra/dsl/arch/gfx942/mfma_fragment.hpp — fragment_mma<mfma_f32_16x16x32_fnuz> and
// fragment_mma<mfma_f32_16x16x16_bf16> on the raw wrappers of dsl/arch/gfx942/mfma.hpp.
#pragma once
#include "netra/dsl/arch/gfx942/mfma.hpp"
#include "netra/dsl/matrix_fragment_targets.hpp"

#if defined(NETRA_HAS_GFX942_MFMA)
namespace netra {
template <> struct fragment_mma<mfma_f32_16x16x32_fnuz> {
  using s = mfma_f32_16x16x32_fnuz;
  static NETRA_DEVICE void run(float (&d)[s::d_items], const u32 (&a)[s::a_words], const u32 (&b)[s::b_words],
                               const float (&c)[s::d_items]) {
    const gfx942_isa::v2i32 va = {static_cast<int>(a[0]), static_cast<int>(a[1])}, vb = {static_cast<int>(b[0]), static_cast<int>(b[1])};
    const gfx942_isa::v4f32 vd = gfx942_isa::v_mfma_f32_16x16x32_fp8_fp8(va, vb, gfx942_isa::v4f32{c[0], c[1], c[2], c[3]});
    const float d0 = vd.x, d1 = vd.y, d2 = vd.z, d3 = vd.w;  // element copies (clang: bit_cast of a vector element reads element 0)
    d[0] = d0, d[1] = d1, d[2] = d2, d[3] = d3;
  }
};
template <> struct fragment_mma<mfma_f32_16x16x16_bf16> {
  using s = mfma_f32_16x16x16_bf16;
  static NETRA_DEVICE void run(float (&d)[s::d_items], const u32 (&a)[s::a_words], const u32 (&b)[s::b_words],
                               const float (&c)[s::d_items]) {
    const gfx942_isa::v2i32 va = {static_cast<int>(a[0]), static_cast<int>(a[1])}, vb = {static_cast<int>(b[0]), static_cast<int>(b[1])};
    const gfx942_isa::v4f32 vd = gfx942_isa::v_mfma_f32_16x16x16_bf16(va, vb, gfx942_isa::v4f32{c[0], c[1], c[2], c[3]});
    const float d0 = vd.x, d1 = vd.y, d2 = vd.z, d3 = vd.w;  // element copies
    d[0] = d0, d[1] = d1, d[2] = d2, d[3] = d3;
  }
};
}  // namespace netra
#endif
