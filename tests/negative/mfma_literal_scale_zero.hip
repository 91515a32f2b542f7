#include <netra/dsl/arch/gfx950/mfma.hpp>
using namespace netra::gfx950_isa;
extern "C" __global__ void k(v8i32* a, v16f32* c) { c[0] = v_mfma_scale_f32_32x32x64_f8f6f4_imm<0, 0, 0, 127>(a[0], a[1], c[0]); }
