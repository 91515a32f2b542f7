#include <netra/contracts/argmax.hpp>
template struct netra::contracts::argmax<netra::sm90a, 1024, 7, 4>;
