#include <netra/contracts/moe/shared_gate.hpp>
template struct netra::contracts::moe_shared_gate<netra::gfx950, 512, 1>;
