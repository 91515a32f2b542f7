// netra/runtime/catalog/targets.hpp — built-in instances for gfx942 (MI300X, CDNA3, wave64) and
// gfx1151 (RDNA 3.5, wave32): the contracts that need no matrix units, each with its default
// mapping — argmax, act_quant (decode, batch), the shared-expert gate, the norms (every kind, weight form and output of
// norm.hpp's catalog), the GDN causal conv and precompute — and the MoE router: its exact tactic
// on both, its matrix tactic on gfx1151 (WMMA) and gfx942 (BF16 MFMA) — and the decode gate_up and down on gfx942 (MFMA, FNUZ) — and the GQA8
// decode on gfx942 (BF16 MFMA over an E4M3FNUZ cache). Built and audited only (no such GPU here:
// docs/target-notes.md, gfx942 / gfx1151).
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/argmax.hpp"
#include "netra/contracts/attention/gqa8_paged.hpp"
#include "netra/contracts/gdn/conv.hpp"
#include "netra/contracts/gdn/precompute.hpp"
#include "netra/contracts/moe/act_quant.hpp"
#include "netra/contracts/moe/expert_down.hpp"
#include "netra/contracts/moe/expert_gate_up.hpp"
#include "netra/contracts/moe/router.hpp"
#include "netra/contracts/moe/shared_gate.hpp"
#include "netra/runtime/catalog/gdn.hpp"
#include "netra/runtime/catalog/norm.hpp"

namespace netra::catalog {
namespace targets_detail {
template <class T>
constexpr auto vector_contracts = boost::hana::flatten(boost::hana::make_tuple(
    boost::hana::tuple_t<contracts::argmax_reference<T>, contracts::moe_act_quant_decode<T>, contracts::moe_act_quant_batch<T>,
                         contracts::moe_shared_gate_reference<T>, contracts::gdn_precompute<T, 128, 12>, contracts::gdn_precompute<T, 1, 16>>,
    gdn_detail::conv_set<T>{}, norm_detail::of_target<T>));
/// The router's exact tactic (no matrix units), both targets.
template <class T> constexpr auto exact_router_contracts = boost::hana::tuple_t<contracts::moe_router_exact<T>, contracts::moe_router_exact_shared_gate<T>>;
/// Matrix contracts: the router's matrix tactic on gfx1151's WMMA and gfx942's BF16 MFMA; the
/// decode gate_up and the fused-act_quant down on gfx942's MFMA with E4M3FNUZ weights.
constexpr auto wmma_contracts = boost::hana::tuple_t<contracts::moe_router_matrix<gfx1151>, contracts::moe_router_matrix_shared_gate<gfx1151>>;
constexpr auto mfma_bf16_contracts = boost::hana::tuple_t<contracts::moe_router_matrix<gfx942>, contracts::moe_router_matrix_shared_gate<gfx942>>;
constexpr auto mfma_fnuz_contracts = boost::hana::tuple_t<contracts::moe_expert_gate_up_decode<gfx942>, contracts::moe_expert_down_fused_decode<gfx942>>;
/// GQA8 decode on gfx942 (page size 1 and 16): v_mfma_f32_16x16x16_bf16 over an E4M3FNUZ KV cache;
/// K/V straight into registers (Stages 0, as sm90a's served decode: gfx950's LDS ring needs 64 KiB,
/// gfx942's whole LDS).
constexpr auto mfma_attention_contracts =
    boost::hana::tuple_t<contracts::attention_gqa8<gfx942, 0, 1, 1, 2, 0, 64, 512>, contracts::attention_gqa8<gfx942, 0, 1, 16, 2, 0, 64, 512>>;
}  // namespace targets_detail

inline constexpr auto audit_only_targets = boost::hana::flatten(boost::hana::make_tuple(
    targets_detail::vector_contracts<gfx942>, targets_detail::vector_contracts<gfx1151>, targets_detail::exact_router_contracts<gfx942>,
    targets_detail::exact_router_contracts<gfx1151>, targets_detail::wmma_contracts, targets_detail::mfma_bf16_contracts, targets_detail::mfma_fnuz_contracts,
    targets_detail::mfma_attention_contracts));
}  // namespace netra::catalog
