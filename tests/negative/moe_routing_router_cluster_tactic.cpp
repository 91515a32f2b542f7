#include <netra/contracts/moe/router.hpp>
template struct netra::contracts::moe_router<netra::sm90a, 1, 128, 0, 16>;
