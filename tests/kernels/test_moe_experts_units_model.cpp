// gate_up's unit list (Schedule unit_list) and resident schedule modelled on the host
// (tests/kernels/moe_experts_model.hpp): the units kernel lane by lane against the oracle, the
// resident grid's first staged items and item permutation, the contracts' families and workspace.
#include "kernels/moe_experts_model.hpp"

using namespace netra;

namespace {

/// The units kernel (kernels/moe/experts_units.hpp) lane by lane for a wave of W lanes: the rows
/// of ids in route order, each lane's key peers (match), occurrence, the running unit count, a
/// route's unit from its row peer or its key's latest unit, then the stores into the list layout.
template <unsigned W> std::vector<std::uint32_t> unit_list_model(const std::vector<std::int32_t>& ids) {
  using list = moe::expert_unit_list;
  const unsigned routes = static_cast<unsigned>(ids.size()), rows = (routes + W - 1) / W;
  std::vector<std::uint32_t> words(list::bytes(routes) / 4, 0xDEADBEEFu), count(list::keys, 0), latest(list::keys, 0xDEADBEEFu);
  std::vector<std::uint32_t> occurrence(rows * W), unit(rows * W);
  std::uint32_t units = 0;
  for (unsigned it = 0; it < rows; ++it) {
    std::uint32_t key[W], occ[W], own[W];
    std::uint64_t peers[W], starters = 0;
    for (unsigned l = 0; l < W; ++l) {
      const unsigned i = it * W + l;
      key[l] = i < routes ? list::key_of(ids[i]) : list::keys;
    }
    for (unsigned l = 0; l < W; ++l) {
      peers[l] = 0;
      for (unsigned m = 0; m < W; ++m) peers[l] |= static_cast<std::uint64_t>(key[m] == key[l]) << m;
      const std::uint32_t slot = it * W + l < routes ? key[l] : 0;
      occ[l] = count[slot] + bit_count_u64(peers[l] & lanes_below(l));
      starters |= static_cast<std::uint64_t>(it * W + l < routes && occ[l] % 16 == 0) << l;
    }
    for (unsigned l = 0; l < W; ++l) own[l] = units + bit_count_u64(starters & lanes_below(l));
    for (unsigned l = 0; l < W; ++l) {
      const std::uint32_t slot = it * W + l < routes ? key[l] : 0, before = count[slot], first = occ[l] - occ[l] % 16;
      const bool in_row = first >= before;
      unit[it * W + l] = in_row ? own[nth_set_bit(peers[l], first - before)] : latest[slot];
      occurrence[it * W + l] = occ[l];
    }
    units += bit_count_u64(starters);
    for (unsigned l = 0; l < W; ++l)
      if (it * W + l < routes && (peers[l] >> l) == 1) {
        count[key[l]] = occ[l] + 1;
        latest[key[l]] = unit[it * W + l];
      }
  }
  for (unsigned i = 0; i < routes; ++i) {
    const std::uint32_t column = occurrence[i] % 16;
    words[list::unit_word(unit[i], list::first_route_word + column)] = i;
    if (column == 0) {
      words[list::unit_word(unit[i], list::expert_word)] = static_cast<std::uint32_t>(ids[i]);
      words[list::unit_word(unit[i], list::columns_word)] = std::min(16u, count[list::key_of(ids[i])] - occurrence[i]);
    }
  }
  words[0] = units;
  return words;
}
}  // namespace

// ---- gate_up's unit list (Schedule unit_list) ------------------------------------------------------

TEST_CASE("gate_up unit list oracle: a hand-checked call") {
  // routes: 0:5 1:7 2:5 3:300 4:5 5:-1 ; keys 5, 7, invalid
  const auto u = oracles::unit_list({5, 7, 5, 300, 5, -1});
  REQUIRE(u.size() == 3);
  CHECK(u[0] == oracles::expert_unit{5, {0, 2, 4}});
  CHECK(u[1] == oracles::expert_unit{7, {1}});
  CHECK(u[2] == oracles::expert_unit{300, {3, 5}});
  // 40 routes of one expert: units at occurrences 0, 16, 32
  const auto many = oracles::unit_list(std::vector<std::int32_t>(40, 9));
  REQUIRE(many.size() == 3);
  CHECK(many[1].routes.front() == 16);
  CHECK(many[2].routes.size() == 8);
}

