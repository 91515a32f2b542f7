#include <netra/dsl/arch/gfx950/mfma.hpp>
using namespace netra::gfx950_isa;
extern "C" __global__ void k(v2i32* a, v4f32* c) { c[0] = v_mfma_f32_16x16x32_fp8_fp8<1, 0, 0>(a[0], a[1], c[0]); }
