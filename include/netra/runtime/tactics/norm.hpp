// netra/runtime/tactics/norm.hpp — the dispatch list of the normalization family (host only):
// for each target, each operation (rms, add_rms, gated), weight form and output format, the
// decode instance (<= 64 tokens: one row per workgroup), the middle tier where there is one
// (sm90a gated, <= 512 tokens: norm_mid), then the prefill instance (<= 8192 tokens), on sm90a
// the gated FP8 norm's <= 16-token instance before its tiers (norm_decode16);
// dispatch takes the first that admits the call, so decode sizes get the decode mapping
// (bench/results/norm_h200.json's diagnostics compare both). Every instance is strict inside its
// promoted domain: a call on its target and device with bfloat16 x of its width, its operation,
// weight form and output format, and a token count it serves, that does not match its ABI (a
// stride, an alignment, a missing or too-small tensor, eps) raises instead of falling back.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/norm/norm.hpp"
#include "netra/runtime/tactic.hpp"

namespace netra::tactics {

template <class Contract> struct norm_domain {
  static bool contains(const norm_signature& s) {
    return s.target == Contract::target::id && s.x.device == s.device && s.x.type == dtype::bf16 && s.x.rank == 2 &&
           s.x.shape[1] == Contract::cols && s.kind == Contract::kind && s.weight_form == Contract::weight_form &&
           s.fp8_out == Contract::fp8_out && s.tokens() >= 1 && s.tokens() <= Contract::max_tokens;
  }
};
template <class Contract> using norm_strict = strict<Contract, norm_domain<Contract>>;

namespace norm_detail {
/// The decode instance, the middle tier where there is one (contracts::norm_has_mid), the prefill instance.
template <class Target, u32 Kind, u32 Weight, u32 Fp8Out> constexpr auto tiers() {
  using decode = boost::hana::type<norm_strict<contracts::norm_decode<Target, Kind, Weight, Fp8Out>>>;
  using prefill = boost::hana::type<norm_strict<contracts::norm_prefill<Target, Kind, Weight, Fp8Out>>>;
  if constexpr (contracts::norm_has_mid<Target, Kind>)
    return boost::hana::tuple<decode, boost::hana::type<norm_strict<contracts::norm_mid<Target, Kind, Weight, Fp8Out>>>, prefill>{};
  else return boost::hana::tuple<decode, prefill>{};
}
template <class Target, u32 Kind, u32 Weight, u32 Fp8Out> using pair = decltype(tiers<Target, Kind, Weight, Fp8Out>());
template <class Target>
constexpr auto of_target = boost::hana::flatten(boost::hana::make_tuple(
    pair<Target, 0, 0, 0>{}, pair<Target, 0, 0, 1>{}, pair<Target, 0, 1, 0>{}, pair<Target, 0, 1, 1>{}, pair<Target, 1, 0, 0>{},
    pair<Target, 1, 0, 1>{}, pair<Target, 1, 1, 0>{}, pair<Target, 1, 1, 1>{}, pair<Target, 2, 0, 0>{}, pair<Target, 2, 0, 1>{}));
}  // namespace norm_detail

/// sm90a's gated FP8 norm up to 16 tokens first (norm_decode16), then the pairs.
inline constexpr auto norm = boost::hana::flatten(boost::hana::make_tuple(norm_detail::of_target<gfx950>,
                                                                          boost::hana::tuple_t<norm_strict<contracts::norm_decode16<sm90a>>>,
                                                                          norm_detail::of_target<sm90a>));

}  // namespace netra::tactics
