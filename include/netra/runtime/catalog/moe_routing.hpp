// netra/runtime/catalog/moe_routing.hpp — built-in MoE routing instances (issue 4 §1-3):
// act_quant (decode R = 9 and batches up to R = 4608), the router and the shared-expert gate.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/moe/act_quant.hpp"
#include "netra/contracts/moe/router.hpp"
#include "netra/contracts/moe/shared_gate.hpp"

namespace netra::catalog {
/// act_quant: the decode contract and the batch contract for both targets. The H200 measured the
/// batch default <4608, 1, 4> fastest of every sm90a mapping tried (<4608, 2, 8> and <4608, 4, 16>
/// on a7d43ea, <4608, 2, 4> on 70c5e6e: 8.16 against 6.59 us at R = 4608), so none is kept.
inline constexpr auto moe_act_quant =
    boost::hana::tuple_t<contracts::moe_act_quant_decode<gfx950>, contracts::moe_act_quant_decode<sm90a>,
                         contracts::moe_act_quant_batch<gfx950>, contracts::moe_act_quant_batch<sm90a>>;
/// The router: exact FP32 order up to 32 tokens (decode), BF16 matrix units up to 128 tokens, for
/// both targets; the decode block's exact router that also appends the shared gate (slot 8; on
/// sm90a one cluster kernel), for both targets; plus, on sm90a, what the benchmark measures them
/// against: the block's router as two kernels, the decode router as one cluster kernel, and the
/// exact tactic at 128 tokens (where the exact order stops paying; tactics/moe_routing.hpp); and
/// the block's router for 17..768 tokens (matrix tactic, shared gate appended), both targets.
inline constexpr auto moe_router =
    boost::hana::tuple_t<contracts::moe_router_exact<gfx950>, contracts::moe_router_exact<sm90a>,
                         contracts::moe_router_matrix<gfx950>, contracts::moe_router_matrix<sm90a>,
                         contracts::moe_router_exact_shared_gate<gfx950>, contracts::moe_router_exact_shared_gate<sm90a>,
                         contracts::moe_router<sm90a, router_tactic::exact_fp32, 16, 1>, contracts::moe_router<sm90a, router_tactic::exact_fp32, 32, 0, 16>,
                         contracts::moe_router<sm90a, router_tactic::exact_fp32, 128>,
                         contracts::moe_router_matrix_shared_gate<gfx950>, contracts::moe_router_matrix_shared_gate<sm90a>>;
/// The shared-expert gate with route append, up to 512 tokens.
inline constexpr auto moe_shared_gate =
    boost::hana::tuple_t<contracts::moe_shared_gate_reference<gfx950>, contracts::moe_shared_gate_reference<sm90a>>;
inline constexpr auto moe_routing = boost::hana::concat(boost::hana::concat(moe_act_quant, moe_router), moe_shared_gate);
}  // namespace netra::catalog
