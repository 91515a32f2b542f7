// Must not compile: the GDN recurrent core does not admit gfx1151 (its message names the set).
#include "netra/contracts/gdn/recurrent.hpp"
netra::contracts::gdn_k0<netra::gfx1151, netra::gdn::state_storage::fp32> refused;
