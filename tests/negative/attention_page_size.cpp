// Negative compile test: page size 8 is not admitted
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::sm90a, 0, 1, 8, 4, 3, 64, 128>;
