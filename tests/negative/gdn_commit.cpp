// A gdn_recurrent contract with an unknown Commit fails to compile with its message.
#include "netra/contracts/gdn/recurrent.hpp"
netra::contracts::gdn_recurrent<netra::gfx950, 3, 64, 12, 0> c;
