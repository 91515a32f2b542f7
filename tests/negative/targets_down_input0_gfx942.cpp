// Must not compile: the down projection's Input 0 (act_quant's OCP E4M3FN) on gfx942, whose
// matrix unit reads E4M3FNUZ (its message says which Input serves).
#include "netra/contracts/moe/expert_down.hpp"
template struct netra::contracts::moe_expert_down<netra::gfx942, 16, 0>;
