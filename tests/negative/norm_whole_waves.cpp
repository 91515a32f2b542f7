// Must not compile: whole_waves.
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::sm90a, 2, 0, 0, 64, 1, 1>;
