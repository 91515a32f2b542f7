#include <netra/contracts/moe/expert_down.hpp>
template struct netra::contracts::moe_expert_down<netra::gfx950, 8, netra::moe_down_input_gate_up>;
