// netra/runtime/tactics/moe_experts.hpp — the dispatch lists of the decode expert projections
// (host only). Every tactic is in the build-time catalog (catalog/moe_experts.hpp), so they come
// embedded in libnetra. Each is strict inside its promoted domain: a call on its target, of 1 to
// MaxTokens tokens and (down) with its activation input kind that the contract refuses is an
// error (a misaligned or null pointer, a wrong size), never a silent fallback.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/moe/expert_down.hpp"
#include "netra/contracts/moe/expert_gate_up.hpp"
#include "netra/runtime/tactic.hpp"

namespace netra::tactics {

/// gate_up: the units contracts (unit_list, resident) take calls from unit_list_min_tokens; below it the route scan
/// is faster (few workgroups exit, and the unit list is one more kernel). H200, decode block
/// graph-replayed, revision 823c447 (bench/results/moe_gate_up_schedule_h200.json), route scan /
/// unit list: M = 4 37.6 / 38.7 us, M = 8 61.5 / 62.1, M = 12 85.9 / 83.6, M = 16 108.5 / 100.4.
inline constexpr i64 unit_list_min_tokens = 10;
template <class Contract> struct moe_gate_up_domain {
  static bool contains(const moe_gate_up_signature& s) {
    const i64 min_tokens = Contract::unit_list || Contract::resident ? unit_list_min_tokens : 1;
    return s.target == Contract::target::id && s.tokens() >= min_tokens && s.tokens() <= Contract::max_tokens;
  }
};
/// down's input kind decides its contract: a bfloat16 act is gate_up's output (act_quant fused),
/// any other act is meant as act_quant's E4M3 (and refused when it is not).
template <class Contract> struct moe_down_domain {
  static bool contains(const moe_down_signature& s) {
    return s.target == Contract::target::id && s.tokens() >= 1 && s.tokens() <= Contract::max_tokens &&
           (s.act.type == dtype::bf16) == Contract::fused_act_quant;
  }
};
/// The list's threshold between gate_up's two schedules (both admit every 1..16-token call).
struct from_unit_list_min_tokens {
  static decision decide(const moe_gate_up_signature& s) {
    if (s.tokens() >= unit_list_min_tokens) return admit();
    return refuse("tokens", ">= tactics::unit_list_min_tokens (10; below it the route scan is faster)", s.tokens());
  }
};
template <class C> using moe_gate_up_strict = strict<C, moe_gate_up_domain<C>>;
template <class C> using moe_down_strict = strict<C, moe_down_domain<C>>;

/// gate_up: the unit-list contract from unit_list_min_tokens tokens, then the route-scan decode
/// contract (1..16 tokens), on each target.
inline constexpr auto moe_expert_gate_up =
    boost::hana::tuple_t<when<moe_gate_up_strict<contracts::moe_expert_gate_up_units_decode<gfx950>>, from_unit_list_min_tokens>,
                         when<moe_gate_up_strict<contracts::moe_expert_gate_up_units_decode<sm90a>>, from_unit_list_min_tokens>,
                         moe_gate_up_strict<contracts::moe_expert_gate_up_decode<gfx950>>, moe_gate_up_strict<contracts::moe_expert_gate_up_decode<sm90a>>>;

/// down: gate_up's BF16 output with act_quant fused (1..4 tokens), then act_quant's E4M3 output
/// (1..16 tokens). A BF16 call of more than 4 tokens is not supported: run act_quant first.
inline constexpr auto moe_expert_down = boost::hana::tuple_t<moe_down_strict<contracts::moe_expert_down_fused_decode<gfx950>>,
                                                             moe_down_strict<contracts::moe_expert_down_fused_decode<sm90a>>,
                                                             moe_down_strict<contracts::moe_expert_down_decode<gfx950>>,
                                                             moe_down_strict<contracts::moe_expert_down_decode<sm90a>>>;

}  // namespace netra::tactics
