#include <netra/contracts/moe/expert_gate_up.hpp>
template struct netra::contracts::moe_expert_gate_up<netra::sm90a, 16, 3>;
