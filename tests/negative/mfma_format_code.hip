#include <netra/dsl/arch/gfx950/mfma.hpp>
using namespace netra::gfx950_isa;
extern "C" __global__ void k(v8i32* a, v4f32* c) { c[0] = v_mfma_f32_16x16x128_f8f6f4<5, 0>(a[0], a[1], c[0]); }
