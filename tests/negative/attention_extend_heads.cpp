// Negative compile test: a native extend contract of 4 KV heads per workgroup on gfx950 is not admitted
// (16 waves of the plan's 160 VGPRs do not fit a CU)
#include "netra/contracts/attention/gqa4_extend.hpp"
template struct netra::contracts::attention_gqa4_extend_native<netra::gfx950, 1, 6, 64, 128, 4>;
