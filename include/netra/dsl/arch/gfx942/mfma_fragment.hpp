// netra/dsl/arch/gfx942/mfma_fragment.hpp — fragment_mma<mfma_f32_16x16x32_fnuz> and
// fragment_mma<mfma_f32_16x16x16_bf16> on the raw wrappers of dsl/arch/gfx942/mfma.hpp (both take
// two dwords of A and of B per lane and four floats of C).
#pragma once
#include "netra/dsl/arch/gfx942/mfma.hpp"
#include "netra/dsl/matrix_fragment_targets.hpp"

#if defined(NETRA_HAS_GFX942_MFMA)
namespace netra {
namespace gfx942_isa {
template <class S, v4f32 (*Instruction)(v2i32, v2i32, v4f32)> struct mfma_2x2_words {
  static NETRA_DEVICE void run(float (&d)[S::d_items], const u32 (&a)[S::a_words], const u32 (&b)[S::b_words], const float (&c)[S::d_items]) {
    const v2i32 va = {static_cast<int>(a[0]), static_cast<int>(a[1])}, vb = {static_cast<int>(b[0]), static_cast<int>(b[1])};
    const v4f32 vd = Instruction(va, vb, v4f32{c[0], c[1], c[2], c[3]});
    const float d0 = vd.x, d1 = vd.y, d2 = vd.z, d3 = vd.w;  // element copies (clang: bit_cast of a vector element reads element 0)
    d[0] = d0, d[1] = d1, d[2] = d2, d[3] = d3;
  }
};
}  // namespace gfx942_isa
template <> struct fragment_mma<mfma_f32_16x16x32_fnuz> : gfx942_isa::mfma_2x2_words<mfma_f32_16x16x32_fnuz, gfx942_isa::v_mfma_f32_16x16x32_fp8_fp8> {};
template <> struct fragment_mma<mfma_f32_16x16x16_bf16> : gfx942_isa::mfma_2x2_words<mfma_f32_16x16x16_bf16, gfx942_isa::v_mfma_f32_16x16x16_bf16> {};
}  // namespace netra
#endif
