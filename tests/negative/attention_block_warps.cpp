// Negative compile test: BlockWarps 3
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::sm90a, 0, 1, 1, 3, 3, 64, 128>;
