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

/// The promoted domains: a call on the contract's target, with its input's element type on the
/// handle's device, the model's sizes and a row / token count it serves. Inside, a refused tensor
/// (an output too small, a wrong stride, a misaligned view) is an error.
template <class Contract> struct moe_act_quant_domain {
  static bool contains(const moe_act_quant_signature& s) {
    return s.target == Contract::target::id && s.in.device == s.device && s.in.type == dtype::bf16 && s.cols() == Contract::cols &&
           s.rows() >= 1 && s.rows() <= Contract::max_rows;
  }
};
inline bool moe_routing_call_in(const moe_routing_call& s, target_id target, i64 hidden_size, i64 max_tokens) {
  return s.target == target && s.hidden.device == s.device && s.hidden.type == dtype::bf16 && s.hidden_size() == hidden_size && s.tokens() >= 1 &&
         s.tokens() <= max_tokens;
}
template <class Contract> struct moe_router_domain {
  static bool contains(const moe_router_signature& s) {
    return moe_routing_call_in(s, Contract::target::id, Contract::hidden_size, Contract::max_tokens) && s.experts() == Contract::experts;
  }
};
template <class Contract> struct moe_shared_gate_domain {
  static bool contains(const moe_shared_gate_signature& s) {
    return moe_routing_call_in(s, Contract::target::id, Contract::hidden_size, Contract::max_tokens);
  }
};
template <class C> using moe_act_quant_strict = strict<C, moe_act_quant_domain<C>>;
template <class C> using moe_router_strict = strict<C, moe_router_domain<C>>;
template <class C> using moe_shared_gate_strict = strict<C, moe_shared_gate_domain<C>>;

/// act_quant: the decode contract (R <= 9: one token), then the batch contract (R <= 4608).
inline constexpr auto moe_act_quant =
    boost::hana::tuple_t<moe_act_quant_strict<contracts::moe_act_quant_decode<gfx950>>, moe_act_quant_strict<contracts::moe_act_quant_decode<sm90a>>,
                         moe_act_quant_strict<contracts::moe_act_quant_batch<gfx950>>, moe_act_quant_strict<contracts::moe_act_quant_batch<sm90a>>>;

/// router: the exact FP32 tactic (bitwise, 1..32 tokens), then the BF16 matrix tactic (bounded,
/// 33..128 tokens; it would admit fewer, but the exact tactic comes first). H200, revision 14a9a73,
/// graph-replayed: exact 4.53 / 4.78 / 5.88 us at M = 1 / 16 / 32, matrix 4.67 / 5.21 / 5.57; at 64
/// and 128 the exact order (the <0, 128> instance) takes 7.91 and 13.57 us, matrix 5.83 and 7.57.
/// The exact tactic stays the decode choice up to 32 tokens (bitwise, within 0.3 us of matrix).
/// At ecd7995 (one-token passes for M = 1): exact 3.98 / 5.04 / 5.89 us at M = 1 / 16 / 32; its
/// one-kernel cluster mapping (Cluster 16) 3.86 / 5.16 / 9.74, so it is not listed.
inline constexpr auto moe_router =
    boost::hana::tuple_t<moe_router_strict<contracts::moe_router_exact<gfx950>>, moe_router_strict<contracts::moe_router_exact<sm90a>>,
                         moe_router_strict<contracts::moe_router_matrix<gfx950>>, moe_router_strict<contracts::moe_router_matrix<sm90a>>>;

/// The block's router: slots 0..7 and the shared gate's slot 8 in one call. 1..16 tokens: the
/// exact tactic (bitwise; on sm90a one cluster kernel); 17..768 (the grouped experts' range): the
/// matrix tactic (bounded; the exact order's FP32 FMA chains grow with M: at 128 tokens 13.57
/// against 7.57 us on the H200, revision 14a9a73), first match wins.
inline constexpr auto moe_block_router = boost::hana::tuple_t<moe_router_strict<contracts::moe_router_exact_shared_gate<gfx950>>,
                                                              moe_router_strict<contracts::moe_router_exact_shared_gate<sm90a>>,
                                                              moe_router_strict<contracts::moe_router_matrix_shared_gate<gfx950>>,
                                                              moe_router_strict<contracts::moe_router_matrix_shared_gate<sm90a>>>;

/// shared-expert gate with route append: 1..512 tokens.
inline constexpr auto moe_shared_gate = boost::hana::tuple_t<moe_shared_gate_strict<contracts::moe_shared_gate_reference<gfx950>>,
                                                             moe_shared_gate_strict<contracts::moe_shared_gate_reference<sm90a>>>;

}  // namespace netra::tactics
