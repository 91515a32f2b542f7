// netra/instantiate/moe_grouped_gate_up.hpp — entry point of one contract instance of the family
// moe_grouped_gate_up. A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/grouped_gate_up.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_moe_grouped_gate_up, ::netra::kernels::moe_grouped_gate_up_kernel<netra_contract>)
