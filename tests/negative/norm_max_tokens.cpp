// Must not compile: max_tokens.
#include "netra/contracts/norm/norm.hpp"
template struct netra::contracts::norm<netra::sm90a, 0, 0, 0, 8193, 1, 4>;
