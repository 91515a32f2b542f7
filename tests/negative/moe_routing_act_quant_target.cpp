#include <netra/contracts/moe/act_quant.hpp>
template struct netra::contracts::moe_act_quant<netra::gfx90a, 9, 1, 1>;
