// Inputs raw needs a staged map: Staging 0 (per_token) is refused at compile time.
#include "netra/contracts/gdn/recurrent.hpp"
netra::contracts::gdn_m16<netra::sm90a, 0, 8, 0, 1, 1, 0, netra::gdn::core_inputs::raw> c;
