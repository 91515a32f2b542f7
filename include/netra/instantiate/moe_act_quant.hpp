// netra/instantiate/moe_act_quant.hpp — the entry point of one act_quant contract instance.
// A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/act_quant.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY(netra_moe_act_quant, ::netra::kernels::moe_act_quant_kernel<netra_contract>)
