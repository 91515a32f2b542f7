// A gdn_precompute contract past the batch-128 contract fails to compile with its message.
#include "netra/contracts/gdn/precompute.hpp"
netra::contracts::gdn_precompute<netra::gfx950, 129, 12> c;
