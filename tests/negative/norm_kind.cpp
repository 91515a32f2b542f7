// Must not compile: kind.
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::sm90a, 3, 0, 0, 64, 1, 1>;
