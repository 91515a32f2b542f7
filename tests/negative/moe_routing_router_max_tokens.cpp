#include <netra/contracts/moe/router.hpp>
template struct netra::contracts::moe_router<netra::gfx950, 1, 769>;
