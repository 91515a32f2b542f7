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
/// diagnostics; bench/norm_floor.cu times each one's byte-moving floor): rms and add_rms one warp
/// per row, 4 rows per block (the prefill mapping before two warps per row measured faster), the
/// gated norm with 8 heads per block (within the run-to-run spread of the dispatched 16). The
/// other mappings measured and not kept: lab/norm/README.md.
inline constexpr auto norm_alternatives = boost::hana::tuple_t<
    contracts::rms_norm<sm90a, 0, 0, 8192, 1, 4>, contracts::rms_norm<sm90a, 0, 1, 8192, 1, 4>,
    contracts::add_rms_norm<sm90a, 0, 0, 8192, 1, 4>, contracts::add_rms_norm<sm90a, 0, 1, 8192, 1, 4>,
    contracts::gated_rms_norm<sm90a, 0, 8192, 8>, contracts::gated_rms_norm<sm90a, 1, 8192, 8>>;
/// sm90a gated candidates with more values per thread (SlicesPerThread 2: a head over 8 threads,
/// 4 per warp; 4: over 4 threads), against the decode (1-2-0) and prefill (1-16-0) mappings.
template <u32 Fp8Out>
using gated_candidates = boost::hana::tuple<boost::hana::type<contracts::gated_rms_norm<sm90a, Fp8Out, 64, 4, 0, 2>>,
                                            boost::hana::type<contracts::gated_rms_norm<sm90a, Fp8Out, 64, 8, 0, 2>>,
                                            boost::hana::type<contracts::gated_rms_norm<sm90a, Fp8Out, 64, 8, 0, 4>>,
                                            boost::hana::type<contracts::gated_rms_norm<sm90a, Fp8Out, 8192, 16, 0, 2>>>;
inline constexpr auto norm_gated_candidates = boost::hana::flatten(boost::hana::make_tuple(gated_candidates<0>{}, gated_candidates<1>{}));

inline constexpr auto norm =
    boost::hana::flatten(boost::hana::make_tuple(norm_detail::of_target<gfx950>, norm_detail::of_target<sm90a>, norm_alternatives, norm_gated_candidates));
}  // namespace netra::catalog
