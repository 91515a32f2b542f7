// netra/instantiate/attention_gqa4_extend_native.hpp — entry points of one
// attention_gqa4_extend_native contract instance: the native stage one, the mapping's floor (stage
// one without the math) and the two stage-two forms. A generated translation unit
// includes this header and writes NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/attention/extend_native.hpp"

#define NETRA_INSTANTIATE(...)                                                                                                          \
  using netra_contract = __VA_ARGS__;                                                                                                   \
  using netra_two_wide = ::netra::kernels::attention_extend_stage_two<netra_contract, ::netra::kernels::extend_stage_two_wide>;      \
  using netra_two_rows = ::netra::kernels::attention_extend_stage_two<netra_contract, ::netra::kernels::extend_stage_two_form<1, 2, true>>; \
  using netra_two_wide_rows = ::netra::kernels::attention_extend_stage_two<netra_contract, ::netra::kernels::extend_stage_two_form<4, 8, true>>; \
  using netra_floor = ::netra::kernels::attention_extend_native_stage_one<netra_contract, false>;                                      \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_attention_extend_native_stage_one, ::netra::kernels::attention_extend_native_stage_one<netra_contract>) \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_attention_extend_native_floor, netra_floor)                                                         \
  NETRA_ENTRY(netra_attention_extend_stage_two, ::netra::kernels::attention_extend_stage_two<netra_contract>)                           \
  NETRA_ENTRY(netra_attention_extend_stage_two_wide, netra_two_wide)                                                                    \
  NETRA_ENTRY(netra_attention_extend_stage_two_rows, netra_two_rows)                                                                    \
  NETRA_ENTRY(netra_attention_extend_stage_two_wide_rows, netra_two_wide_rows)
