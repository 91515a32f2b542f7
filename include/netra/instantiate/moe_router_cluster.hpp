// netra/instantiate/moe_router_cluster.hpp — the entry point of one router contract instance with
// Cluster 16 (one kernel). A generated translation unit includes this header and writes
// NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/router_cluster.hpp"

#define NETRA_INSTANTIATE(...)      \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY(netra_moe_router, ::netra::kernels::moe_router_cluster_kernel<netra_contract>)
