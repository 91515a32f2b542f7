// netra/kernels/attention/gqa8.hpp — the kernels of contracts::attention_gqa8 (both stages; stage
// one through the LDS ring, or with Stages = 0 straight into registers).
#pragma once
#include "netra/kernels/attention/gqa8_stage_one.hpp"
#include "netra/kernels/attention/gqa8_stage_one_direct.hpp"
#include "netra/kernels/attention/gqa8_stage_two.hpp"

namespace netra::kernels {

/// The stage one of an attention_gqa8 instance: the LDS ring, or with Stages = 0 direct.
template <class Contract>
using attention_gqa8_stage_one_of =
    conditional_t<Contract::stages == 0, attention_gqa8_stage_one_direct<Contract>, attention_gqa8_stage_one<Contract>>;

/// The kernels of an attention_gqa8 instance, in launch order (stage two only for split calls).
template <class Target, u32 Phase, u32 Tq, u32 PageSize, u32 BlockWarps, u32 Stages, u32 MaxBatch, u32 SplitCapacity>
struct kernels_of<contracts::attention_gqa8<Target, Phase, Tq, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity>> {
  using contract = contracts::attention_gqa8<Target, Phase, Tq, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity>;
  using type = type_list<attention_gqa8_stage_one_of<contract>, attention_gqa8_stage_two<contract>>;
};

}  // namespace netra::kernels
