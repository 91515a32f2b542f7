// The literal-scale-0 trap, checked on the code object: a run-time scale that happens to be the
// constant 0 keeps the scaled opcode (v_mfma_scale_...) and the E8M0 meaning 2^-127; only the
// unscaled wrapper emits the unscaled opcode; the compile-time form with 127 (1.0) stays scaled.
#include <netra/dsl/arch/gfx950/mfma.hpp>
using namespace netra::gfx950_isa;
extern "C" __global__ void k(v8i32* a, v4f32* c) { c[0] = v_mfma_scale_f32_16x16x128_f8f6f4<0, 0, 0, 0>(a[0], a[1], c[0], 0u, 0u); c[1] = v_mfma_f32_16x16x128_f8f6f4<0, 0>(a[2], a[3], c[1]); c[2] = v_mfma_scale_f32_16x16x128_f8f6f4_imm<0, 0, 127, 127>(a[4], a[5], c[2]); }
