// netra/instantiate/norm.hpp — the entry point of one normalization contract instance.
// A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/norm/rms_norm.hpp"

#define NETRA_INSTANTIATE(...)        \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_norm, ::netra::kernels::norm_kernel<netra_contract>)
