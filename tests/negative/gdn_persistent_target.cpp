// Persistent on gfx950 fails to compile with its message (no asynchronous LDS copy there).
#include "netra/contracts/gdn/recurrent.hpp"
netra::contracts::gdn_recurrent<netra::gfx950, 0, 64, 12, 0, 16, 1, 1, 1, 0, 0, 264> c;
