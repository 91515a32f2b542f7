// netra/runtime/catalog/decode_step.hpp — the instances the integrated step's decode buckets (B
// 1..128, one token per request) need beyond the verify-step catalogs: the GDN one-token decode
// (contracts/gdn/decode.hpp: conv in both state layouts, precompute, the core with FP32 and BF16
// state) and the GQA8 decode widened to batch 128 (contracts/attention/gqa8_decode_wide.hpp), on
// both targets.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/attention/gqa8_decode_wide.hpp"
#include "netra/contracts/gdn/decode.hpp"

namespace netra::catalog {
namespace decode_step_detail {
template <class T>
using set = boost::hana::tuple<boost::hana::type<contracts::gdn_decode_conv<T, gdn::conv_layout::channel_major>>,
                               boost::hana::type<contracts::gdn_decode_conv<T, gdn::conv_layout::tap_major>>,
                               boost::hana::type<contracts::gdn_decode_precompute<T>>,
                               boost::hana::type<contracts::gdn_decode_core<T, gdn::state_storage::fp32>>,
                               boost::hana::type<contracts::gdn_decode_core<T, gdn::state_storage::bf16>>,
                               boost::hana::type<contracts::attention_gqa8_decode_wide<T>>>;
}  // namespace decode_step_detail

inline constexpr auto decode_step = boost::hana::flatten(boost::hana::make_tuple(decode_step_detail::set<gfx950>{}, decode_step_detail::set<sm90a>{}));
}  // namespace netra::catalog
