// netra/instantiate/attention_gqa4_extend.hpp — entry points of one attention_gqa4_extend
// contract instance. A generated translation unit includes this header and writes
// NETRA_INSTANTIATE(<contract>).
#pragma once
#include "netra/kernels/attention/extend.hpp"

#define NETRA_INSTANTIATE(...)                                                                                                        \
  using netra_contract = __VA_ARGS__;                                                                                                 \
  template <::netra::u32 L, ::netra::u32 A>                                                                                          \
  using netra_two = ::netra::kernels::attention_extend_stage_two<netra_contract, ::netra::kernels::extend_stage_two_form<L, A>>;      \
  using netra_two_4_8 = netra_two<4, 8>;                                                                                             \
  using netra_two_4_2 = netra_two<4, 2>;                                                                                             \
  using netra_two_2_2 = netra_two<2, 2>;                                                                                             \
  using netra_two_1_2 = netra_two<1, 2>;                                                                                             \
  NETRA_ENTRY(netra_attention_extend_stage_zero, ::netra::kernels::attention_extend_stage_zero<netra_contract>)                       \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_attention_gqa8_stage_one, ::netra::kernels::attention_gqa8_stage_one<netra_contract::pair_view>) \
  NETRA_ENTRY(netra_attention_extend_stage_two, ::netra::kernels::attention_extend_stage_two<netra_contract>)                           \
  NETRA_ENTRY(netra_attention_extend_stage_two_wide, netra_two_4_8)                                                                    \
  NETRA_ENTRY(netra_attention_extend_stage_two_wide_a2, netra_two_4_2)                                                                 \
  NETRA_ENTRY(netra_attention_extend_stage_two_pair_a2, netra_two_2_2)                                                                 \
  NETRA_ENTRY(netra_attention_extend_stage_two_a2, netra_two_1_2)
