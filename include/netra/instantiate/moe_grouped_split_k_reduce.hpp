// netra/instantiate/moe_grouped_split_k_reduce.hpp — entry point of one contract instance of the family
// moe_grouped_split_k_reduce. A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/split_k_down.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY(netra_moe_grouped_reduce, ::netra::kernels::moe_grouped_reduce_kernel<netra_contract>)
