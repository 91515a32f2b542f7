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
#include "netra/contracts/gdn/decode.hpp"
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

/// sm90a mappings chosen by measurement (bench/results/gdn_h200.json, H200, graph-replayed; the
/// compared forms and their times are in docs/kernels/gdn.md), each ahead of the default it
/// replaces, which still serves what it refuses (an output view aligned to 2 bytes only, for the K0
/// map's 4-byte stores). K0: half-head workgroups of 4 warps, 2 columns per lane, each wave's state
/// block through LDS (Staging 3); M16: the staged 8-column blocks of 4 warps with FusedDots and the
/// state through LDS; conv (channel-major, with and without windows; tap-major with windows): 4
/// channels and 4 tokens a thread (3 token groups; 2 or 6 per batch range, below) with the next
/// token's x in flight, 4 workgroups a SM, the lean SiLU (Silu 1) with its reciprocal seeded by the
/// instruction, channel-major windows stored streaming; replay (strict, both in the promoted
/// domain): quarter-head workgroups of 2 warps (8 a SM) with the state through LDS, no prefetch
/// (the every-B and graph protocol run on the GPU for both storages); decode (T 1): the default
/// map (its state block through LDS on sm90a) at every B.
namespace measured {
template <u32 S> using k0 = contracts::gdn_k0<sm90a, S, 16, gdn::token_staging::block_and_state, 4, 2>;
template <u32 S> using m16 = contracts::gdn_m16<sm90a, S, 8, gdn::token_staging::block_and_state, 4, 1, 1>;
/// M16 with the precompute fused in (Inputs raw): admitted only for a call that carries the
/// precompute's inputs (gdn_recurrent_raw_call); the two-launch chain serves the rest.
template <u32 S> using m16_raw = contracts::gdn_m16<sm90a, S, 8, gdn::token_staging::block_and_state, 4, 1, 1, gdn::core_inputs::raw>;
template <u32 Writes, u32 Layout = gdn::conv_layout::channel_major, u32 TokenGroups = 3>
using conv = contracts::gdn_conv<sm90a, 64, 12, Layout, Writes, gdn::token_staging::next_token, 256, TokenGroups, 4, 4, gdn::conv_division::instruction_seed,
                                 Writes == gdn::conv_writes::windows && Layout == gdn::conv_layout::channel_major ? gdn::window_stores::streaming
                                                                                                                  : gdn::window_stores::plain,
                                 gdn::conv_silu_form::lean>;
template <u32 S> using replay = contracts::gdn_replay<sm90a, S, 16, gdn::token_staging::block_and_state, 2, 2>;
}  // namespace measured

/// The conv's batch ranges (H200, graph-replayed, two rounds at B 64, 32, 16, 8, 4, 2, 1:
/// bench/results/gdn_h200.json, docs/kernels/gdn.md "The conv's batch ranges"): channel-major, the
/// served map with 6 token groups (2 tokens a thread) at small B, with 2 groups (6 tokens a
/// thread) at B 64 without windows; G 3 (4 tokens a thread) elsewhere. Edges between measured
/// batches (9..15, 17..31, 33..63) are not measured.
inline constexpr i64 gdn_conv_windows_g6_max_batch = 8, gdn_conv_final_g6_max_batch = 16, gdn_conv_final_g2_min_batch = 33;
struct gdn_conv_windows_g6_batches {
  static constexpr i64 min = 1, max = gdn_conv_windows_g6_max_batch;
  static constexpr const char* rule = "<= tactics::gdn_conv_windows_g6_max_batch (8; above it G 3)";
};
struct gdn_conv_final_g6_batches {
  static constexpr i64 min = 1, max = gdn_conv_final_g6_max_batch;
  static constexpr const char* rule = "<= tactics::gdn_conv_final_g6_max_batch (16; above it G 3, from 33 G 2)";
};
struct gdn_conv_final_g2_batches {
  static constexpr i64 min = gdn_conv_final_g2_min_batch, max = measured::conv<gdn::conv_writes::final_state, gdn::conv_layout::channel_major, 2>::max_batch;
  static constexpr const char* rule = ">= tactics::gdn_conv_final_g2_min_batch (33; below it G 3, up to 16 G 6)";
};
using gdn_conv_windows_g6 = when<measured::conv<gdn::conv_writes::windows, gdn::conv_layout::channel_major, 6>, from_batch_range<gdn_conv_windows_g6_batches>>;
using gdn_conv_final_g6 = when<measured::conv<gdn::conv_writes::final_state, gdn::conv_layout::channel_major, 6>, from_batch_range<gdn_conv_final_g6_batches>>;
using gdn_conv_final_g2 = when<measured::conv<gdn::conv_writes::final_state, gdn::conv_layout::channel_major, 2>, from_batch_range<gdn_conv_final_g2_batches>>;

