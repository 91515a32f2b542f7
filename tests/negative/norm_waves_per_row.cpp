// Must not compile: waves_per_row.
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::gfx950, 0, 0, 0, 64, 2, 1>;
