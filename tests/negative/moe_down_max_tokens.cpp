#include <netra/contracts/moe/expert_down.hpp>
template struct netra::contracts::moe_expert_down<netra::sm90a, 0, netra::moe_down_input_e4m3>;
