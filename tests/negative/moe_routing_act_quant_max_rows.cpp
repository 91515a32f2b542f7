#include <netra/contracts/moe/act_quant.hpp>
template struct netra::contracts::moe_act_quant<netra::sm90a, 4609, 2, 8>;
