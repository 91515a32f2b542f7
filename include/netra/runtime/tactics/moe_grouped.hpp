// netra/runtime/tactics/moe_grouped.hpp — the grouped expert path's tactics (host only): per
// target, the configurations that together admit every token count in [17, 768], each a plan,
// gate_up, down and reduce contract that share MaxTokens and Tile (the plan's layout), first match
// wins. Every contract named here is in the build-time catalog (catalog/moe_grouped.hpp).
//   mid:      17 .. 256 tokens, tiles of 16 routes, down KParts 1 (FP32 y) over 16 row tiles;
//   split_k:  exactly 768 tokens, the article's split-K pair (contracts/moe/split_k_down.hpp);
//   large:   257 .. 768 tokens, tiles of split_k_tile<Target>, down KParts 1.
// Strict inside each domain: a call that the chosen contracts refuse is an error, never a
// silent fallback (the caller's own path serves M outside [17, 768]).
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/moe/grouped_gate_up.hpp"
#include "netra/contracts/moe/grouped_plan.hpp"
#include "netra/contracts/moe/split_k_down.hpp"
#include "netra/runtime/tactic.hpp"

namespace netra::tactics {

inline constexpr i64 grouped_min_tokens = 17;
inline constexpr i64 grouped_max_tokens = 768;

/// One configuration: its contracts and the token range it is promoted for.
template <class Plan, class GateUp, class Down, class Reduce> struct grouped_config {
  using plan = Plan;
  using gate_up = GateUp;
  using down = Down;
  using reduce = Reduce;
  static constexpr i64 min_tokens = max_of(max_of(i64{GateUp::min_tokens}, i64{Down::min_tokens}), i64{Reduce::min_tokens});
  static constexpr i64 max_tokens = min_of(min_of(i64{GateUp::max_tokens}, i64{Down::max_tokens}), i64{Reduce::max_tokens});
  static_assert(Plan::max_tokens == GateUp::max_tokens && Plan::max_tokens == Down::max_tokens && Plan::tile == GateUp::tile &&
                    Plan::tile == Down::tile && Reduce::k_parts == Down::k_parts && min_tokens <= max_tokens,
                "netra::tactics::grouped_config: the stages must share the plan's MaxTokens and Tile, overlap in tokens and agree on KParts");
  static constexpr bool contains(i64 tokens) { return tokens >= min_tokens && tokens <= max_tokens; }
};

template <class Target>
using grouped_mid = grouped_config<contracts::moe_grouped_plan<Target, 256, 16>, contracts::moe_grouped_gate_up<Target, 17, 256, 16>,
                                   contracts::moe_grouped_down<Target, 17, 256, 16, 1, 16>, contracts::moe_grouped_reduce<Target, 17, 256, 1>>;
template <class Target>
using grouped_split_k = grouped_config<contracts::moe_grouped_plan<Target, 768, contracts::split_k_tile<Target>>,
                                       contracts::moe_grouped_gate_up<Target, 257, 768, contracts::split_k_tile<Target>>,
                                       contracts::moe_split_k_down<Target>, contracts::moe_split_k_reduce<Target>>;
template <class Target>
using grouped_large = grouped_config<contracts::moe_grouped_plan<Target, 768, contracts::split_k_tile<Target>>,
                                     contracts::moe_grouped_gate_up<Target, 257, 768, contracts::split_k_tile<Target>>,
                                     contracts::moe_grouped_down<Target, 257, 768, contracts::split_k_tile<Target>, 1, 16>,
                                     contracts::moe_grouped_reduce<Target, 257, 768, 1>>;

/// Candidates (built and tested, not dispatched until measured faster): the mid and large
/// configurations with gate_up's weights through a 4-block LDS ring (contracts::moe_grouped_gate_up
/// field WeightStages) and down over 4 row tiles (512 rows, four passes per workgroup, each
/// pass's weights in flight during the previous pass's products). Every output equals the
/// dispatched form's bit for bit (the same operations per value).
template <class Target>
using grouped_mid_ring = grouped_config<typename grouped_mid<Target>::plan, contracts::moe_grouped_gate_up<Target, 17, 256, 16, 4>,
                                        contracts::moe_grouped_down<Target, 17, 256, 16, 1, 4>, typename grouped_mid<Target>::reduce>;
template <class Target>
using grouped_large_ring = grouped_config<typename grouped_large<Target>::plan, contracts::moe_grouped_gate_up<Target, 257, 768, contracts::split_k_tile<Target>, 4>,
                                          contracts::moe_grouped_down<Target, 257, 768, contracts::split_k_tile<Target>, 1, 4>,
                                          typename grouped_large<Target>::reduce>;

/// The configurations of a target in dispatch order (the first whose range holds M serves it).
template <class Target> inline constexpr auto grouped_configs = boost::hana::tuple_t<grouped_mid<Target>, grouped_split_k<Target>, grouped_large<Target>>;

/// The name of the first configuration whose range holds `tokens` ("mid", "split_k", "large"),
/// or "" outside [17, 768].
template <class Target> constexpr const char* grouped_configuration(i64 tokens) {
  if (grouped_mid<Target>::contains(tokens)) return "mid";
  if (grouped_split_k<Target>::contains(tokens)) return "split_k";
  if (grouped_large<Target>::contains(tokens)) return "large";
  return "";
}

/// The dispatch lists of the four stages (ops/moe_grouped_dispatch.hpp), both targets, in the
/// configurations' order; each tactic strict inside its configuration's token range.
inline i64 grouped_tokens(const moe_grouped_plan_signature& s) { return s.tokens(); }
inline i64 grouped_tokens(const moe_grouped_stage_signature& s) { return s.tokens; }
inline i64 grouped_tokens(const moe_grouped_reduce_signature& s) { return s.tokens(); }
template <class Config, class Target> struct grouped_domain {
  template <class Signature> static bool contains(const Signature& s) {
    return s.target == Target::id && Config::contains(grouped_tokens(s));
  }
};
template <template <class> class Config, class Target, class Contract> using grouped_strict = strict<Contract, grouped_domain<Config<Target>, Target>>;

inline constexpr auto moe_grouped_plan = boost::hana::tuple_t<grouped_strict<grouped_mid, gfx950, typename grouped_mid<gfx950>::plan>,
                                                               grouped_strict<grouped_mid, sm90a, typename grouped_mid<sm90a>::plan>,
                                                               grouped_strict<grouped_large, gfx950, typename grouped_large<gfx950>::plan>,
                                                               grouped_strict<grouped_large, sm90a, typename grouped_large<sm90a>::plan>>;
inline constexpr auto moe_grouped_gate_up = boost::hana::tuple_t<grouped_strict<grouped_mid, gfx950, typename grouped_mid<gfx950>::gate_up>,
                                                                  grouped_strict<grouped_mid, sm90a, typename grouped_mid<sm90a>::gate_up>,
                                                                  grouped_strict<grouped_large, gfx950, typename grouped_large<gfx950>::gate_up>,
                                                                  grouped_strict<grouped_large, sm90a, typename grouped_large<sm90a>::gate_up>>;
inline constexpr auto moe_grouped_down = boost::hana::tuple_t<grouped_strict<grouped_mid, gfx950, typename grouped_mid<gfx950>::down>,
                                                               grouped_strict<grouped_mid, sm90a, typename grouped_mid<sm90a>::down>,
                                                               grouped_strict<grouped_split_k, gfx950, typename grouped_split_k<gfx950>::down>,
                                                               grouped_strict<grouped_split_k, sm90a, typename grouped_split_k<sm90a>::down>,
                                                               grouped_strict<grouped_large, gfx950, typename grouped_large<gfx950>::down>,
                                                               grouped_strict<grouped_large, sm90a, typename grouped_large<sm90a>::down>>;
inline constexpr auto moe_grouped_reduce = boost::hana::tuple_t<grouped_strict<grouped_mid, gfx950, typename grouped_mid<gfx950>::reduce>,
                                                                 grouped_strict<grouped_mid, sm90a, typename grouped_mid<sm90a>::reduce>,
                                                                 grouped_strict<grouped_split_k, gfx950, typename grouped_split_k<gfx950>::reduce>,
                                                                 grouped_strict<grouped_split_k, sm90a, typename grouped_split_k<sm90a>::reduce>,
                                                                 grouped_strict<grouped_large, gfx950, typename grouped_large<gfx950>::reduce>,
                                                                 grouped_strict<grouped_large, sm90a, typename grouped_large<sm90a>::reduce>>;

/// Every distinct contract of a target's configurations (the catalog's list).
template <class Target>
inline constexpr auto grouped_contracts = boost::hana::tuple_t<
    typename grouped_mid<Target>::plan, typename grouped_mid<Target>::gate_up, typename grouped_mid<Target>::down, typename grouped_mid<Target>::reduce,
    typename grouped_large<Target>::plan, typename grouped_large<Target>::gate_up, typename grouped_large<Target>::down,
    typename grouped_large<Target>::reduce, typename grouped_split_k<Target>::down, typename grouped_split_k<Target>::reduce>;

}  // namespace netra::tactics
