// Negative compile test: an extend contract whose workspace cannot hold 2 slices of its largest batch
#include "netra/contracts/attention/gqa4_extend.hpp"
template struct netra::contracts::attention_gqa4_extend<netra::sm90a, 1, 1, 6, 64, 64>;
