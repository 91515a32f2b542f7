// Must not compile: LanesPerChunk 2 on RMSNorm (only the gated norm's heads take it).
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::sm90a, 0, 0, 0, 64, 2, 1, 0, 1, 0, 2>;
