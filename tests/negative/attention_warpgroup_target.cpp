// Negative compile test: WarpgroupMma on gfx950 (its MFMA is issued per wave: no warpgroup matrix instructions)
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::gfx950, 2, 12, 1, 1, 6, 64, 128, 1, 1>;
