#include <netra/contracts/moe/router.hpp>
template struct netra::contracts::moe_router<netra::sm90a, 2, 32>;
