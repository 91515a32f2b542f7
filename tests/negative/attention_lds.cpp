// Negative compile test: a ring larger than the target's LDS
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::gfx950, 0, 1, 1, 8, 3, 64, 128>;
