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
#include "netra/runtime/catalog/norm.hpp"
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
/// A target's catalogued tiers (catalog::norm_detail::of_target: per operation, weight form and
/// output format the decode instance, the middle tier where there is one, the prefill instance),
/// each strict in its domain.
template <class Target>
constexpr auto of_target = boost::hana::transform(catalog::norm_detail::of_target<Target>, [](auto type) {
  return boost::hana::type_c<norm_strict<typename decltype(type)::type>>;
});
}  // namespace norm_detail

/// sm90a's gated FP8 norm up to 16 tokens first (norm_decode16), then the tiers.
inline constexpr auto norm = boost::hana::flatten(boost::hana::make_tuple(norm_detail::of_target<gfx950>,
                                                                          boost::hana::tuple_t<norm_strict<contracts::norm_decode16<sm90a>>>,
                                                                          norm_detail::of_target<sm90a>));

}  // namespace netra::tactics
