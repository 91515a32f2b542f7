// netra/instantiate/moe_router.hpp — the entry points of one router contract instance (logits,
// route). A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/router.hpp"

#define NETRA_INSTANTIATE(...)                                                                    \
  using netra_contract = __VA_ARGS__;                                                             \
  NETRA_ENTRY(netra_moe_router_logits, ::netra::kernels::moe_router_logits_kernel<netra_contract>) \
  NETRA_ENTRY(netra_moe_router_route, ::netra::kernels::moe_router_route_kernel<netra_contract>)
