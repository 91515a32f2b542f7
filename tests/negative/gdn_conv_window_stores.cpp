// A gdn_conv contract with streaming window stores but no windows fails to compile with its message.
#include "netra/contracts/gdn/conv.hpp"
netra::contracts::gdn_conv<netra::sm90a, 64, 12, 0, 0, 2, 256, 3, 4, 4, 1, 1> c;
