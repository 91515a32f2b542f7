#include <netra/contracts/moe/router.hpp>
template struct netra::contracts::moe_router<netra::gfx1151, 0, 32>;
