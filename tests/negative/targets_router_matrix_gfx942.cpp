// Must not compile: the router's matrix tactic on gfx942 (no BF16 matrix shape there in
// dsl/fragment/target_shapes.hpp; its message names the targets that have one).
#include "netra/contracts/moe/router.hpp"
template struct netra::contracts::moe_router<netra::gfx942, 1, 128>;
