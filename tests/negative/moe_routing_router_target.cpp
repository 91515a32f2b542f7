#include <netra/contracts/moe/router.hpp>
template struct netra::contracts::moe_router<netra::gfx90a, 0, 32>;
