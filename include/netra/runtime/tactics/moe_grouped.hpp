// netra/runtime/tactics/moe_grouped.hpp — the grouped expert path's tactics (host only): per
// target, the configurations that together admit every token count in [17, 768], each a plan,
// gate_up, down and reduce contract that share MaxTokens and Tile (the plan's layout), first match
// wins. Every contract named here is in the build-time catalog (catalog/moe_grouped.hpp).
//   mid:      17 .. 256 tokens, tiles of 16 routes, down KParts 1 (FP32 y) over 16 row tiles;
//   split_k:  exactly 768 tokens, the article's split-K pair (contracts/moe/split_k_down.hpp);
//   large:   257 .. 768 tokens, tiles of split_k_tile<Target>, down KParts 1;
//   mid_ring, large_ring: mid and large with gate_up's weights through an LDS ring and down over
//             4 row tiles, and their successors (sm90a's dispatch, grouped_dispatch below).
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

/// The ring forms (sm90a): the mid and large configurations with gate_up's weights through a
/// 4-block LDS ring (contracts::moe_grouped_gate_up field WeightStages) and down over 4 row tiles
/// (512 rows, four passes per workgroup, each pass's weights in flight during the previous pass's
/// products). Every output equals the register form's bit for bit (the same operations per value).
template <class Target>
using grouped_mid_ring = grouped_config<typename grouped_mid<Target>::plan, contracts::moe_grouped_gate_up<Target, 17, 256, 16, 4>,
                                        contracts::moe_grouped_down<Target, 17, 256, 16, 1, 4>, typename grouped_mid<Target>::reduce>;
template <class Target>
using grouped_large_ring = grouped_config<typename grouped_large<Target>::plan, contracts::moe_grouped_gate_up<Target, 257, 768, contracts::split_k_tile<Target>, 4>,
                                          contracts::moe_grouped_down<Target, 257, 768, contracts::split_k_tile<Target>, 1, 4>,
                                          typename grouped_large<Target>::reduce>;

/// The mid range's forms after mid_ring (each the same operations per value; in the catalog,
/// bitwise equal to mid_ring in test_moe_grouped_gpu, timed by netra-bench-moe-grouped): gate_up's
/// ring of 2 blocks (one block in flight; 105 KB of LDS, so two workgroups share an SM and one's
/// staging and act_quant overlap the other's weight stream), then down's weights through a
/// 4-block LDS ring too (contracts::moe_grouped_down field WeightStages: no weight registers,
/// three workgroups an SM, so one's staging and stores overlap the others' weight streams and a
/// down workgroup fits beside a gate_up one at the boundary).
template <class Target>
using grouped_mid_ring2 = grouped_config<typename grouped_mid<Target>::plan, contracts::moe_grouped_gate_up<Target, 17, 256, 16, 2>,
                                         typename grouped_mid_ring<Target>::down, typename grouped_mid<Target>::reduce>;
template <class Target>
using grouped_mid_dring = grouped_config<typename grouped_mid<Target>::plan, typename grouped_mid_ring2<Target>::gate_up,
                                         contracts::moe_grouped_down<Target, 17, 256, 16, 1, 4, 4>, typename grouped_mid<Target>::reduce>;
/// mid_dring with field Trim on gate_up and down (contracts/moe/grouped_{gate_up,down}.hpp: a
/// chunk's second instruction tile, columns 8 .. 15 on sm90a, runs only when it holds a route) and
/// down over 8 row tiles (two 128-row passes a workgroup, twice the workgroups of mid_dring: a
/// shorter tail). The same bits as mid_dring; dispatched.
template <class Target>
using grouped_mid_trim_rows8 = grouped_config<typename grouped_mid<Target>::plan, contracts::moe_grouped_gate_up<Target, 17, 256, 16, 2, 1>,
                                              contracts::moe_grouped_down<Target, 17, 256, 16, 1, 8, 4, 1>, typename grouped_mid<Target>::reduce>;
/// mid_trim_rows8 with down over 16 row tiles (one 128-row pass a workgroup, the four blocks in
/// flight at once: the floor program's grid); catalogued and bit-tested, not yet measured.
template <class Target>
using grouped_mid_trim_rows16 = grouped_config<typename grouped_mid<Target>::plan, typename grouped_mid_trim_rows8<Target>::gate_up,
                                               contracts::moe_grouped_down<Target, 17, 256, 16, 1, 16, 4, 1>, typename grouped_mid<Target>::reduce>;
/// large_ring with down through the 4-block ring (two workgroups an SM at tiles of 32): dispatched.
template <class Target>
using grouped_large_dring = grouped_config<typename grouped_large<Target>::plan, typename grouped_large_ring<Target>::gate_up,
                                           contracts::moe_grouped_down<Target, 257, 768, contracts::split_k_tile<Target>, 1, 4, 4>,
                                           typename grouped_large<Target>::reduce>;

