// netra/kernels/gdn/token_loop.hpp — NETRA_GDN_TOKEN_LOOP keeps a token loop rolled on the GPU
// compilers: the gdn kernels carry their state in registers across tokens, and an unrolled loop
// lets the compiler hoist every token's loads at once (more registers, no gain).
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
#define NETRA_GDN_TOKEN_LOOP _Pragma("unroll 1")
#else
#define NETRA_GDN_TOKEN_LOOP
#endif
