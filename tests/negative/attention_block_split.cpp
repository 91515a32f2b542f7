// Negative compile test: BlockSplit 4 with an LDS ring (Stages 3): the split is a Stages 0 mapping only
#include "netra/contracts/attention/gqa8_paged.hpp"
template struct netra::contracts::attention_gqa8<netra::sm90a, 0, 1, 1, 2, 3, 64, 128, 4>;
