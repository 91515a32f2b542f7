#include <netra/contracts/moe/expert_gate_up.hpp>
template struct netra::contracts::moe_expert_gate_up<netra::gfx950, 16, 0, netra::staging::lds_bulk_copy>;
