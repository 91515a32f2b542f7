// Must not compile: attention does not admit gfx1151 (its message names the set).
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::gfx1151, 0, 1, 1, 2, 2, 64, 128>;
