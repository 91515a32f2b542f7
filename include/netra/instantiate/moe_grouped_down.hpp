// netra/instantiate/moe_grouped_down.hpp — entry point of one contract instance of the family
// moe_grouped_down. A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/grouped_down.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_moe_grouped_down, ::netra::kernels::moe_grouped_down_kernel<netra_contract>)
