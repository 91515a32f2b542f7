// Must not compile: GQA8 attention on gfx942 over an OCP E4M3FN cache (gfx942's conversion reads
// E4M3FNUZ; its message names each target's format).
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::gfx942, 0, 1, 1, 2, 0, 64, 512, 1, 0, netra::fp8::e4m3fn>;
