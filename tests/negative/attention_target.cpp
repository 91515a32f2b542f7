// Negative compile test: gfx1151 (RDNA, no attention plan) is not a target of the contract
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::gfx1151, 0, 1, 1, 2, 0, 64, 512>;
