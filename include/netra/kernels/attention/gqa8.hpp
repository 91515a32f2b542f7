// netra/kernels/attention/gqa8.hpp — the kernels of contracts::attention_gqa8: stage one (one
// interface; through the LDS ring, or with Stages = 0 straight into registers) and stage two.
#pragma once
#include "netra/kernels/attention/gqa8_stage_one.hpp"
#include "netra/kernels/attention/gqa8_stage_one_direct.hpp"
#include "netra/kernels/attention/gqa8_stage_one_warpgroup.hpp"
#include "netra/kernels/attention/gqa8_stage_two.hpp"

namespace netra::kernels {

/// Stage one of an attention_gqa8 instance, one kernel interface for both stagings: grid (slices,
/// 2, batch), the contract's workgroup (Tq / tokens_per_wave * BlockWarps * BlockSplit warps) and LDS; run() is the staging's —
/// Stages >= 2 the LDS ring (gqa8_stage_one.hpp; with WarpgroupMma its products on the warpgroup
/// matrix unit, gqa8_stage_one_warpgroup.hpp), Stages = 0 each wave's blocks straight into
/// registers (gqa8_stage_one_direct.hpp, its loads through L1: no preference for LDS over L1).
template <class Contract> struct attention_gqa8_stage_one {
  using staging = conditional_t<Contract::stages == 0, attention_gqa8_direct_staging<Contract>,
                                conditional_t<gqa8_warpgroup_mma<Contract>(), attention_gqa8_warpgroup_staging<Contract>, attention_gqa8_ring_staging<Contract>>>;
  using plan = typename attention_gqa8_wave<Contract>::plan;
  using params = attention_gqa8_args;
  static constexpr const char* symbol = "netra_attention_gqa8_stage_one";
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr u32 dynamic_lds_bytes = Contract::lds_bytes;
  static constexpr bool programmatic_dependent_launch = false;
  static constexpr bool prefers_max_lds = Contract::stages != 0;
  static constexpr u32 min_workgroups_per_processor = 1;
  static_assert(plan::rows == Contract::group * gqa8_tokens_per_wave<Contract>() && plan::head_dim == Contract::head_dim && plan::block == Contract::block,
                "netra::kernels::attention_gqa8_stage_one: the plan's tile is not the contract's");

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch, u32 slices) {
    return {{slices, Contract::kv_heads, batch}, workgroup_size, dynamic_lds_bytes};
  }
  static NETRA_DEVICE void run(const params& p) { staging::run(p); }
};

/// The kernels of an attention_gqa8 instance, in launch order (stage two only for split calls).
template <class Target, u32 Phase, u32 Tq, u32 PageSize, u32 BlockWarps, u32 Stages, u32 MaxBatch, u32 SplitCapacity, u32 BlockSplit, u32 WarpgroupMma,
          class Format>
struct kernels_of<contracts::attention_gqa8<Target, Phase, Tq, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity, BlockSplit, WarpgroupMma, Format>> {
  using contract = contracts::attention_gqa8<Target, Phase, Tq, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity, BlockSplit, WarpgroupMma, Format>;
  using type = type_list<attention_gqa8_stage_one<contract>, attention_gqa8_stage_two<contract>>;
};

}  // namespace netra::kernels
