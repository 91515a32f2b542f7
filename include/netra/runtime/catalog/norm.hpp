// netra/runtime/catalog/norm.hpp — built-in normalization instances: for each target, RMSNorm
// and residual add + RMSNorm (plain and zero-centred weights) and the gated norm, each with a
// BF16 and an E4M3 output, in the decode (<= 64 tokens) and prefill (<= 8192 tokens) mappings;
// plus sm90a alternatives the benchmark compares.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/norm/norm.hpp"

namespace netra::catalog {
namespace norm_detail {
template <class Target, u32 Kind, u32 Weight, u32 Fp8Out>
using both = boost::hana::tuple<boost::hana::type<contracts::norm_decode<Target, Kind, Weight, Fp8Out>>,
                                boost::hana::type<contracts::norm_prefill<Target, Kind, Weight, Fp8Out>>>;
template <class Target>
constexpr auto of_target = boost::hana::flatten(boost::hana::make_tuple(
    both<Target, 0, 0, 0>{}, both<Target, 0, 0, 1>{}, both<Target, 0, 1, 0>{}, both<Target, 0, 1, 1>{},  // rms
    both<Target, 1, 0, 0>{}, both<Target, 1, 0, 1>{}, both<Target, 1, 1, 0>{}, both<Target, 1, 1, 1>{},  // add_rms
    both<Target, 2, 0, 0>{}, both<Target, 2, 0, 1>{}));                                                // gated
}  // namespace norm_detail

/// sm90a mappings the benchmark compares with the dispatched ones (bench/results/norm_h200.json's
/// diagnostics; bench/norm_floor.cu times each one's byte-moving floor): one warp per row at
/// decode sizes; 1, 2 and 8 rows per block, two warps per row (1, 2 or 4 rows per block) and the
/// looping grid (2 or 4 resident blocks per SM, the next row in flight) at prefill sizes; the
/// gated norm with 4 or 8 heads per block at decode sizes, 8, 16 (looping) or 32 at prefill sizes.
inline constexpr auto norm_alternatives = boost::hana::tuple_t<
    contracts::rms_norm<sm90a, 0, 0, 64, 1, 1>, contracts::add_rms_norm<sm90a, 0, 1, 64, 1, 1>,
    contracts::rms_norm<sm90a, 0, 0, 8192, 1, 1>, contracts::rms_norm<sm90a, 0, 0, 8192, 1, 2>, contracts::rms_norm<sm90a, 0, 0, 8192, 1, 8>,
    contracts::rms_norm<sm90a, 0, 0, 8192, 1, 4, 2>, contracts::rms_norm<sm90a, 0, 1, 8192, 1, 4, 2>,
    contracts::rms_norm<sm90a, 0, 0, 8192, 2, 2>, contracts::rms_norm<sm90a, 0, 0, 8192, 2, 4>, contracts::rms_norm<sm90a, 0, 1, 8192, 2, 2>,
    contracts::add_rms_norm<sm90a, 0, 0, 8192, 2, 2>, contracts::add_rms_norm<sm90a, 0, 1, 8192, 2, 2>,
    contracts::add_rms_norm<sm90a, 0, 0, 8192, 1, 2>, contracts::add_rms_norm<sm90a, 0, 0, 8192, 1, 8>,
    contracts::add_rms_norm<sm90a, 0, 0, 8192, 1, 4, 2>, contracts::add_rms_norm<sm90a, 0, 1, 8192, 1, 4, 2>,
    contracts::gated_rms_norm<sm90a, 0, 8192, 16, 4>, contracts::gated_rms_norm<sm90a, 1, 8192, 16, 4>,
    contracts::gated_rms_norm<sm90a, 0, 64, 4>, contracts::gated_rms_norm<sm90a, 1, 64, 4>,
    contracts::rms_norm<sm90a, 0, 0, 8192, 2, 1>, contracts::rms_norm<sm90a, 0, 1, 8192, 2, 1>, contracts::rms_norm<sm90a, 0, 1, 8192, 2, 4>,
    contracts::add_rms_norm<sm90a, 0, 0, 8192, 2, 1>, contracts::add_rms_norm<sm90a, 0, 0, 8192, 2, 4>,
    contracts::add_rms_norm<sm90a, 0, 1, 8192, 2, 1>, contracts::add_rms_norm<sm90a, 0, 1, 8192, 2, 4>,
    contracts::gated_rms_norm<sm90a, 0, 64, 8>, contracts::gated_rms_norm<sm90a, 1, 64, 8>,
    contracts::gated_rms_norm<sm90a, 0, 8192, 8>, contracts::gated_rms_norm<sm90a, 1, 8192, 8>,
    contracts::gated_rms_norm<sm90a, 0, 8192, 32>, contracts::gated_rms_norm<sm90a, 1, 8192, 32>>;

inline constexpr auto norm =
    boost::hana::flatten(boost::hana::make_tuple(norm_detail::of_target<gfx950>, norm_detail::of_target<sm90a>, norm_alternatives));
}  // namespace netra::catalog
