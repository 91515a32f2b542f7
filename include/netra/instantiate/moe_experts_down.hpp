// netra/instantiate/moe_experts_down.hpp — entry point of one moe_expert_down contract instance.
// A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/experts_down.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY(netra_moe_expert_down, ::netra::kernels::moe_expert_down_kernel<netra_contract>)
