// netra/instantiate/moe_router.hpp — the entry point of one router contract instance. A
// generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/router.hpp"

#define NETRA_INSTANTIATE(...)                                                                    \
  using netra_contract = __VA_ARGS__;                                                             \
  NETRA_ENTRY(netra_moe_router, ::netra::kernels::moe_router_kernel<netra_contract>)
