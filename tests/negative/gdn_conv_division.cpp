// A gdn_conv contract with an unknown SiLU division fails to compile with its message (0 or 1).
#include "netra/contracts/gdn/conv.hpp"
netra::contracts::gdn_conv<netra::sm90a, 64, 12, 0, 1, 2, 256, 3, 3, 8, 2> c;
