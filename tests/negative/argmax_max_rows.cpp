#include <netra/contracts/argmax.hpp>
template struct netra::contracts::argmax<netra::sm90a, 248320, 128, 0>;
