// netra/runtime/tactics/gdn.hpp — the dispatch lists of the gdn operations (host only): conv
// update, precompute, K0 verify, M16 and accepted-prefix replay. Every tactic is in the build-time
// catalog (catalog/gdn.hpp), so they come embedded in libnetra. Served: the default mapping
// (per-token inputs), GPU-verified bit for bit (tests/gpu/test_gdn_*). The replay is strict inside
// its promoted domain — the article's batch-128 contract: a replay on its target, with its state
// element type on the handle's device, of T = 12 tokens and a batch 1..128, that the contract
// refuses (a window or pool of the wrong size or layout, a misaligned view) is an error, never a
// fallback.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/gdn/conv.hpp"
#include "netra/contracts/gdn/precompute.hpp"
#include "netra/contracts/gdn/recurrent.hpp"
#include "netra/runtime/catalog/gdn.hpp"
#include "netra/runtime/tactic.hpp"

namespace netra::tactics {

template <class Contract> struct gdn_replay_domain {
  static bool contains(const gdn_recurrent_signature& s) {
    const dtype storage = Contract::state_storage == gdn::state_storage::fp32 ? dtype::f32 : dtype::bf16;
    return s.target == Contract::target::id && s.state.device == s.device && s.state.type == storage && s.batch() >= 1 &&
           s.batch() <= Contract::max_batch && s.q.extent(0) == s.batch() * Contract::tokens;
  }
};
template <class C> using gdn_replay_strict = strict<C, gdn_replay_domain<C>>;

/// The conv update: every catalogued conv instance (both layouts, windows or final state).
inline constexpr auto gdn_conv = boost::hana::flatten(boost::hana::make_tuple(catalog::gdn_detail::conv_set<gfx950>{}, catalog::gdn_detail::conv_set<sm90a>{}));
inline constexpr auto gdn_precompute = boost::hana::tuple_t<contracts::gdn_precompute<gfx950, 128, 12>, contracts::gdn_precompute<gfx950, 1, 16>,
                                                            contracts::gdn_precompute<sm90a, 128, 12>, contracts::gdn_precompute<sm90a, 1, 16>>;
inline constexpr auto gdn_verify = boost::hana::tuple_t<contracts::gdn_k0<gfx950, gdn::state_storage::fp32>, contracts::gdn_k0<gfx950, gdn::state_storage::bf16>,
                                                        contracts::gdn_k0<sm90a, gdn::state_storage::fp32>, contracts::gdn_k0<sm90a, gdn::state_storage::bf16>>;
inline constexpr auto gdn_m16 = boost::hana::tuple_t<contracts::gdn_m16<gfx950, gdn::state_storage::fp32>, contracts::gdn_m16<gfx950, gdn::state_storage::bf16>,
                                                     contracts::gdn_m16<sm90a, gdn::state_storage::fp32>, contracts::gdn_m16<sm90a, gdn::state_storage::bf16>>;
inline constexpr auto gdn_replay =
    boost::hana::tuple_t<gdn_replay_strict<contracts::gdn_replay<gfx950, gdn::state_storage::fp32>>, gdn_replay_strict<contracts::gdn_replay<gfx950, gdn::state_storage::bf16>>,
                         gdn_replay_strict<contracts::gdn_replay<sm90a, gdn::state_storage::fp32>>, gdn_replay_strict<contracts::gdn_replay<sm90a, gdn::state_storage::bf16>>>;

}  // namespace netra::tactics
