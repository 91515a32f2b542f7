// netra/dsl/arch/gfx1151/wmma_fragment.hpp — fragment_mma<wmma_f32_16x16x16_bf16_w32> on the raw
// wrapper of dsl/arch/gfx1151/wmma.hpp: 8 words of A and of B per lane (16 BF16 values, low half
// first), 8 floats of C/D.
#pragma once
#include "netra/dsl/arch/gfx1151/wmma.hpp"
#include "netra/dsl/matrix_fragment_targets.hpp"

#if defined(NETRA_HAS_GFX1151_WMMA)
namespace netra {
template <> struct fragment_mma<wmma_f32_16x16x16_bf16_w32> {
  using s = wmma_f32_16x16x16_bf16_w32;
  static NETRA_DEVICE gfx1151_isa::v16i16 halves(const u32 (&w)[8]) {
    gfx1151_isa::v16i16 v;
    NETRA_UNROLL
    for (u32 i = 0; i < 16; ++i) v[i] = static_cast<short>(w[i / 2] >> (16 * (i % 2)));
    return v;
  }
  static NETRA_DEVICE void run(float (&d)[s::d_items], const u32 (&a)[s::a_words], const u32 (&b)[s::b_words],
                               const float (&c)[s::d_items]) {
    const gfx1151_isa::v8f32 vc = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]};
    const gfx1151_isa::v8f32 vd = gfx1151_isa::v_wmma_f32_16x16x16_bf16(halves(a), halves(b), vc);
    NETRA_UNROLL
    for (u32 i = 0; i < 8; ++i) {
      const float x = vd[i];  // an element copy (clang: bit_cast of a vector element reads element 0)
      d[i] = x;
    }
  }
};
}  // namespace netra
#endif
