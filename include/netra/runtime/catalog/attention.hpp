// netra/runtime/catalog/attention.hpp — built-in attention instances: the served GQA8 decode and
// verify contracts on both targets, the page-size-16 decode, and the sm90a decode mappings the
// benchmark compares (BlockWarps x Stages: 2 x 0 served — Stages 0: no LDS ring —, 1 x 0, 4 x 0, 8 x 0;
// 4 x 3, 2 x 6, 1 x 8 with one workgroup per SM; 2 x 2, 1 x 2 with several; 2 x 0 with each block
// split over BlockSplit 4 / 8 warps on sm90a and 4 on gfx950: sm90a's 2 x 0 / 4 served at B 1, the others
// catalogued; the sm90a verifies served before the warpgroup one (each two-token wave over two warps,
// BlockSplit 2, 6 stages; before it one warp a wave over 8 stages), compared); the GQA4 extend contract
// on both targets (page size 1 served, page size 16 on sm90a) and its native 48-row plan (both
// targets at page size 1, sm90a at 16; on sm90a also with its products on the warpgroup matrix
// unit, WarpgroupMma: 3 stages at page sizes 1 and 16, 6 stages at 1 — served —, the per-warp sm90a
// plan compared).
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/attention/gqa4_extend.hpp"
#include "netra/contracts/attention/gqa8_paged.hpp"

namespace netra::catalog {
inline constexpr auto attention =
    boost::hana::tuple_t<contracts::attention_gqa8_decode<gfx950>, contracts::attention_gqa8_decode<sm90a>,
                         contracts::attention_gqa8_verify<gfx950>, contracts::attention_gqa8_verify<sm90a>,
                         contracts::attention_gqa8<gfx950, 0, 1, 16, 2, 2, 64, 128>, contracts::attention_gqa8<sm90a, 0, 1, 16, 4, 3, 64, 128>,
                         contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 6, 64, 128>, contracts::attention_gqa8<sm90a, 0, 1, 1, 1, 8, 64, 128>,
                         contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 2, 64, 256>, contracts::attention_gqa8<sm90a, 0, 1, 1, 1, 2, 64, 512>,
                         contracts::attention_gqa8<sm90a, 0, 1, 1, 1, 0, 64, 512>, contracts::attention_gqa8<sm90a, 0, 1, 1, 4, 0, 64, 256>,
                         contracts::attention_gqa8<sm90a, 0, 1, 1, 8, 0, 64, 512>,
                         contracts::attention_gqa8<sm90a, 0, 1, 1, 4, 3, 64, 128>,
                         contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 0, 64, 512, 4>, contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 0, 64, 512, 8>,
                         contracts::attention_gqa8<gfx950, 0, 1, 1, 2, 0, 64, 512, 4>,
                         contracts::attention_gqa8<sm90a, 2, 12, 1, 1, 8, 64, 128>, contracts::attention_gqa8<sm90a, 2, 12, 1, 1, 6, 64, 128, 2>,
                         contracts::attention_gqa4_extend_served<gfx950>, contracts::attention_gqa4_extend_served<sm90a>,
                         contracts::attention_gqa4_extend<sm90a, 16, 1, 6, 64, 128>,
                         contracts::attention_gqa4_extend_native<gfx950, 1, 6, 64, 128>, contracts::attention_gqa4_extend_native<sm90a, 1, 6, 64, 128>,
                         contracts::attention_gqa4_extend_native<sm90a, 16, 6, 64, 128>,
                         contracts::attention_gqa4_extend_native<sm90a, 1, 3, 64, 128, 1>, contracts::attention_gqa4_extend_native<sm90a, 1, 6, 64, 128, 1>,
                         contracts::attention_gqa4_extend_native<sm90a, 16, 3, 64, 128, 1>>;
}  // namespace netra::catalog
