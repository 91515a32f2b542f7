// netra/runtime/catalog/norm.hpp — built-in normalization instances: for each target, RMSNorm
// and residual add + RMSNorm (plain and zero-centred weights) and the gated norm, each with a
// BF16 and an E4M3 output, in the decode (<= 64 tokens), middle (sm90a gated, <= 512) and
// prefill (<= 8192 tokens) mappings;
// plus sm90a alternatives the benchmark compares.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/norm/norm.hpp"

namespace netra::catalog {
namespace norm_detail {
/// The dispatch order of one operation, weight form and output format (runtime/tactics/norm.hpp
/// takes it as is): the decode instance, the middle tier where there is one
/// (contracts::norm_has_mid), the prefill instance.
template <class Target, u32 Kind, u32 Weight, u32 Fp8Out> constexpr auto tiers() {
  using decode = boost::hana::type<contracts::norm_decode<Target, Kind, Weight, Fp8Out>>;
  using prefill = boost::hana::type<contracts::norm_prefill<Target, Kind, Weight, Fp8Out>>;
  if constexpr (contracts::norm_has_mid<Target, Kind>)
    return boost::hana::tuple<decode, boost::hana::type<contracts::norm_mid<Target, Kind, Weight, Fp8Out>>, prefill>{};
  else return boost::hana::tuple<decode, prefill>{};
}
template <class Target, u32 Kind, u32 Weight, u32 Fp8Out> using tiers_of = decltype(tiers<Target, Kind, Weight, Fp8Out>());
template <class Target>
constexpr auto of_target = boost::hana::flatten(boost::hana::make_tuple(
    tiers_of<Target, 0, 0, 0>{}, tiers_of<Target, 0, 0, 1>{}, tiers_of<Target, 0, 1, 0>{}, tiers_of<Target, 0, 1, 1>{},  // rms
    tiers_of<Target, 1, 0, 0>{}, tiers_of<Target, 1, 0, 1>{}, tiers_of<Target, 1, 1, 0>{}, tiers_of<Target, 1, 1, 1>{},  // add_rms
    tiers_of<Target, 2, 0, 0>{}, tiers_of<Target, 2, 0, 1>{}));                                                // gated
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
/// The sm90a gated norm with 16 heads per block over 16 threads each up to 8192 tokens (the
/// prefill mapping before 16 heads over 8 threads each, SlicesPerThread 2, took the prefill tier
/// above 512 tokens: the middle tier's mapping; compared at 512 and 8192; lab/norm/README.md).
inline constexpr auto norm_gated_alternatives =
    boost::hana::tuple_t<contracts::gated_rms_norm<sm90a, 0, 8192, 16>, contracts::gated_rms_norm<sm90a, 1, 8192, 16>>;

/// The gated decode mapping with other values of contract field Chain (the same bits), compared
/// with the served forms at 1, 16 and 64 tokens (sm90a, the H200 at 192a5da, lab/norm/README.md:
/// norm_decode BF16 17, FP8 6, FP8 up to 16 tokens norm_decode16, Chain 14): the other of Chain 0
/// and BF16 17 / FP8 6 (sm90a: 0, the forms served before; gfx950, which serves 0: 17 / 6), FP8 14
/// (its 64-token time, above norm_decode16's range), FP8 23 (the reciprocals from the target's
/// reciprocal instruction: the fastest at 1 token, slower from 16 tokens).
template <class Target, u32 Fp8Out, u32 Chain> using gated_decode_chain = contracts::gated_rms_norm<Target, Fp8Out, 64, Target::wave_size / 16, 0, 0, Chain>;
template <class Target, u32 Fp8Out>
inline constexpr u32 compared_chain = contracts::norm_decode<Target, 2, 0, Fp8Out>::chain == 0 ? (Fp8Out == 1 ? 6 : 17) : 0;
template <class Target>
constexpr auto norm_gated_chain_of = boost::hana::tuple_t<gated_decode_chain<Target, 0, compared_chain<Target, 0>>, gated_decode_chain<Target, 1, compared_chain<Target, 1>>,
                                                          gated_decode_chain<Target, 1, 14>, gated_decode_chain<Target, 1, 23>>;
/// The sm90a gated FP8 decode (served: 8 heads per block, four warps) beside one warp of 2 heads
/// per block (served before; its successor released at start up to 64 tokens) and 16 heads.
inline constexpr auto norm_gated_fp8_decode_rows =
    boost::hana::tuple_t<gated_decode_chain<sm90a, 1, 6>, contracts::gated_rms_norm<sm90a, 1, 64, 16, 0, 0, 6>>;
inline constexpr auto norm_gated_chain =
    boost::hana::flatten(boost::hana::make_tuple(norm_gated_chain_of<gfx950>, norm_gated_chain_of<sm90a>, norm_gated_fp8_decode_rows));

/// The rms / add_rms FP8 forms beside the served ones with another value of contract field Chain
/// (the same bits), compared at 1, 16, 64, 512 and 8192 tokens (netra-bench-norm --prefill-chain):
/// on sm90a, where 50 is served (contracts::quarter_chain), Chain 0 (four butterflies and
/// quantizers per lane, served before) and 32 (bit 32 with the quantizer's IEEE division) of the
/// prefill mapping and of the rms decode mapping; on gfx950, where 0 is served, 32 and 50 of the
/// prefill mapping (audited only).
template <class Target, u32 Kind, u32 MaxTokens, u32 Chain>
using quarter_groups = contracts::norm<Target, Kind, 0, 1, MaxTokens, Target::wave_size < 64 ? 2 : 1, MaxTokens <= 64 || Target::wave_size < 64 ? 1 : 4, 0, 1, 0, Chain>;
template <class Target, u32 Chain>
constexpr auto quarter_groups_of = boost::hana::tuple_t<quarter_groups<Target, 0, 8192, Chain>, quarter_groups<Target, 1, 8192, Chain>>;
inline constexpr auto norm_quarter_groups = boost::hana::flatten(boost::hana::make_tuple(
    quarter_groups_of<sm90a, 0>, quarter_groups_of<sm90a, 32>, boost::hana::tuple_t<quarter_groups<sm90a, 0, 64, 0>, quarter_groups<sm90a, 0, 64, 32>>,
    quarter_groups_of<gfx950, 32>, quarter_groups_of<gfx950, 50>));

inline constexpr auto norm = boost::hana::flatten(boost::hana::make_tuple(norm_detail::of_target<gfx950>, norm_detail::of_target<sm90a>,
                                                                          boost::hana::tuple_t<contracts::norm_decode16<sm90a>>, norm_alternatives,
                                                                          norm_gated_alternatives, norm_gated_chain, norm_quarter_groups));
}  // namespace netra::catalog
