#include <netra/contracts/moe/shared_gate.hpp>
template struct netra::contracts::moe_shared_gate<netra::sm90a, 0>;
