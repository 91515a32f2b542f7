// netra/instantiate/moe_grouped_plan.hpp — entry point of one contract instance of the family
// moe_grouped_plan. A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/grouped_plan.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY(netra_moe_grouped_plan, ::netra::kernels::moe_grouped_plan_kernel<netra_contract>)
