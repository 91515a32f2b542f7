// netra/runtime/catalog/gdn.hpp — built-in gated delta net instances (issue 27): the M12 conv
// update (both state layouts, with and without windows), precompute, the K0 verify core, the M16
// core and the accepted-prefix replay, FP32 and BF16 state storage, for both targets, with the
// default mapping (per-token inputs; value block 16 on gfx950, 8 on sm90a). Alternatives the
// benchmark compares: value block 16 on sm90a, the token block staged in LDS (Staging 1; 4 waves
// per workgroup on sm90a), and the sm90a mapping candidates below.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/gdn/conv.hpp"
#include "netra/contracts/gdn/decode.hpp"
#include "netra/contracts/gdn/precompute.hpp"
#include "netra/contracts/gdn/recurrent.hpp"

namespace netra::catalog {
namespace gdn_detail {
namespace cl = gdn::conv_layout;
namespace cw = gdn::conv_writes;
namespace ss = gdn::state_storage;
template <class T>
using conv_set = boost::hana::tuple<boost::hana::type<contracts::gdn_conv<T, 64, 12, cl::channel_major, cw::windows>>,
                                    boost::hana::type<contracts::gdn_conv<T, 64, 12, cl::tap_major, cw::windows>>,
                                    boost::hana::type<contracts::gdn_conv<T, 64, 12, cl::channel_major, cw::final_state>>,
                                    boost::hana::type<contracts::gdn_conv<T, 64, 12, cl::tap_major, cw::final_state>>,
                                    boost::hana::type<contracts::gdn_conv<T, 1, 16, cl::channel_major, cw::final_state>>>;
template <class T>
using core_set = boost::hana::tuple<boost::hana::type<contracts::gdn_precompute<T, 128, 12>>, boost::hana::type<contracts::gdn_precompute<T, 1, 16>>,
                                    boost::hana::type<contracts::gdn_k0<T, ss::fp32>>, boost::hana::type<contracts::gdn_k0<T, ss::bf16>>,
                                    boost::hana::type<contracts::gdn_m16<T, ss::fp32>>, boost::hana::type<contracts::gdn_m16<T, ss::bf16>>,
                                    boost::hana::type<contracts::gdn_replay<T, ss::fp32>>, boost::hana::type<contracts::gdn_replay<T, ss::bf16>>>;
/// sm90a mappings besides the defaults (the same bits), measured by the benchmark: conv
/// (Staging, Threads, TokenGroups, WorkgroupsPerProcessor, ChannelsPerThread, Division,
/// WindowStores, Silu), channel-major: with windows (1, 256, 2), 6 preloaded tokens a thread, and
/// (2, 256, 3, 3), 4 tokens a thread with the next token's x in flight at 3 workgroups a SM (the
/// maps shipped before); both forms: 4 channels a thread at 4 workgroups a SM with SiLU's
/// reciprocal seeded by the instruction, 4 tokens a thread (2, 256, 3, 4, 4, 1; with windows
/// streamed, WindowStores 1: shipped), 6 tokens (2, 256, 2, ...: the fastest at B 64) and 2 tokens
/// (2, 256, 6, ...: the fastest at B 1); tap-major with windows (2, 256, 3, 4, 4, 1, 0: shipped for
/// that layout before); the shipped maps with the lean SiLU (Silu 1: fewer selects; dispatched),
/// and G 6 and G 2 with it (channel-major, windows streamed: the batch-ranged dispatch's
/// candidates), and on gfx950 the default map with it (audited, gdn below); cores
/// (ValueBlock, Staging, Waves, Columns): whole-head workgroups with 2 columns
/// per lane (16, 1, 8, 2) and half heads (16, 1, 4, 2) for K0, (16, 1, 2, 2) for M16, the whole-head
/// replay. The candidates measured and not kept are in lab/ledger.json (gdn rows).
template <u32 Writes>
using conv_candidates =
    conditional_t<Writes == cw::windows, boost::hana::tuple<boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 1, 256, 2>>,
                                                            boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 3, 3>>,
                                                            boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 3, 4, 4, 1, 1>>,
                                                            boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 2, 4, 4, 1, 0>>,
                                                            boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 6, 4, 4, 1, 0>>,
                                                            boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::tap_major, Writes, 2, 256, 3, 4, 4, 1, 0>>,
                                                            boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 3, 4, 4, 1, 1, 1>>,
                                                            boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::tap_major, Writes, 2, 256, 3, 4, 4, 1, 0, 1>>,
                                                            boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 6, 4, 4, 1, 1, 1>>,
                                                            boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 2, 4, 4, 1, 1, 1>>>,
                  boost::hana::tuple<boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 3, 3>>,
                                     boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 3, 4, 4, 1, 0>>,
                                     boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 2, 4, 4, 1, 0>>,
                                     boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 6, 4, 4, 1, 0>>,
                                     boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 3, 4, 4, 1, 0, 1>>,
                                     boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 6, 4, 4, 1, 0, 1>>,
                                     boost::hana::type<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, Writes, 2, 256, 2, 4, 4, 1, 0, 1>>>>;
/// Staging 3 (block_and_state): the same maps with each wave's state block copied through LDS.
template <u32 S>
using k0_candidates = boost::hana::tuple<boost::hana::type<contracts::gdn_k0<sm90a, S, 16, 1, 8, 2>>, boost::hana::type<contracts::gdn_k0<sm90a, S, 16, 1, 4, 2>>,
                                         boost::hana::type<contracts::gdn_k0<sm90a, S, 16, 3, 8, 2>>, boost::hana::type<contracts::gdn_k0<sm90a, S, 16, 3, 4, 2>>>;
/// M16 with FusedDots (token t's q dot in token t + 1's decay pass) on the staged 8-column map.
/// Inputs raw (gdn::core_inputs::raw: the precompute fused into the core's staging, one launch
/// instead of two): the shipped M16 map on sm90a; on gfx950 its staged map (Staging 1), audited.
template <u32 S>
using m16_candidates = boost::hana::tuple<boost::hana::type<contracts::gdn_m16<sm90a, S, 16, 1, 2, 2>>, boost::hana::type<contracts::gdn_m16<sm90a, S, 8, 1, 4, 1, 1>>,
                                          boost::hana::type<contracts::gdn_m16<sm90a, S, 8, 3, 4, 1, 1>>,
                                          boost::hana::type<contracts::gdn_m16<sm90a, S, 8, 3, 4, 1, 1, gdn::core_inputs::raw>>,
                                          boost::hana::type<contracts::gdn_m16<gfx950, S, 16, 1, 4, 1, 1, gdn::core_inputs::raw>>>;
/// The whole-head replay, and with PrefetchAhead 264 (two resident workgroups on each of the H200's
/// 132 processors: the state block and token rows of the workgroup one resident wave later);
/// quarter heads with the state through LDS (16, 3, 2, 2: eight 2-warp workgroups a SM).
template <u32 S>
using replay_candidates = boost::hana::tuple<boost::hana::type<contracts::gdn_replay<sm90a, S, 16, 1, 8, 2>>, boost::hana::type<contracts::gdn_replay<sm90a, S, 16, 1, 8, 2, 264>>,
                                             boost::hana::type<contracts::gdn_replay<sm90a, S, 16, 3, 8, 2>>, boost::hana::type<contracts::gdn_replay<sm90a, S, 16, 3, 8, 2, 264>>,
                                             boost::hana::type<contracts::gdn_replay<sm90a, S, 16, 3, 2, 2>>>;
/// The one-token decode core (contracts/gdn/decode.hpp, B 1..128; its default map is in
/// catalog/decode_step.hpp), (ValueBlock, Staging, Waves, Columns): half heads of 4 warps with 2
/// columns a lane (16, 1, 4, 2) and whole heads (16, 1, 8, 2).
template <u32 S>
using decode_candidates =
    boost::hana::tuple<boost::hana::type<contracts::gdn_decode_core<sm90a, S, 16, 1, 4, 2>>, boost::hana::type<contracts::gdn_decode_core<sm90a, S, 16, 1, 8, 2>>>;
}  // namespace gdn_detail

inline constexpr auto gdn = boost::hana::flatten(boost::hana::make_tuple(
    gdn_detail::conv_set<gfx950>{}, gdn_detail::core_set<gfx950>{}, gdn_detail::conv_set<sm90a>{}, gdn_detail::core_set<sm90a>{},
    boost::hana::tuple_t<contracts::gdn_k0<sm90a, gdn::state_storage::fp32, 16>, contracts::gdn_k0<sm90a, gdn::state_storage::bf16, 16>,
                         contracts::gdn_k0<gfx950, gdn::state_storage::fp32, 16, gdn::token_staging::block>,
                         contracts::gdn_k0<sm90a, gdn::state_storage::fp32, 8, gdn::token_staging::block, 4>,
                         contracts::gdn_k0<sm90a, gdn::state_storage::bf16, 8, gdn::token_staging::block, 4>,
                         contracts::gdn_m16<sm90a, gdn::state_storage::fp32, 8, gdn::token_staging::block, 4>,
                         contracts::gdn_replay<sm90a, gdn::state_storage::bf16, 8, gdn::token_staging::block, 4>,
                         contracts::gdn_conv<gfx950, 64, 12, gdn::conv_layout::channel_major, gdn::conv_writes::windows, 0, 256, 1, 0, 8, 0, 0, 1>>,
    gdn_detail::conv_candidates<gdn::conv_writes::windows>{}, gdn_detail::conv_candidates<gdn::conv_writes::final_state>{},
    gdn_detail::k0_candidates<gdn::state_storage::fp32>{}, gdn_detail::k0_candidates<gdn::state_storage::bf16>{},
    gdn_detail::m16_candidates<gdn::state_storage::fp32>{}, gdn_detail::m16_candidates<gdn::state_storage::bf16>{},
    gdn_detail::replay_candidates<gdn::state_storage::fp32>{}, gdn_detail::replay_candidates<gdn::state_storage::bf16>{},
    gdn_detail::decode_candidates<gdn::state_storage::fp32>{}, gdn_detail::decode_candidates<gdn::state_storage::bf16>{}));
}  // namespace netra::catalog
