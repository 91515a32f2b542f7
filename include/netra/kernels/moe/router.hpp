// netra/kernels/moe/router.hpp — the two kernels of contracts::moe_router (Cluster 0; both
// tactics): logits (partial logits into the workspace, router_logits.hpp) and route (softmax ->
// top-8 -> weights, slots 0..7, router_route.hpp). The cluster kernel (Cluster 16, one kernel)
// and the family's kernel lists are router_cluster.hpp.
//
// Contract: route slots 0..7 (top-8 ids, renormalised softmax weights) from BF16 hidden x gate
// weight, see contracts/moe/router.hpp for the semantics, the orders and the policies.
#pragma once
#include "netra/kernels/moe/router_logits.hpp"
#include "netra/kernels/moe/router_route.hpp"
