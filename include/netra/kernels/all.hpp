// netra/kernels/all.hpp — every kernel family (host tools that walk the whole catalog).
#pragma once
#include "netra/kernels/sampling/argmax.hpp"