TEST_CASE_TEMPLATE("gate_up unit list: the units kernel's lane model equals the oracle (wave64 and warp32)", Wave, std::integral_constant<unsigned, 64>,
                   std::integral_constant<unsigned, 32>) {
  constexpr unsigned W = Wave::value;
  std::vector<std::vector<std::int32_t>> calls;
  for (int tokens : {1, 2, 3, 7, 8, 15, 16})
    for (int pool : {256, 64, 12, 8}) calls.push_back(oracles::routed_ids(tokens, 500 + tokens * 7 + pool, pool));
  calls.push_back(std::vector<std::int32_t>(144, 42));  // 9 units of one expert, spread over rows
  std::vector<std::int32_t> mixed(144);
  oracles::xorshift r{99};
  for (auto& v : mixed) v = static_cast<std::int32_t>(r.next() % 5) - 1 + (r.next() % 3 == 0 ? 256 : 0);  // -1, 0..3, 255..259
  calls.push_back(mixed);
  std::vector<std::int32_t> ramps(144);
  for (std::size_t i = 0; i < ramps.size(); ++i) ramps[i] = static_cast<std::int32_t>(i % 17 == 0 ? 300 + i : i / 20);  // runs crossing rows
  calls.push_back(ramps);
  for (const auto& ids : calls) {
    const auto words = unit_list_model<W>(ids);
    const auto want = oracles::unit_list(ids);
    CHECK(words[0] == want.size());
    CHECK(oracles::read_unit_list(words, ids.size()) == want);
  }
}

TEST_CASE("resident gate_up: the first item it stages before the list is the list's item") {
  // Workgroup (x, y), y < 8, serves item (unit y, tile x) first, and its wave 1 stages expert
  // ids[y]'s rows before wave 0 has listed the units when routes 0 .. y hold distinct valid ids.
  // That relies on unit y being route y's expert then (units are numbered in the route order of
  // their first routes); and for a router's output (8 distinct experts per token) it always holds.
  using K = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_units_decode<sm90a>>;
  auto early = [](const std::vector<std::int32_t>& ids, unsigned y) {  // the kernel's test, written plainly
    for (unsigned i = 0; i <= y; ++i) {
      if (!oracles::valid_expert(ids[i])) return false;
      for (unsigned j = 0; j < i; ++j)
        if (ids[j] == ids[i]) return false;
    }
    return true;
  };
  std::vector<std::vector<std::int32_t>> calls;
  for (int tokens : {1, 2, 10, 16})
    for (int pool : {256, 12}) calls.push_back(oracles::routed_ids(tokens, 900 + tokens + pool, pool));
  unsigned router_like = static_cast<unsigned>(calls.size());
  calls.push_back(std::vector<std::int32_t>(144, 42));  // one expert: only y = 0 stages early
  std::vector<std::int32_t> adversarial = oracles::routed_ids(16, 77);
  adversarial[3] = 300, adversarial[6] = adversarial[1];  // an invalid id and a duplicate among routes 0 .. 7
  calls.push_back(adversarial);
  unsigned staged = 0;
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const auto& ids = calls[c];
    const auto units = oracles::unit_list(ids);
    for (unsigned y = 0; y < K::unit_rows; ++y) {
      if (c < router_like) CHECK(early(ids, y));
      if (!early(ids, y)) continue;
      ++staged;
      REQUIRE(units.size() > y);
      CHECK(units[y].expert == ids[y]);
      CHECK(units[y].routes.front() == y);
    }
  }
  CHECK(staged == router_like * K::unit_rows + 1 + 3);  // one expert: y = 0; adversarial: y = 0, 1, 2
}

