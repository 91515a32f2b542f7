#include <netra/contracts/argmax.hpp>
template struct netra::contracts::argmax<netra::gfx950, 248320, 128, 128, 1, 32>;
