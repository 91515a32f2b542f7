// netra/dsl/arch/sm90a/mma_bf16.hpp — the BF16 matrix instruction of sm_90a netra uses, one raw
// wrapper named after the PTX instruction, and fragment_mma for its shape
// (dsl/matrix_fragment_bf16.hpp). mma.sync m16n8k16 BF16 runs natively on Hopper's tensor cores
// (HMMA.16816.F32.BF16), warp-synchronous, registers only.
#pragma once
#include "netra/dsl/matrix_fragment_bf16.hpp"

namespace netra::sm90a_isa {
/// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: d = A(16x16) * B(16x8) + c.
NETRA_DEVICE void mma_sync_aligned_m16n8k16_row_col_f32_bf16_bf16_f32(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2],
                                                                      const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
}  // namespace netra::sm90a_isa

namespace netra {
template <> struct fragment_mma<mma_m16n8k16_bf16> {
  using s = mma_m16n8k16_bf16;
  static NETRA_DEVICE void run(float (&d)[s::d_items], const u32 (&a)[s::a_words], const u32 (&b)[s::b_words],
                               const float (&c)[s::d_items]) {
    sm90a_isa::mma_sync_aligned_m16n8k16_row_col_f32_bf16_bf16_f32(d, a, b, c);
  }
};
}  // namespace netra
