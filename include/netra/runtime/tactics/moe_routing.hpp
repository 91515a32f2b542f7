// netra/runtime/tactics/moe_routing.hpp — the dispatch lists of the MoE routing operations (host
// only): act_quant, the router and the shared-expert gate. Every tactic is in the build-time
// catalog (catalog/moe_routing.hpp), so they come embedded in libnetra. Each is strict inside its
// promoted domain: a call on its target with the model's sizes and a row / token count it serves
// that the contract refuses (a misaligned or null pointer, a bad stride) is an error, never a
// silent fallback.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/moe/act_quant.hpp"
#include "netra/contracts/moe/router.hpp"
#include "netra/contracts/moe/shared_gate.hpp"
#include "netra/runtime/tactic.hpp"

namespace netra::tactics {

template <class Contract> struct moe_act_quant_domain {
  static bool contains(const moe_act_quant_signature& s) {
    return s.target == Contract::target::id && s.cols == Contract::cols && s.rows >= 1 && s.rows <= Contract::max_rows;
  }
};
template <class Contract> struct moe_router_domain {
  static bool contains(const moe_router_signature& s) {
    return s.target == Contract::target::id && s.hidden_size == Contract::hidden_size && s.experts == Contract::experts && s.tokens >= 1 &&
           s.tokens <= Contract::max_tokens;
  }
};
template <class Contract> struct moe_shared_gate_domain {
  static bool contains(const moe_shared_gate_signature& s) {
    return s.target == Contract::target::id && s.hidden_size == Contract::hidden_size && s.tokens >= 1 && s.tokens <= Contract::max_tokens;
  }
};
template <class C> using moe_act_quant_strict = strict<C, moe_act_quant_domain<C>>;
template <class C> using moe_router_strict = strict<C, moe_router_domain<C>>;
template <class C> using moe_shared_gate_strict = strict<C, moe_shared_gate_domain<C>>;

/// act_quant: the decode contract (R <= 9: one token), then the batch contract (R <= 4608).
inline constexpr auto moe_act_quant =
    boost::hana::tuple_t<moe_act_quant_strict<contracts::moe_act_quant_decode<gfx950>>, moe_act_quant_strict<contracts::moe_act_quant_decode<sm90a>>,
                         moe_act_quant_strict<contracts::moe_act_quant_batch<gfx950>>, moe_act_quant_strict<contracts::moe_act_quant_batch<sm90a>>>;

/// router: the exact FP32 tactic (bitwise) first, then the BF16 matrix tactic (bounded; it would
/// admit fewer tokens, but the exact tactic comes first). sm90a: exact for 1..128 tokens — on the
/// H200 (revision 70c5e6e, graph-replayed) it was as fast or faster than the matrix tactic at every
/// measured M (32: 5.93 vs 6.06 us, 64: 7.96 vs 8.53, 128: 13.8 vs 14.3), so the matrix tactic
/// serves no sm90a call; gfx950 (not measured): exact for 1..32, matrix for 33..128.
inline constexpr auto moe_router =
    boost::hana::tuple_t<moe_router_strict<contracts::moe_router_exact<gfx950>>,
                         moe_router_strict<contracts::moe_router<sm90a, router_tactic::exact_fp32, 128>>,
                         moe_router_strict<contracts::moe_router_matrix<gfx950>>, moe_router_strict<contracts::moe_router_matrix<sm90a>>>;

/// shared-expert gate with route append: 1..512 tokens.
inline constexpr auto moe_shared_gate = boost::hana::tuple_t<moe_shared_gate_strict<contracts::moe_shared_gate_reference<gfx950>>,
                                                             moe_shared_gate_strict<contracts::moe_shared_gate_reference<sm90a>>>;

}  // namespace netra::tactics
