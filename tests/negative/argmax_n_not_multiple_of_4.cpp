#include <netra/contracts/argmax.hpp>
template struct netra::contracts::argmax<netra::gfx950, 1002, 8, 4>;
