// A gdn_conv contract with 6 channels a thread fails to compile with its message (8 or 4).
#include "netra/contracts/gdn/conv.hpp"
netra::contracts::gdn_conv<netra::sm90a, 64, 12, 0, 0, 0, 256, 1, 0, 6> c;
