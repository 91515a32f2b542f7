// netra/dsl/arch/sm90a/mma_fragment.hpp — fragment_mma<Shape> for the sm90a shapes of
// dsl/matrix_fragment.hpp, on the raw wrappers of dsl/arch/sm90a/mma.hpp.
#pragma once
#include "netra/dsl/arch/sm90a/mma.hpp"
#include "netra/dsl/matrix_fragment.hpp"

namespace netra {

template <> struct fragment_mma<mma_m16n8k32_e4m3> {
  using s = mma_m16n8k32_e4m3;
  static NETRA_DEVICE void run(float (&d)[s::d_items], const u32 (&a)[s::a_words], const u32 (&b)[s::b_words],
                               const float (&c)[s::d_items]) {
    sm90a_isa::mma_sync_aligned_m16n8k32_row_col_f32_e4m3_e4m3_f32(d, a, b, c);
  }
};

}  // namespace netra
