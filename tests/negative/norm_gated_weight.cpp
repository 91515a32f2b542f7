// Must not compile: gated_weight.
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::sm90a, 2, 1, 0, 64, 1, 2>;
