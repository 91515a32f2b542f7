#include <netra/instantiate/argmax.hpp>
NETRA_INSTANTIATE(netra::contracts::argmax<netra::gfx950, 248320, 128, 128>)
