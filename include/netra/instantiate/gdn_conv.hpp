// netra/instantiate/gdn_conv.hpp — entry point of one gdn_conv contract instance.
#pragma once
#include "netra/kernels/gdn/conv.hpp"

#define NETRA_INSTANTIATE(...)       \
  using netra_contract = __VA_ARGS__; \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_gdn_conv_update, ::netra::kernels::gdn_conv_update<netra_contract>)
