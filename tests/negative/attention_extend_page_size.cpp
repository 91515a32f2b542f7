// Negative compile test: an extend contract of page size 8 is not admitted
#include "netra/contracts/attention/gqa4_extend.hpp"
template struct netra::contracts::attention_gqa4_extend<netra::sm90a, 8, 1, 6, 64, 128>;