/// The configurations a target dispatches: mid (17..256), on gfx950 the article's split-K pair at
/// 768, and large (257..768). sm90a takes the ring forms with down through its LDS ring
/// (mid_trim_rows8, large_dring), chosen by measurement on the H200 (the experts path graph-replayed, every record
/// within the policy, the candidates' bits equal on the GPU: bench/results/moe_h200.json,
/// docs/kernels/moe-grouped.md); there the split-K pair is built, tested and benchmarked but not
/// dispatched.
template <class Target> struct grouped_dispatch {
  using mid = grouped_mid<Target>;
  using large = grouped_large<Target>;
  static constexpr bool split_k = true;
  static constexpr const char* mid_name = "mid";
  static constexpr const char* large_name = "large";
};
template <> struct grouped_dispatch<sm90a> {
  using mid = grouped_mid_trim_rows8<sm90a>;
  using large = grouped_large_dring<sm90a>;
  static constexpr bool split_k = false;
  static constexpr const char* mid_name = "mid_trim_rows8";
  static constexpr const char* large_name = "large_dring";
};
template <class Target> using grouped_mid_of = typename grouped_dispatch<Target>::mid;
template <class Target> using grouped_large_of = typename grouped_dispatch<Target>::large;

/// The configurations of a target in dispatch order (the first whose range holds M serves it).
template <class Target> inline constexpr auto grouped_configs = [] {
  if constexpr (grouped_dispatch<Target>::split_k) return boost::hana::tuple_t<grouped_mid_of<Target>, grouped_split_k<Target>, grouped_large_of<Target>>;
  else return boost::hana::tuple_t<grouped_mid_of<Target>, grouped_large_of<Target>>;
}();

/// The name of the first configuration whose range holds `tokens` ("mid", "split_k", "large";
/// sm90a "mid_trim_rows8", "large_dring"), or "" outside [17, 768].
template <class Target> constexpr const char* grouped_configuration(i64 tokens) {
  using D = grouped_dispatch<Target>;
  if (D::mid::contains(tokens)) return D::mid_name;
  if (D::split_k && grouped_split_k<Target>::contains(tokens)) return "split_k";
  if (D::large::contains(tokens)) return D::large_name;
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
/// Stage Stage (plan, gate_up, down or reduce) of configuration Config of Target, strict in its range.
template <template <class> class Config, class Target, template <class> class Stage>
using grouped_strict = strict<Stage<Config<Target>>, grouped_domain<Config<Target>, Target>>;
template <class C> using plan_of = typename C::plan;
template <class C> using gate_up_of = typename C::gate_up;
template <class C> using down_of = typename C::down;
template <class C> using reduce_of = typename C::reduce;
/// One stage's list: mid (gfx950, sm90a), the split-K pair (gfx950; plan and gate_up are large's), large (gfx950, sm90a).
template <template <class> class Stage, bool SplitK>
inline constexpr auto grouped_stage_list = [] {
  using boost::hana::tuple_t;
  if constexpr (SplitK)
    return tuple_t<grouped_strict<grouped_mid_of, gfx950, Stage>, grouped_strict<grouped_mid_of, sm90a, Stage>, grouped_strict<grouped_split_k, gfx950, Stage>,
                   grouped_strict<grouped_large_of, gfx950, Stage>, grouped_strict<grouped_large_of, sm90a, Stage>>;
  else
    return tuple_t<grouped_strict<grouped_mid_of, gfx950, Stage>, grouped_strict<grouped_mid_of, sm90a, Stage>, grouped_strict<grouped_large_of, gfx950, Stage>,
                   grouped_strict<grouped_large_of, sm90a, Stage>>;
}();
inline constexpr auto moe_grouped_plan = grouped_stage_list<plan_of, false>;
inline constexpr auto moe_grouped_gate_up = grouped_stage_list<gate_up_of, false>;
inline constexpr auto moe_grouped_down = grouped_stage_list<down_of, true>;
inline constexpr auto moe_grouped_reduce = grouped_stage_list<reduce_of, true>;

/// Every distinct contract of a target's configurations (the catalog's list).
template <class Target>
inline constexpr auto grouped_contracts = boost::hana::tuple_t<
    typename grouped_mid<Target>::plan, typename grouped_mid<Target>::gate_up, typename grouped_mid<Target>::down, typename grouped_mid<Target>::reduce,
    typename grouped_large<Target>::plan, typename grouped_large<Target>::gate_up, typename grouped_large<Target>::down,
    typename grouped_large<Target>::reduce, typename grouped_split_k<Target>::down, typename grouped_split_k<Target>::reduce>;

}  // namespace netra::tactics
