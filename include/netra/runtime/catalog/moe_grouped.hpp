// netra/runtime/catalog/moe_grouped.hpp — built-in grouped MoE expert instances for mid and large
// batches (issue 29 §3, §4), both targets: per token range a plan (routes grouped by expert, the
// hidden quantized once), gate_up with act_quant fused, down per route and the weighted route sum;
// 17..256 tokens with tiles of 16 routes, 257..768 with tiles of 32 (sm90a) / 64 (gfx950), and the
// exact M768 split-K pair (two FP16 K partials, then the reducer); on sm90a also gate_up with its
// weights through an LDS ring and down over 4 row tiles, the 2-block ring, and down's weights
// through its LDS ring, and the mid range's Trim forms over 8 and 16 row tiles (tactics/moe_grouped.hpp:
// mid_trim_rows8 and large_dring are dispatched).
#pragma once
#include <boost/hana.hpp>

#include "netra/runtime/tactics/moe_grouped.hpp"

namespace netra::catalog {
inline constexpr auto moe_grouped = boost::hana::flatten(boost::hana::make_tuple(
    tactics::grouped_contracts<gfx950>, tactics::grouped_contracts<sm90a>,
    boost::hana::tuple_t<tactics::grouped_mid_ring<sm90a>::gate_up, tactics::grouped_large_ring<sm90a>::gate_up, tactics::grouped_mid_ring<sm90a>::down,
                         tactics::grouped_large_ring<sm90a>::down, tactics::grouped_mid_ring2<sm90a>::gate_up,
                         tactics::grouped_mid_dring<sm90a>::down, tactics::grouped_large_dring<sm90a>::down,
                         tactics::grouped_mid_trim_rows8<sm90a>::gate_up, tactics::grouped_mid_trim_rows8<sm90a>::down,
                         tactics::grouped_mid_trim_rows16<sm90a>::down>));
}  // namespace netra::catalog
