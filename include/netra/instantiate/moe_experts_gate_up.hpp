// netra/instantiate/moe_experts_gate_up.hpp — entry point of one moe_expert_gate_up contract
// instance. A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/experts_gate_up.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_moe_expert_gate_up, ::netra::kernels::moe_expert_gate_up_kernel<netra_contract>)
