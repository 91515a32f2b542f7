// A gdn_conv contract with a SiLU form other than 0 (selects) or 1 (lean) fails to compile with its message.
#include "netra/contracts/gdn/conv.hpp"
netra::contracts::gdn_conv<netra::sm90a, 64, 12, 0, 1, 2, 256, 3, 4, 4, 1, 1, 2> c;
