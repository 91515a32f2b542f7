// A gdn_conv contract with an unknown state layout fails to compile with its message.
#include "netra/contracts/gdn/conv.hpp"
netra::contracts::gdn_conv<netra::sm90a, 64, 12, 2, 1> c;
