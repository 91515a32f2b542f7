// Must not compile: Split on the gated norm (its rows are 128 values, one chunk per thread).
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::sm90a, 2, 0, 0, 64, 1, 2, 0, 2>;
