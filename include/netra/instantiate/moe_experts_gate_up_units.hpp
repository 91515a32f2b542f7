// netra/instantiate/moe_experts_gate_up_units.hpp — the entry points of one moe_expert_gate_up
// contract instance with Schedule unit_list (the units kernel, then gate_up). A generated
// translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/experts_gate_up.hpp"

#define NETRA_INSTANTIATE(...)                                                                  \
  using netra_contract = __VA_ARGS__;                                                           \
  NETRA_ENTRY(netra_moe_expert_units, ::netra::kernels::moe_expert_units_kernel<netra_contract>) \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_moe_expert_gate_up, ::netra::kernels::moe_expert_gate_up_kernel<netra_contract>)
