// netra/instantiate/gdn_precompute.hpp — entry point of one gdn_precompute contract instance.
#pragma once
#include "netra/kernels/gdn/precompute.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY(netra_gdn_precompute, ::netra::kernels::gdn_precompute_kernel<netra_contract>)
