// netra/instantiate/attention_gqa8.hpp — entry points of one attention_gqa8 contract instance.
// A generated translation unit includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/attention/gqa8.hpp"

#define NETRA_INSTANTIATE(...)                                                                                \
  using netra_contract = __VA_ARGS__;                                                                         \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_attention_gqa8_stage_one, ::netra::kernels::attention_gqa8_stage_one<netra_contract>)        \
  NETRA_ENTRY(netra_attention_gqa8_stage_two, ::netra::kernels::attention_gqa8_stage_two<netra_contract>)
