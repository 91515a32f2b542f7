// netra/runtime/catalog/gdn.hpp — built-in gated delta net instances (issue 27): the M12 conv
// update (both state layouts, with and without windows), precompute, the K0 verify core, the M16
// core and the accepted-prefix replay, FP32 and BF16 state storage, for both targets, with the
// default mapping (per-token inputs; value block 16 on gfx950, 8 on sm90a). Alternatives the
// benchmark compares: value block 16 on sm90a, and the token block staged in LDS (Staging 1; 4 waves
// per workgroup on sm90a).
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/gdn/conv.hpp"
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
}  // namespace gdn_detail

inline constexpr auto gdn = boost::hana::flatten(boost::hana::make_tuple(
    gdn_detail::conv_set<gfx950>{}, gdn_detail::core_set<gfx950>{}, gdn_detail::conv_set<sm90a>{}, gdn_detail::core_set<sm90a>{},
    boost::hana::tuple_t<contracts::gdn_k0<sm90a, gdn::state_storage::fp32, 16>, contracts::gdn_k0<sm90a, gdn::state_storage::bf16, 16>,
                         contracts::gdn_k0<gfx950, gdn::state_storage::fp32, 16, gdn::token_staging::block>,
                         contracts::gdn_k0<sm90a, gdn::state_storage::fp32, 8, gdn::token_staging::block, 4>,
                         contracts::gdn_k0<sm90a, gdn::state_storage::bf16, 8, gdn::token_staging::block, 4>,
                         contracts::gdn_m16<sm90a, gdn::state_storage::fp32, 8, gdn::token_staging::block, 4>,
                         contracts::gdn_replay<sm90a, gdn::state_storage::bf16, 8, gdn::token_staging::block, 4>>));
}  // namespace netra::catalog
