// The persistent decode experts (contracts::moe_expert_persistent) on the host: the contract's
// facts and admission (each stage contract's refusal comes through, the workspace is required),
// and its item protocol modelled step by step (kernels/moe/experts_persistent.hpp: one claim
// counter, per-unit arrivals with act_quant on the 64th, down items that wait for their unit,
// per-group arrivals with the route sum on the last) under random interleavings of workgroups:
// every item served once, every group summed once after all its items, nothing waits forever —
// for any number of resident workgroups (a down item runs only once its unit is ready).
#include "kernels/moe_experts_model.hpp"

#include <random>
#include <string>

#include "netra/kernels/moe/experts_persistent.hpp"

using namespace netra;

namespace {

using P = contracts::moe_expert_persistent_decode<sm90a>;
using W = P::workspace;

/// One modelled run of the protocol over the call's unit list with `workgroups` workgroups
/// scheduled at random (a waiting workgroup makes no progress). Returns the number of steps, or
/// -1 when every live workgroup waits (a deadlock).
struct protocol {
  std::vector<oracles::expert_unit> units;
  std::uint32_t valid = 0, gate_items = 0, items = 0;
  std::vector<std::uint32_t> arrivals, group_arrivals, served, summed;
  std::vector<std::uint32_t> valid_unit;
  std::uint32_t claims = 0;

  explicit protocol(const std::vector<std::int32_t>& ids) : units(oracles::unit_list(ids)) {
    for (std::uint32_t j = 0; j < units.size(); ++j)
      if (oracles::valid_expert(units[j].expert)) valid_unit.push_back(j);
    valid = static_cast<std::uint32_t>(valid_unit.size());
    gate_items = static_cast<std::uint32_t>(units.size()) * 64;
    items = gate_items + std::max(valid, 1u) * W::tile_groups;
    arrivals.assign(units.size(), 0);
    group_arrivals.assign(W::tile_groups, 0);
    served.assign(items, 0);
    summed.assign(W::tile_groups, 0);
  }

  long run(unsigned workgroups, std::uint64_t seed) {
    struct wg {
      std::uint32_t item;
      bool done = false;
    };
    std::vector<wg> g;
    for (unsigned i = 0; i < workgroups; ++i) g.push_back({claims++});
    std::mt19937_64 rng(seed);
    for (long step = 0;; ++step) {
      std::vector<unsigned> live, ready;
      for (unsigned i = 0; i < workgroups; ++i) {
        if (g[i].done) continue;
        live.push_back(i);
        if (can_run(g[i].item)) ready.push_back(i);
      }
      if (live.empty()) return step;
      if (ready.empty()) return -1;
      wg& w = g[ready[rng() % ready.size()]];
      if (w.item >= items) {
        w.done = true;
        continue;
      }
      serve(w.item);
      w.item = claims++;
    }
  }
  bool can_run(std::uint32_t item) const {
    if (item >= gate_items && item < items) {
      const std::uint32_t k = (item - gate_items) / W::tile_groups;
      return k >= valid || arrivals[valid_unit[k]] == 65;
    }
    return true;
  }
  void serve(std::uint32_t item) {
    ++served[item];
    if (item < gate_items) {
      if (++arrivals[item / 64] == 64) ++arrivals[item / 64];  // the 64th: act_quant, then ready
      return;
    }
    const std::uint32_t group = (item - gate_items) % W::tile_groups;
    if (++group_arrivals[group] == std::max(valid, 1u)) ++summed[group];  // the group's last item sums it
  }
};

void check_protocol(const std::vector<std::int32_t>& ids) {
  for (unsigned workgroups : {1u, 3u, 64u, 264u}) {
    protocol p(ids);
    INFO("workgroups ", workgroups, ", units ", p.units.size(), ", valid ", p.valid);
    CHECK(p.run(workgroups, 7 + workgroups) >= 0);
    for (auto s : p.served) CHECK(s == 1);
    for (auto s : p.summed) CHECK(s == 1);
    CHECK(p.units.size() <= P::max_routes);
  }
}

}  // namespace

