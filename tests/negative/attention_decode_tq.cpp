// Negative compile test: decode has one query token
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::sm90a, 0, 2, 1, 4, 3, 64, 128>;
