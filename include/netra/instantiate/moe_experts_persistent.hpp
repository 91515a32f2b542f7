// netra/instantiate/moe_experts_persistent.hpp — entry point of one moe_expert_persistent contract
// instance. A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/experts_persistent.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_moe_expert_persistent, ::netra::kernels::moe_expert_persistent_kernel<netra_contract>)
