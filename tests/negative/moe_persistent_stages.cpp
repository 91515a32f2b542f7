#include <netra/contracts/moe/expert_persistent.hpp>
template struct netra::contracts::moe_expert_persistent<netra::sm90a, 16, 4>;
