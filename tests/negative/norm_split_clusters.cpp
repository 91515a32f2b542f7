// Must not compile: add_rms with Split > 1 on a target without workgroup clusters.
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::gfx950, 1, 0, 1, 64, 1, 1, 0, 2>;
