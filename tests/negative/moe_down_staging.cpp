#include <netra/contracts/moe/expert_down.hpp>
template struct netra::contracts::moe_expert_down<netra::sm90a, 16, netra::moe_down_input_e4m3, 2>;
