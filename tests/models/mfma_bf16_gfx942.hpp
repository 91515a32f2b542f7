// tests/models/mfma_bf16_gfx942.hpp — host model of gfx942's BF16 matrix instruction
// v_mfma_f32_16x16x16_bf16, from the CDNA3 ISA document's 16x16 MFMA operand layout (§7.1; the
// distribution the AMD matrix instruction calculator prints for cdna3), independently of
// dsl/matrix_fragment_targets.hpp: A lane l supplies row l mod 16 for K group floor(l / 16), its
// two registers K 4 floor(l / 16) + 0 .. 3 (two BF16 per register, the lower K in the low half);
// B lane l column l mod 16, the same K; C / D register i of lane l is (4 floor(l / 16) + i,
// l mod 16) — tests/models/matrix_bf16.hpp's 16x16xK model at K = 16.
#pragma once
#include "models/matrix_bf16.hpp"

namespace netra::models {

using wave_ab2_bf16 = wave_ab_bf16_k<16>;

inline wave_d_bf16 mfma_f32_16x16x16_bf16(const wave_ab2_bf16& a, const wave_ab2_bf16& b, const wave_d_bf16& c) { return mfma_f32_16x16xk_bf16<16>(a, b, c); }

}  // namespace netra::models
