// Negative compile test: the GQA8 family has no extend phase
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::sm90a, 1, 1, 1, 4, 3, 64, 128>;
