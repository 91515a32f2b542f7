// netra/instantiate/gdn_recurrent.hpp — entry point of one gdn_recurrent contract instance with
// Commit none or final (K0 verify, M16).
#pragma once
#include "netra/kernels/gdn/recurrent.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_gdn_recurrent, ::netra::kernels::gdn_recurrent_core<netra_contract>)
