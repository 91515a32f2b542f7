#include <netra/contracts/argmax.hpp>
// 64 values cannot be split into 32 non-empty chunks of 4-aligned length (round_up(2, 4) = 4).
template struct netra::contracts::argmax<netra::gfx950, 64, 32, 4>;
