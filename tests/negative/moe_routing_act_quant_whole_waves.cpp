#include <netra/contracts/moe/act_quant.hpp>
// VectorsPerLane 2: 32 threads per row; one row per workgroup is half a wave64
template struct netra::contracts::moe_act_quant<netra::gfx950, 9, 2, 1>;
