// netra/instantiate/moe_shared_gate.hpp — the entry point of one shared-gate contract instance.
// A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/moe/shared_gate.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY(netra_moe_shared_gate, ::netra::kernels::moe_shared_gate_kernel<netra_contract>)
