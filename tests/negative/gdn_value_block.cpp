// A gdn_recurrent contract with a value block that is not wave C / 4, wave C / 2 or wave C fails to compile with its message.
#include "netra/contracts/gdn/recurrent.hpp"
netra::contracts::gdn_recurrent<netra::sm90a, 0, 64, 12, 0, 12> c;
