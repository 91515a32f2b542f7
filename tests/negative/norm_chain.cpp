// Chain 6 (the group's reciprocal and amax) needs the gated norm's FP8 output: refused for BF16.
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::sm90a, 2, 0, 0, 64, 1, 2, 0, 1, 0, 6>;
