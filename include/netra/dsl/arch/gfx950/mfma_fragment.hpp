// netra/dsl/arch/gfx950/mfma_fragment.hpp — fragment_mma<Shape> for the gfx950 shapes of
// dsl/matrix_fragment.hpp, on the raw wrappers of dsl/arch/gfx950/mfma.hpp (builtins, so the
// compiler inserts the wait states before the result is read).
#pragma once
#include "netra/dsl/arch/gfx950/mfma.hpp"
#include "netra/dsl/matrix_fragment.hpp"

#if defined(NETRA_HAS_GFX950_MFMA)
namespace netra {

template <> struct fragment_mma<mfma_f32_16x16x128_e4m3> {
  using s = mfma_f32_16x16x128_e4m3;
  static NETRA_DEVICE void run(float (&d)[s::d_items], const u32 (&a)[s::a_words], const u32 (&b)[s::b_words],
                               const float (&c)[s::d_items]) {
    const gfx950_isa::v8i32 va = {static_cast<int>(a[0]), static_cast<int>(a[1]), static_cast<int>(a[2]), static_cast<int>(a[3]),
                                  static_cast<int>(a[4]), static_cast<int>(a[5]), static_cast<int>(a[6]), static_cast<int>(a[7])};
    const gfx950_isa::v8i32 vb = {static_cast<int>(b[0]), static_cast<int>(b[1]), static_cast<int>(b[2]), static_cast<int>(b[3]),
                                  static_cast<int>(b[4]), static_cast<int>(b[5]), static_cast<int>(b[6]), static_cast<int>(b[7])};
    const gfx950_isa::v4f32 vc = {c[0], c[1], c[2], c[3]};
    const gfx950_isa::v4f32 vd =
        gfx950_isa::v_mfma_f32_16x16x128_f8f6f4<gfx950_isa::f8f6f4_e4m3, gfx950_isa::f8f6f4_e4m3>(va, vb, vc);
    // Copy elements to scalars one by one (clang: bit_cast of a vector element reads element 0).
    const float d0 = vd.x, d1 = vd.y, d2 = vd.z, d3 = vd.w;
    d[0] = d0, d[1] = d1, d[2] = d2, d[3] = d3;
  }
};

template <> struct fragment_mma<mfma_f32_32x32x64_e4m3> {
  using s = mfma_f32_32x32x64_e4m3;
  static NETRA_DEVICE void run(float (&d)[s::d_items], const u32 (&a)[s::a_words], const u32 (&b)[s::b_words],
                               const float (&c)[s::d_items]) {
    gfx950_isa::v8i32 va, vb;
    gfx950_isa::v16f32 vc;
    NETRA_UNROLL
    for (u32 i = 0; i < 8; ++i) va[i] = static_cast<int>(a[i]), vb[i] = static_cast<int>(b[i]);
    NETRA_UNROLL
    for (u32 i = 0; i < 16; ++i) vc[i] = c[i];
    const gfx950_isa::v16f32 vd =
        gfx950_isa::v_mfma_f32_32x32x64_f8f6f4<gfx950_isa::f8f6f4_e4m3, gfx950_isa::f8f6f4_e4m3>(va, vb, vc);
    NETRA_UNROLL
    for (u32 i = 0; i < 16; ++i) {
      const float v = vd[i];
      d[i] = v;
    }
  }
};

template <> struct fragment_mma<mfma_f32_16x16x32_fp8_fp8> {
  using s = mfma_f32_16x16x32_fp8_fp8;
  static NETRA_DEVICE void run(float (&d)[s::d_items], const u32 (&a)[s::a_words], const u32 (&b)[s::b_words],
                               const float (&c)[s::d_items]) {
    const gfx950_isa::v2i32 va = {static_cast<int>(a[0]), static_cast<int>(a[1])};
    const gfx950_isa::v2i32 vb = {static_cast<int>(b[0]), static_cast<int>(b[1])};
    const gfx950_isa::v4f32 vc = {c[0], c[1], c[2], c[3]};
    const gfx950_isa::v4f32 vd = gfx950_isa::v_mfma_f32_16x16x32_fp8_fp8<>(va, vb, vc);
    const float d0 = vd.x, d1 = vd.y, d2 = vd.z, d3 = vd.w;
    d[0] = d0, d[1] = d1, d[2] = d2, d[3] = d3;
  }
};

}  // namespace netra
#endif