/// The conv update: every catalogued conv instance (both layouts, windows or final state); on
/// sm90a channel-major the batch-ranged maps ahead of the served G 3, every windows map ahead of
/// every final-state one (a final-state contract admits a call that also passes windows).
/// Decode (T = 1, contracts/gdn/decode.hpp) serves the conv, precompute and m16 (committed core)
/// operations too: the token count comes from the tensors (rows / slots), so each call admits one T.
inline constexpr auto gdn_conv = boost::hana::flatten(boost::hana::make_tuple(
    catalog::gdn_detail::conv_set<gfx950>{},
    boost::hana::tuple_t<gdn_conv_windows_g6, measured::conv<gdn::conv_writes::windows>, gdn_conv_final_g6, gdn_conv_final_g2,
                         measured::conv<gdn::conv_writes::final_state>,
                         measured::conv<gdn::conv_writes::windows, gdn::conv_layout::tap_major>>,
    catalog::gdn_detail::conv_set<sm90a>{},
    boost::hana::tuple_t<contracts::gdn_decode_conv<gfx950, gdn::conv_layout::channel_major>, contracts::gdn_decode_conv<gfx950, gdn::conv_layout::tap_major>,
                         contracts::gdn_decode_conv<sm90a, gdn::conv_layout::channel_major>, contracts::gdn_decode_conv<sm90a, gdn::conv_layout::tap_major>>));
inline constexpr auto gdn_precompute = boost::hana::tuple_t<contracts::gdn_precompute<gfx950, 128, 12>, contracts::gdn_precompute<gfx950, 1, 16>,
                                                            contracts::gdn_precompute<sm90a, 128, 12>, contracts::gdn_precompute<sm90a, 1, 16>,
                                                            contracts::gdn_decode_precompute<gfx950>, contracts::gdn_decode_precompute<sm90a>>;
inline constexpr auto gdn_verify =
    boost::hana::tuple_t<contracts::gdn_k0<gfx950, gdn::state_storage::fp32>, contracts::gdn_k0<gfx950, gdn::state_storage::bf16>,
                         measured::k0<gdn::state_storage::fp32>, measured::k0<gdn::state_storage::bf16>,
                         contracts::gdn_k0<sm90a, gdn::state_storage::fp32>, contracts::gdn_k0<sm90a, gdn::state_storage::bf16>>;
inline constexpr auto gdn_m16 = boost::hana::tuple_t<contracts::gdn_m16<gfx950, gdn::state_storage::fp32>, contracts::gdn_m16<gfx950, gdn::state_storage::bf16>,
                                                     measured::m16_raw<gdn::state_storage::fp32>, measured::m16_raw<gdn::state_storage::bf16>,
                                                     measured::m16<gdn::state_storage::fp32>, measured::m16<gdn::state_storage::bf16>,
                                                     contracts::gdn_m16<sm90a, gdn::state_storage::fp32>, contracts::gdn_m16<sm90a, gdn::state_storage::bf16>,
                                                     contracts::gdn_decode_core<gfx950, gdn::state_storage::fp32>, contracts::gdn_decode_core<gfx950, gdn::state_storage::bf16>,
                                                     contracts::gdn_decode_core<sm90a, gdn::state_storage::fp32>, contracts::gdn_decode_core<sm90a, gdn::state_storage::bf16>>;
inline constexpr auto gdn_replay =
    boost::hana::tuple_t<gdn_replay_strict<contracts::gdn_replay<gfx950, gdn::state_storage::fp32>>, gdn_replay_strict<contracts::gdn_replay<gfx950, gdn::state_storage::bf16>>,
                         gdn_replay_strict<measured::replay<gdn::state_storage::fp32>>, gdn_replay_strict<measured::replay<gdn::state_storage::bf16>>,
                         gdn_replay_strict<contracts::gdn_replay<sm90a, gdn::state_storage::fp32>>, gdn_replay_strict<contracts::gdn_replay<sm90a, gdn::state_storage::bf16>>>;

}  // namespace netra::tactics
