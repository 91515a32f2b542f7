#include <netra/contracts/argmax.hpp>
template struct netra::contracts::argmax<netra::gfx942, 248320, 128, 128>;
