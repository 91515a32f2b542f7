// Must not compile: target.
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::gfx90a, 0, 0, 0, 64, 1, 1>;
