// Chain 32 (each E4M3 group by one lane quarter) needs four chunks per thread: refused for the
// warp32 one-warp-per-row mapping (eight chunks per thread).
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::sm90a, 0, 0, 1, 8192, 1, 4, 0, 1, 0, 32>;