TEST_CASE("resident gate_up (sm90a): row 0 serves the shared tiles it staged before the wait; items stay a permutation") {
  // Row y = 0 stages tile x of expert 256 before the wait; its first item is (s, x), s the shared
  // expert's first unit, by trading places with unit 0 when s >= 8 (rows 1 .. 7 keep theirs).
  using K = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_units_decode<sm90a>>;
  static_assert(K::early_shared);
  std::vector<std::vector<std::int32_t>> calls;
  for (int tokens : {1, 2, 10, 16})
    for (int pool : {256, 12}) calls.push_back(oracles::routed_ids(tokens, 910 + tokens + pool, pool));
  const std::size_t router_like = calls.size();
  auto no_shared = oracles::routed_ids(12, 5);
  for (int t = 0; t < 12; ++t) no_shared[static_cast<std::size_t>(t) * 9 + 8] = t;  // no route of expert 256
  calls.push_back(no_shared);
  auto early = oracles::routed_ids(12, 6);
  early[3] = 256;  // expert 256 first at route 3: its unit is 3 < 8
  calls.push_back(early);
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const auto units = oracles::unit_list(calls[c]);
    std::uint32_t s = K::no_unit;
    for (std::size_t j = 0; j < units.size() && s == K::no_unit; ++j)
      if (units[j].expert == 256) s = static_cast<std::uint32_t>(j);
    INFO("call ", c);
    if (c < router_like) {
      CHECK(s == 8);  // token 0's 8 distinct routed experts, then the shared slot
      CHECK(K::shared_first(s));
    } else {
      CHECK_FALSE(K::shared_first(s));  // row 0 lets its copy land and stages unit 0 itself
    }
    std::vector<int> seen(units.size(), 0);
    for (std::uint32_t j = 0; j < units.size(); ++j) ++seen[K::item_unit(j, s)];
    CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(units.size()));
    if (K::shared_first(s)) CHECK(units[K::item_unit(0, s)].expert == 256);
    for (std::uint32_t y = 1; y < K::unit_rows; ++y) CHECK(K::item_unit(y, s) == y);
  }
}

TEST_CASE("gate_up unit_list and resident contracts: families, kernels, and a workspace the call must bind") {
  using L = contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::unit_list>;
  using R = contracts::moe_expert_gate_up_units_decode<sm90a>;
  using S = contracts::moe_expert_gate_up_decode<sm90a>;
  static_assert(R::resident && !R::unit_list && contracts::moe_expert_gate_up_units_decode<gfx950>::unit_list);
  CHECK(std::string(L::family) == "moe_experts_gate_up_units");
  CHECK(std::string(R::family) == "moe_experts_gate_up");  // one kernel, as the route scan
  CHECK(std::string(S::family) == "moe_experts_gate_up");
  CHECK(instance_name<R>() == "moe-experts-gate-up-sm90a-16-2");
  static_assert(L::workspace_bytes == 4 * (32 + 32 * 144) && R::workspace_bytes == 4 * 32 && S::workspace_bytes == 0);
  static_assert(std::is_same_v<kernels::kernels_of<L>::type,
                               type_list<kernels::moe_expert_units_kernel<L>, kernels::moe_expert_gate_up_kernel<L>>>);
  static_assert(std::is_same_v<kernels::kernels_of<R>::type, type_list<kernels::moe_expert_gate_up_kernel<R>>>);
  const auto* p = reinterpret_cast<const void*>(std::uintptr_t{0x10000});
  const device_ref gpu{2, 0};
  auto compact = [&](dtype type, std::initializer_list<i64> extents) { return compact_tensor(p, type, gpu, extents); };
  moe_gate_up_signature s{target_id::sm90a, gpu, compact(dtype::bf16, {16, 2048}), compact(dtype::i32, {16, 9}),
                          compact(dtype::e4m3, {257, 1024, 2048}), compact(dtype::f32, {257, 8, 16}), compact(dtype::bf16, {144, 1024})};
  CHECK(S::admits(s).admitted());
  CHECK(std::string(L::admits(s).field) == "workspace");  // no workspace bound
  CHECK(std::string(R::admits(s).field) == "workspace");
  s.workspace = p;
  s.workspace_bytes = R::workspace_bytes - 4;
  CHECK(std::string(L::admits(s).field) == "workspace_bytes");
  CHECK(std::string(R::admits(s).field) == "workspace_bytes");
  s.workspace_bytes = R::workspace_bytes;
  CHECK(R::admits(s).admitted());
  CHECK(std::string(L::admits(s).field) == "workspace_bytes");
  s.workspace_bytes = L::workspace_bytes;
  CHECK(L::admits(s).admitted());
}

