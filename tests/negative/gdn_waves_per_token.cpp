// Several waves per workgroup without staged tokens fails to compile with its message.
#include "netra/contracts/gdn/recurrent.hpp"
netra::contracts::gdn_recurrent<netra::sm90a, 0, 64, 12, 0, 8, 0, 4> c;
