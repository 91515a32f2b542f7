// Negative compile test: gfx942 (FNUZ FP8) is not a target of the contract
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::gfx942, 0, 1, 1, 2, 2, 64, 128>;
