// netra/contracts/attention/gqa8_decode_wide.hpp — the served GQA8 decode mapping with its admitted
// batch widened to 1..128 (the integrated step's decode buckets 80..128). MaxBatch changes no
// code: stage one's grid is (slices, 2, batch) for any batch, and slices_for keeps batch * slices
// within SplitCapacity, so the workspace is the served instance's. Dispatch lists it after the
// served decode, which keeps the batches 1..64.
#pragma once
#include "netra/contracts/attention/gqa8_paged.hpp"

namespace netra::contracts {
inline constexpr u32 attention_gqa8_wide_batch = 128;
template <class Contract> struct attention_gqa8_widened;
template <class Target, u32 Phase, u32 Tq, u32 PageSize, u32 BlockWarps, u32 Stages, u32 MaxBatch, u32 SplitCapacity, u32 BlockSplit, u32 WarpgroupMma,
          class Format>
struct attention_gqa8_widened<attention_gqa8<Target, Phase, Tq, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity, BlockSplit, WarpgroupMma, Format>> {
  using type = attention_gqa8<Target, Phase, Tq, PageSize, BlockWarps, Stages, attention_gqa8_wide_batch, SplitCapacity, BlockSplit, WarpgroupMma, Format>;
};
template <class Target> using attention_gqa8_decode_wide = typename attention_gqa8_widened<attention_gqa8_decode<Target>>::type;
}  // namespace netra::contracts