TEST_CASE("persistent experts: contract facts, instance, kernels, workspace layout") {
  CHECK(std::string(P::family) == "moe_experts_persistent");
  CHECK(instance_name<P>() == "moe-experts-persistent-sm90a-16");
  static_assert(std::is_same_v<kernels::kernels_of<P>::type, type_list<kernels::moe_expert_persistent_kernel<P>>>);
  static_assert(P::workgroup_size == 128 && contracts::moe_expert_persistent_decode<gfx950>::workgroup_size == 256);
  static_assert(W::counter_words * 4 <= W::partials_offset && P::workspace_bytes == 4096 + 4ull * 128 * 144 * 16);
  static_assert(P::act_quant::workgroup_size == P::workgroup_size, "act_quant's rows fill the workgroup");
}

TEST_CASE("persistent experts: admission checks every stage's tensors and the workspace") {
  const auto* p = reinterpret_cast<const void*>(std::uintptr_t{0x10000});
  const device_ref gpu{2, 0};
  auto compact = [&](dtype type, std::initializer_list<i64> extents) { return compact_tensor(p, type, gpu, extents); };
  const i64 m = 5;
  moe_persistent_signature s{target_id::sm90a,
                             gpu,
                             compact(dtype::bf16, {m, 2048}),
                             compact(dtype::i32, {m, 9}),
                             compact(dtype::f32, {m, 9}),
                             compact(dtype::e4m3, {257, 1024, 2048}),
                             compact(dtype::f32, {257, 8, 16}),
                             compact(dtype::e4m3, {257, 2048, 512}),
                             compact(dtype::f32, {257, 16, 4}),
                             compact(dtype::bf16, {9 * m, 1024}),
                             compact(dtype::e4m3, {9 * m, 512}),
                             compact(dtype::f32, {9 * m, 4}),
                             compact(dtype::bf16, {m, 2048})};
  CHECK(std::string(P::admits(s).field) == "workspace");
  s.workspace = p;
  s.workspace_bytes = P::workspace_bytes - 4;
  CHECK(std::string(P::admits(s).field) == "workspace_bytes");
  s.workspace_bytes = P::workspace_bytes;
  CHECK(P::admits(s).admitted());
  CHECK_FALSE(contracts::moe_expert_persistent_decode<gfx950>::admits(s).admitted());  // target
  auto refused = [&](auto edit, const char* field) {
    moe_persistent_signature t = s;
    edit(t);
    CHECK(std::string(P::admits(t).field) == field);
  };
  // each stage contract's own field names: gate_up's "out", act_quant's "in" / "out" / "scales"
  refused([&](auto& t) { t.gate_up = compact(dtype::bf16, {9 * m, 512}); }, "out");
  refused([&](auto& t) { t.gate_up = tensor_arg{}; }, "out");
  refused([&](auto& t) { t.act = compact(dtype::bf16, {9 * m, 512}); }, "out");
  refused([&](auto& t) { t.act_scales = compact(dtype::f32, {9 * m, 2}); }, "scales");
  refused([&](auto& t) { t.w2 = compact(dtype::e4m3, {257, 2048, 256}); }, "w2");
  refused([&](auto& t) { t.route_weights = compact(dtype::f32, {m, 8}); }, "route_weights");
  refused([&](auto& t) { t.out = compact(dtype::bf16, {m + 1, 2048}); }, "out");
  refused([&](auto& t) { t.hidden = compact(dtype::bf16, {17, 2048}); }, "tokens");
}

TEST_CASE("persistent experts: the item protocol serves every item once and never waits forever") {
  for (int m : {1, 2, 9, 16}) check_protocol(oracles::routed_ids(m, 60 + m));
  check_protocol(oracles::routed_ids(16, 61, 16));  // many units of 16 routes
  check_protocol(std::vector<std::int32_t>(18, 7));  // one expert, two units
  check_protocol(std::vector<std::int32_t>(9, -5));  // no valid id: the groups' items carry no unit
  auto ids = oracles::routed_ids(3, 62);
  ids[4] = -1, ids[13] = 999;
  check_protocol(ids);
}
