// netra/dsl/arch/gfx950/mfma_bf16.hpp — the BF16 matrix instruction of gfx950 netra uses, one raw
// wrapper named after it (a builtin, so the hazard recognizer pads reads of its result: s_nop 7),
// and fragment_mma for its shape (dsl/matrix_fragment_bf16.hpp).
#pragma once
#include "netra/dsl/matrix_fragment_bf16.hpp"

#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_mfma_f32_16x16x32_bf16))
namespace netra::gfx950_isa {
typedef __bf16 v8bf16 __attribute__((ext_vector_type(8)));
typedef u32 v4u32_bf16 __attribute__((ext_vector_type(4)));
typedef float v4f32_bf16 __attribute__((ext_vector_type(4)));

/// v_mfma_f32_16x16x32_bf16 (cbsz = abid = blgp = 0): D(16x16, f32) = A(16x32) * B(32x16) + C.
NETRA_DEVICE v4f32_bf16 v_mfma_f32_16x16x32_bf16(v8bf16 a, v8bf16 b, v4f32_bf16 c) {
  return __builtin_amdgcn_mfma_f32_16x16x32_bf16(a, b, c, 0, 0, 0);
}
}  // namespace netra::gfx950_isa

namespace netra {
template <> struct fragment_mma<mfma_f32_16x16x32_bf16> {
  using s = mfma_f32_16x16x32_bf16;
  static NETRA_DEVICE void run(float (&d)[s::d_items], const u32 (&a)[s::a_words], const u32 (&b)[s::b_words],
                               const float (&c)[s::d_items]) {
    const gfx950_isa::v4u32_bf16 wa = {a[0], a[1], a[2], a[3]}, wb = {b[0], b[1], b[2], b[3]};
    const gfx950_isa::v4f32_bf16 vc = {c[0], c[1], c[2], c[3]};
    const gfx950_isa::v4f32_bf16 vd = gfx950_isa::v_mfma_f32_16x16x32_bf16(__builtin_bit_cast(gfx950_isa::v8bf16, wa),
                                                                         __builtin_bit_cast(gfx950_isa::v8bf16, wb), vc);
    // Copy elements to scalars one by one (clang: bit_cast of a vector element reads element 0).
    const float d0 = vd.x, d1 = vd.y, d2 = vd.z, d3 = vd.w;
    d[0] = d0, d[1] = d1, d[2] = d2, d[3] = d3;
  }
};
}  // namespace netra
#endif
