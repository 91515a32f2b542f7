#include <netra/contracts/moe/expert_gate_up.hpp>
template struct netra::contracts::moe_expert_gate_up<netra::gfx1151, 16>;
