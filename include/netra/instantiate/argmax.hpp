// netra/instantiate/argmax.hpp — entry points of one argmax contract instance.
// A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/sampling/argmax.hpp"

#define NETRA_INSTANTIATE(...)                                                            \
  using netra_contract = __VA_ARGS__;                                                     \
  NETRA_ENTRY(netra_argmax_stage_one, ::netra::kernels::argmax_stage_one<netra_contract>) \
  NETRA_ENTRY(netra_argmax_stage_two, ::netra::kernels::argmax_stage_two<netra_contract>)
