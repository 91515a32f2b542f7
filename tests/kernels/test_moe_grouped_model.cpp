// The grouped expert contracts on the host: the plan kernel's grouping decomposed as the kernel
// decomposes it (its own segment map, one wave row at a time, key matches and per-wave counts as
// the kernel keeps them, wave32 and wave64) equal to the oracle's stable counting order for
// random, skewed, one-expert and invalid-id route streams of 1 .. 768 tokens; one block product
// of a tile as the kernels take it (weight pieces from W rows, act pieces from the padded LDS
// columns, the instructions' words, D items to tile columns and rows) on the instruction models of
// tests/models/ (gfx950 under both byte orders, sm90a) equal to the plain product; the FP16 conversion
// of the split-K partials bit for bit against the compiler's _Float16; the contracts' launch
// geometry (the article's M768 grids) and their refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "netra/contracts/moe/expert_gate_up.hpp"
#include "netra/kernels/moe/grouped_down.hpp"
#include "netra/kernels/moe/grouped_gate_up.hpp"
#include "netra/kernels/moe/grouped_plan.hpp"
#include "netra/kernels/moe/grouped_reduce.hpp"
#include "netra/kernels/moe/split_k_down.hpp"
#include "netra/runtime/tactics/moe_experts.hpp"
#include "netra/runtime/tactics/moe_grouped.hpp"
#include "netra/runtime/tensor.hpp"
#include "models/mfma.hpp"
#include "models/mma_sync.hpp"
#include "oracles/moe_grouped.hpp"

using namespace netra;

namespace {

/// The plan kernel's group() for one workgroup of `kernel::waves` waves, lanes in lockstep.
template <class Contract> oracles::grouped_plan model_plan(const std::vector<std::int32_t>& ids) {
  using kernel = kernels::moe_grouped_plan_kernel<Contract>;
  constexpr u32 W = kernel::wave, waves = kernel::waves, keys = kernel::keys;
  const u32 routes = static_cast<u32>(ids.size());
  std::vector<u32> key(routes);
  for (u32 i = 0; i < routes; ++i) key[i] = moe::expert_unit_list::key_of(ids[i]);
  std::vector<std::vector<u32>> count(waves, std::vector<u32>(keys, 0));
  const u32 seg = kernel::segment(routes);
  auto rows = [&](u32 w, auto each_row) {
    const u32 first = w * seg, end = std::min(routes, first + seg);
    for (u32 base = first; base < end; base += W) {
      std::map<u32, std::vector<u32>> peers;  // key -> lanes holding it (ascending)
      for (u32 l = 0; l < W && base + l < end; ++l) peers[key[base + l]].push_back(l);
      each_row(base, peers);
    }
  };
  for (u32 w = 0; w < waves; ++w)
    rows(w, [&](u32, const std::map<u32, std::vector<u32>>& peers) {
      for (const auto& [k, lanes] : peers) count[w][k] += static_cast<u32>(lanes.size());  // the lowest lane adds them
    });
  std::vector<u32> total(keys, 0);
  for (u32 k = 0; k < keys; ++k)
    for (u32 w = 0; w < waves; ++w) {
      const u32 c = count[w][k];
      count[w][k] = total[k];
      total[k] += c;
    }
  std::vector<u32> first_position(keys, 0), first_tile(keys, 0);
  for (u32 k = 1; k < keys; ++k) {
    first_position[k] = first_position[k - 1] + total[k - 1];
    first_tile[k] = first_tile[k - 1] + (total[k - 1] + Contract::tile - 1) / Contract::tile;
  }
  oracles::grouped_plan p;
  p.routes.assign(routes, 0xFFFFFFFFu);
  for (u32 w = 0; w < waves; ++w)
    rows(w, [&](u32 base, const std::map<u32, std::vector<u32>>& peers) {
      for (const auto& [k, lanes] : peers) {
        for (u32 rank = 0; rank < lanes.size(); ++rank) p.routes[first_position[k] + count[w][k] + rank] = base + lanes[rank];
        count[w][k] += static_cast<u32>(lanes.size());
      }
    });
  for (u32 k = 0; k < keys; ++k)
    for (u32 j = 0; j * Contract::tile < total[k]; ++j)
      p.tiles.push_back({k, first_position[k] + j * Contract::tile, std::min(Contract::tile, total[k] - j * Contract::tile)});
  return p;
}

std::vector<std::int32_t> skewed_ids(int tokens, std::uint64_t seed) {
  std::vector<std::int32_t> ids = oracles::routed_ids(tokens, seed, 24);
  for (std::size_t r = 0; r < ids.size(); r += 7) ids[r] = (r % 3 == 0) ? -1 : (r % 3 == 1) ? 300 : 5;  // invalid ids and duplicates
  return ids;
}

template <class Contract> void check_plans() {
  for (int tokens : {1, 2, 17, 24, 32, 64, 128, 255, 256}) {
    if (tokens > static_cast<int>(Contract::max_tokens)) continue;
    for (const auto& ids : {oracles::routed_ids(tokens, 11 + tokens), skewed_ids(tokens, 5), std::vector<std::int32_t>(tokens * 9, 7)}) {
      const oracles::grouped_plan want = oracles::make_grouped_plan(ids, Contract::tile), got = model_plan<Contract>(ids);
      CHECK(got.routes == want.routes);
      CHECK(got.tiles == want.tiles);
      CHECK(want.tiles.size() <= Contract::layout::max_tiles(static_cast<u32>(ids.size())));
      u32 expert_tiles = 0;
      for (const auto& t : want.tiles) expert_tiles += t.key < 257;
      CHECK(expert_tiles <= Contract::layout::max_expert_tiles(static_cast<u32>(ids.size())));
    }
  }
}

/// Small-integer E4M3 bytes (-4 .. 4): every product and sum is exact.
std::uint8_t small_e4m3(std::uint64_t h) { return e4m3_from_f32_reference(static_cast<float>(static_cast<int>(h % 9) - 4)); }

/// D of one block (byte k0 of the rows / columns) for chunk `chunk` of a tile, as the kernels take
/// their operands, run on the instruction model `mma(a_words, b_words, c)` per instruction and
/// instruction tile; compared with the plain product. Returns the number of mismatching items.
template <class Target, u32 Stride, class Mma>
long block_product_mismatches(const std::vector<std::uint8_t>& w, const std::vector<std::uint8_t>& lds, u32 chunk, u32 k0, Mma mma) {
  using F = kernels::moe_grouped::fragment<Target>;
  using S = typename F::shape;
  constexpr u32 W = F::wave;
  long bad = 0;
  auto word_of = [](const std::uint8_t* bytes, u32 word) {
    u32 v;
    std::memcpy(&v, bytes + 4 * word, 4);
    return v;
  };
  for (u32 n = 0; n < F::tiles; ++n) {
    std::vector<std::array<float, S::d_items>> d(W);
    for (auto& x : d) x.fill(0.0f);
    for (u32 q = 0; q < F::mmas; ++q) {
      std::array<std::array<u32, S::a_words>, W> a{};
      std::array<std::array<u32, S::b_words>, W> b{};
      for (u32 l = 0; l < W; ++l) {
        for (u32 i = 0; i < S::a_words; ++i) {
          const auto src = F::a_word(q, i);
          const netra::fragment::piece pc = F::weight_piece(l, src.piece);
          a[l][i] = word_of(w.data() + pc.index * 2048 + k0 + pc.k, src.word);  // load_weight_pieces' address
        }
        for (u32 i = 0; i < S::b_words; ++i) {
          const auto src = F::b_word(q, i);
          const netra::fragment::piece pc = F::act_piece(l, n, src.piece);
          b[l][i] = word_of(lds.data() + (chunk * F::chunk_columns + pc.index) * Stride + k0 + pc.k, src.word);  // chunk_product's address
        }
      }
      d = mma(a, b, d);
    }
    for (u32 l = 0; l < W; ++l)
      for (u32 i = 0; i < S::d_items; ++i) {
        const u32 col = kernels::moe_grouped::item_column<Target>(l, chunk, n, i), row = kernels::moe_grouped::item_row<Target>(l, n, i);
        double want = 0;
        for (u32 k = k0; k < k0 + 128; ++k) want += static_cast<double>(f32_from_e4m3(w[row * 2048 + k])) * f32_from_e4m3(lds[col * Stride + k]);
        bad += static_cast<double>(d[l][i]) != want;
      }
  }
  return bad;
}

}  // namespace

TEST_CASE("grouped tiles: one block product as the kernels take it, on the instruction models") {
  constexpr u32 stride = contracts::moe_grouped_gate_up<sm90a, 17, 256, 32>::column_stride;
  std::vector<std::uint8_t> w(16 * 2048), lds(32 * stride);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = small_e4m3(oracles::mix(1, i, 0, 0));
  for (std::size_t i = 0; i < lds.size(); ++i) lds[i] = small_e4m3(oracles::mix(2, i, 0, 0));
  for (u32 chunk = 0; chunk < 2; ++chunk)
    for (u32 k0 : {0u, 128u, 1920u}) {
      CHECK(block_product_mismatches<sm90a, stride>(w, lds, chunk, k0, [](const auto& a, const auto& b, const auto& c) {
              models::warp_a ma{};
              models::warp_b mb{};
              models::warp_c mc{};
              for (u32 l = 0; l < 32; ++l) {
                for (u32 i = 0; i < 4; ++i) ma[l][i] = a[l][i], mc[l][i] = c[l][i];
                for (u32 i = 0; i < 2; ++i) mb[l][i] = b[l][i];
              }
              const models::warp_c r = models::mma_m16n8k32_e4m3(ma, mb, mc);
              std::vector<std::array<float, 4>> d(32);
              for (u32 l = 0; l < 32; ++l)
                for (u32 i = 0; i < 4; ++i) d[l][i] = r[l][i];
              return d;
            }) == 0);
      auto gfx950_model = [](auto order) {
        return [](const auto& a, const auto& b, const auto& c) {
          models::lane_words<8> ma{}, mb{};
          models::lane_floats<4> mc{};
          for (u32 l = 0; l < 64; ++l) {
            for (u32 i = 0; i < 8; ++i) ma[l][i] = a[l][i], mb[l][i] = b[l][i];
            for (u32 i = 0; i < 4; ++i) mc[l][i] = c[l][i];
          }
          const auto r = models::v_mfma_f32_16x16x128_e4m3<decltype(order)::value>(ma, mb, mc);
          std::vector<std::array<float, 4>> d(64);
          for (u32 l = 0; l < 64; ++l)
            for (u32 i = 0; i < 4; ++i) d[l][i] = r[l][i];
          return d;
        };
      };
      using halves = std::integral_constant<models::k_order_16x16x128, models::k_order_16x16x128::halves>;
      using contiguous = std::integral_constant<models::k_order_16x16x128, models::k_order_16x16x128::contiguous>;
      CHECK(block_product_mismatches<gfx950, stride>(w, lds, chunk, k0, gfx950_model(halves{})) == 0);
      CHECK(block_product_mismatches<gfx950, stride>(w, lds, chunk, k0, gfx950_model(contiguous{})) == 0);
    }
}

TEST_CASE("grouped plan: the kernel's grouping equals the stable counting order (wave32 and wave64)") {
  check_plans<contracts::moe_grouped_plan<sm90a, 256, 16>>();
  check_plans<contracts::moe_grouped_plan<gfx950, 256, 16>>();
  check_plans<contracts::moe_grouped_plan<sm90a, 768, 32>>();
  check_plans<contracts::moe_grouped_plan<gfx950, 768, 64>>();
  // the full M768 stream, every tile size
  const auto ids = oracles::routed_ids(768, 99);
  CHECK(model_plan<contracts::moe_grouped_plan<gfx950, 768, 64>>(ids).routes == oracles::make_grouped_plan(ids, 64).routes);
  CHECK(model_plan<contracts::moe_grouped_plan<sm90a, 768, 32>>(ids).tiles == oracles::make_grouped_plan(ids, 32).tiles);
}

// The failure of the block at 24 and 32 tokens on the H200 at 58e5a30 (bench/results/
// moe_block_h200.json): the block gave 1..32 tokens to the persistent experts, whose gate_up
// lister was the 16-token stage's (144 routes: 5 wave rows of 32 = routes 0 .. 159), so routes
// 160 .. 9M - 1 were never served (24 tokens: 216 routes). Now the decode chain ends at 16
// tokens (the persistent experts went to lab/moe) and the grouped mid configuration takes
// 17 .. 256; on its kernels' grids (launch
// shapes) and the plan model every (route, intermediate group) of gate_up, every (route, row
// tile) of down and every (token, column pair) of the route sum is served exactly once.
template <class Config> void check_served_once(int tokens, const std::vector<std::int32_t>& ids) {
  using gate_up = kernels::moe_grouped_gate_up_kernel<typename Config::gate_up>;
  using down = kernels::moe_grouped_down_kernel<typename Config::down>;
  using reduce = kernels::moe_grouped_reduce_kernel<typename Config::reduce>;
  const u32 routes = static_cast<u32>(ids.size());
  const oracles::grouped_plan plan = model_plan<typename Config::plan>(ids);
  const launch_shape g = gate_up::shape(static_cast<u32>(tokens)), d = down::shape(static_cast<u32>(tokens));
  REQUIRE(plan.tiles.size() <= g.grid[1]);
  std::vector<int> gate_up_served(routes * g.grid[0], 0), down_served(routes * d.grid[0], 0);
  for (u32 j = 0; j < g.grid[1]; ++j)  // workgroup (x, j); past the call's tiles they exit
    for (u32 x = 0; x < g.grid[0] && j < plan.tiles.size(); ++x)
      for (u32 c = 0; c < plan.tiles[j].routes; ++c) ++gate_up_served[plan.routes[plan.tiles[j].first + c] * g.grid[0] + x];
  for (u32 j = 0; j < d.grid[1]; ++j)  // the invalid key's tiles (last) get no down workgroup: their y is +0
    for (u32 x = 0; x < d.grid[0] && j < plan.tiles.size() && plan.tiles[j].key < 257; ++x)
      for (u32 c = 0; c < plan.tiles[j].routes; ++c) ++down_served[plan.routes[plan.tiles[j].first + c] * d.grid[0] + x];
  for (u32 r = 0; r < routes; ++r) {
    INFO("tokens ", tokens, ", route ", r);
    for (u32 x = 0; x < g.grid[0]; ++x) CHECK(gate_up_served[r * g.grid[0] + x] == 1);
    for (u32 x = 0; x < d.grid[0]; ++x) CHECK(down_served[r * d.grid[0] + x] == (oracles::valid_expert(ids[r]) ? 1 : 0));
  }
  CHECK(g.grid[0] * gate_up::group == moe::expert_weights::intermediate);
  CHECK(d.grid[0] * down::workgroup_rows == moe::expert_weights::hidden);
  CHECK(reduce::shape(static_cast<u32>(tokens)).grid[1] == static_cast<u32>(tokens));
  CHECK(reduce::shape(static_cast<u32>(tokens)).grid[0] * reduce::columns == moe::expert_weights::hidden);
}

TEST_CASE("down through its ring (mid_dring, large_dring) serves every route once") {
  for (int tokens : {17, 64, 256})
    for (const auto& ids : {oracles::routed_ids(tokens, 2000 + tokens), skewed_ids(tokens, 5), std::vector<std::int32_t>(tokens * 9, 7)})
      check_served_once<tactics::grouped_mid_dring<sm90a>>(tokens, ids);
  for (int tokens : {257, 300, 768})
    for (const auto& ids : {oracles::routed_ids(tokens, 2000 + tokens), skewed_ids(tokens, 5), std::vector<std::int32_t>(tokens * 9, 7)})
      check_served_once<tactics::grouped_large_dring<sm90a>>(tokens, ids);
}

TEST_CASE("Trim: the instruction tiles that run hold every route's column, and only those tiles run") {
  using F = kernels::moe_grouped::fragment<sm90a>;
  static_assert(F::tiles == 2 && F::tile_columns == 8);
  for (u32 routes = 1; routes <= 32; ++routes)
    for (u32 c = 0; c < ceil_div(routes, F::chunk_columns); ++c)
      for (u32 n = 0; n < F::tiles; ++n) {
        const u32 first = c * F::chunk_columns + n * F::tile_columns;
        CHECK(kernels::moe_grouped::tile_runs<sm90a, true>(c, n, routes) == (first < routes));
        CHECK(kernels::moe_grouped::tile_runs<sm90a, false>(c, n, routes));
      }
  using G = kernels::moe_grouped::fragment<gfx950>;  // one 16-column instruction tile a chunk: Trim changes nothing
  static_assert(G::tiles == 1);
  for (u32 routes = 1; routes <= 32; ++routes)
    for (u32 c = 0; c < ceil_div(routes, G::chunk_columns); ++c) CHECK(kernels::moe_grouped::tile_runs<gfx950, true>(c, 0, routes));
  for (int tokens : {17, 64, 256})
    for (const auto& ids : {oracles::routed_ids(tokens, 2100 + tokens), skewed_ids(tokens, 6), std::vector<std::int32_t>(tokens * 9, 7)}) {
      check_served_once<tactics::grouped_mid_trim_rows8<sm90a>>(tokens, ids);
      check_served_once<tactics::grouped_mid_trim_rows16<sm90a>>(tokens, ids);
    }
  CHECK(std::size(tactics::grouped_mid_trim_rows8<sm90a>::down::template_args) == 7);
  CHECK(std::size(tactics::grouped_mid_trim_rows8<sm90a>::gate_up::template_args) == 5);
  CHECK(std::size(tactics::grouped_mid_dring<sm90a>::gate_up::template_args) == 4);  // the Trim 0 instances keep their names
  CHECK(kernels::moe_grouped_down_kernel<tactics::grouped_mid_trim_rows8<sm90a>::down>::min_workgroups_per_processor == 3);
  CHECK(kernels::moe_grouped_down_kernel<tactics::grouped_mid_trim_rows8<sm90a>::down>::passes == 2);
  CHECK(kernels::moe_grouped_down_kernel<tactics::grouped_mid_trim_rows16<sm90a>::down>::passes == 1);
  CHECK(kernels::moe_grouped_gate_up_kernel<tactics::grouped_mid_trim_rows8<sm90a>::gate_up>::min_workgroups_per_processor == 2);
}

TEST_CASE("the block at 17 .. 32 tokens: the grouped mid configuration serves every route once") {
  // the block's experts: the decode chain up to 16 tokens, grouped from 17
  static_assert(tactics::grouped_min_tokens == contracts::moe_expert_gate_up_decode<sm90a>::max_tokens + 1);
  for (int tokens = 17; tokens <= 32; ++tokens) {
    CHECK(std::string(tactics::grouped_configuration<sm90a>(tokens)) == tactics::grouped_dispatch<sm90a>::mid_name);
    CHECK(std::string(tactics::grouped_configuration<gfx950>(tokens)) == "mid");
    for (const auto& ids : {oracles::routed_ids(tokens, 1000 + tokens), skewed_ids(tokens, 3), std::vector<std::int32_t>(tokens * 9, 7)}) {
      check_served_once<tactics::grouped_mid_of<sm90a>>(tokens, ids);
      check_served_once<tactics::grouped_mid<gfx950>>(tokens, ids);
    }
  }
}

TEST_CASE("split-K partials: FP16 rounding bit for bit against _Float16") {
  using kernels::moe_grouped::f16_from_f32_rn;
  using kernels::moe_grouped::f32_from_f16;
  std::vector<float> xs = {0.0f, -0.0f, 65504.0f, 65519.996f, 65520.0f, -65520.0f, 1e30f, 5.9604645e-08f, 2.9802322e-08f, 2.9802326e-08f,
                           8.940697e-08f, 6.097555e-05f, 6.1035156e-05f, bit_cast<float>(0x7F800000u), bit_cast<float>(0xFF800000u)};
  std::uint64_t h = 1;
  for (int i = 0; i < 400000; ++i) {
    h = oracles::mix(h, 3, 5, 7);
    const u32 bits = static_cast<u32>(h);
    const u32 e = 100 + static_cast<u32>((h >> 40) % 45);  // exponents around FP16's range
    xs.push_back(bit_cast<float>((bits & 0x807FFFFFu) | (e << 23)));
    xs.push_back(bit_cast<float>(bits));
  }
  long mismatches = 0;
  for (float x : xs) {
    if (x != x) continue;
    const _Float16 ref = static_cast<_Float16>(x);
    std::uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, 2);
    mismatches += f16_from_f32_rn(x) != ref_bits;
    if (f16_from_f32_rn(x) != ref_bits && mismatches < 5) MESSAGE("x = " << x << " got " << f16_from_f32_rn(x) << " want " << ref_bits);
  }
  CHECK(mismatches == 0);
  CHECK(f16_from_f32_rn(bit_cast<float>(0x7FC00000u)) == 0x7E00);
  for (u32 v = 0; v < 0x10000; ++v) {
    if ((v & 0x7C00u) == 0x7C00u && (v & 0x3FFu) != 0) continue;  // NaN payloads
    _Float16 f;
    const std::uint16_t b = static_cast<std::uint16_t>(v);
    std::memcpy(&f, &b, 2);
    CHECK(bit_cast<u32>(f32_from_f16(b)) == bit_cast<u32>(static_cast<float>(f)));
  }
}

TEST_CASE("grouped contracts: launch geometry, the article's M768 figures, domains") {
  using producer = kernels::moe_grouped_down_kernel<contracts::moe_split_k_down<gfx950>>;
  using reducer = kernels::moe_grouped_reduce_kernel<contracts::moe_split_k_reduce<gfx950>>;
  CHECK(producer::shape(768).grid[0] == 2);
  CHECK(producer::shape(768).grid[1] == 365);
  CHECK(reducer::shape(768).grid[0] == 16);
  CHECK(reducer::shape(768).grid[1] == 768);
  CHECK(contracts::moe_split_k_down<gfx950>::budget().max_vgprs == 256);
  CHECK(contracts::moe_split_k_down<gfx950>::budget().max_lds_bytes == 65536);
  CHECK(contracts::moe_split_k_reduce<gfx950>::budget().max_vgprs == 28);
  CHECK(contracts::moe_split_k_down<gfx950>::partials_bytes == 2ull * 6912 * 2048 * 2);
  // every M in [17, 768] has exactly one first configuration on each target; on gfx950 768 is the
  // split-K pair, sm90a dispatches the ring forms (chosen by measurement)
  for (i64 m = 1; m <= 800; ++m) {
    CHECK((std::string(tactics::grouped_configuration<sm90a>(m)).empty() == (m < 17 || m > 768)));
    CHECK((std::string(tactics::grouped_configuration<gfx950>(m)).empty() == (m < 17 || m > 768)));
  }
  CHECK(std::string(tactics::grouped_configuration<gfx950>(768)) == "split_k");
  CHECK(std::string(tactics::grouped_configuration<gfx950>(128)) == "mid");
  CHECK(std::string(tactics::grouped_configuration<gfx950>(512)) == "large");
  CHECK(std::string(tactics::grouped_configuration<sm90a>(128)) == "mid_trim_rows8");
  CHECK(std::string(tactics::grouped_configuration<sm90a>(768)) == "large_dring");
  // a 2-block ring fits two gate_up workgroups per SM, the 4-block one (mid_ring) one
  using ring2 = kernels::moe_grouped_gate_up_kernel<tactics::grouped_mid_ring2<sm90a>::gate_up>;
  CHECK(ring2::min_workgroups_per_processor == 2);
  CHECK(kernels::moe_grouped_gate_up_kernel<tactics::grouped_mid_ring<sm90a>::gate_up>::min_workgroups_per_processor == 1);
  CHECK(kernels::moe_grouped_gate_up_kernel<tactics::grouped_mid<sm90a>::gate_up>::min_workgroups_per_processor == 1);
  CHECK(kernels::moe_grouped_down_kernel<tactics::grouped_mid_dring<sm90a>::down>::passes == 4);
  // down through its ring: no weight registers, as many workgroups an SM as its LDS allows (at most 3)
  using dring = kernels::moe_grouped_down_kernel<tactics::grouped_mid_dring<sm90a>::down>;
  CHECK(dring::min_workgroups_per_processor == 3);
  CHECK(kernels::moe_grouped_down_kernel<tactics::grouped_large_dring<sm90a>::down>::min_workgroups_per_processor == 2);
  CHECK(kernels::moe_grouped_down_kernel<tactics::grouped_mid_ring<sm90a>::down>::min_workgroups_per_processor == 1);
  CHECK(dring::dynamic_lds_bytes == 4 * 16384);
  CHECK(std::size(tactics::grouped_mid_dring<sm90a>::down::template_args) == 6);
  CHECK(std::size(tactics::grouped_mid_ring<sm90a>::down::template_args) == 5);  // its instance name unchanged
  static_assert(boost::hana::length(tactics::grouped_configs<sm90a>) == boost::hana::size_c<2>);
  static_assert(boost::hana::length(tactics::grouped_configs<gfx950>) == boost::hana::size_c<3>);
  static_assert(boost::hana::length(tactics::moe_grouped_down) == boost::hana::size_c<5>);  // mid x 2, the gfx950 split-K pair, large x 2
}

TEST_CASE("grouped contracts refuse what they do not serve, naming the field") {
  using W = moe::expert_weights;
  alignas(16) static std::uint8_t buffer[64];
  const device_ref cuda{2, 0};
  auto tensor = [&](dtype t, std::initializer_list<i64> extents) { return strided_tensor(buffer, t, cuda, extents); };
  auto refused_at = [](const decision& d) { return std::string(d.admitted() ? "" : d.field); };

  using gate_up = contracts::moe_grouped_gate_up<sm90a, 17, 256, 16>;
  moe_grouped_gate_up_signature s{};
  s.target = target_id::sm90a;
  s.device = cuda;
  s.tokens = 17;
  s.plan_tile = 16;
  s.plan = buffer;
  s.plan_bytes = gate_up::layout::bytes;
  s.act = tensor(dtype::e4m3, {153, 512});
  s.act_scales = tensor(dtype::f32, {153, 4});
  s.w13 = tensor(dtype::e4m3, {257, 1024, 2048});
  s.s13 = tensor(dtype::f32, {257, 8, 16});
  CHECK(gate_up::admits(s).admitted());
  auto t = s;
  t.tokens = 16;
  CHECK(refused_at(gate_up::admits(t)) == "tokens");
  t = s;
  t.tokens = 257;
  CHECK(refused_at(gate_up::admits(t)) == "tokens");
  t = s;
  t.plan_tile = 32;
  CHECK(refused_at(gate_up::admits(t)) == "plan tile");
  t = s;
  t.plan_bytes = gate_up::layout::bytes - 1;
  CHECK(refused_at(gate_up::admits(t)) == "plan_bytes");
  t = s;
  t.act = tensor(dtype::e4m3, {152, 512});  // one route short
  CHECK(refused_at(gate_up::admits(t)) == "act");
  t = s;
  t.act_scales = tensor(dtype::bf16, {153, 4});
  CHECK(refused_at(gate_up::admits(t)) == "act_scales");
  t = s;
  t.w13 = tensor(dtype::e4m3, {256, 1024, 2048});
  CHECK(refused_at(gate_up::admits(t)) == "w13");
  t = s;
  t.gate_up = tensor(dtype::bf16, {153, 1024});
  CHECK(gate_up::admits(t).admitted());
  t.gate_up = strided_tensor(buffer + 4, dtype::bf16, cuda, {153, 1024});
  CHECK(refused_at(gate_up::admits(t)) == "gate_up");
  t = s;
  t.act.device = {2, 1};  // another device
  CHECK(refused_at(gate_up::admits(t)) == "act");
  t = s;
  t.target = target_id::gfx950;
  CHECK(refused_at(gate_up::admits(t)) == "target");

  using plan = contracts::moe_grouped_plan<sm90a, 256, 16>;
  moe_grouped_plan_signature ps{target_id::sm90a, cuda, tensor(dtype::bf16, {17, 2048}), tensor(dtype::i32, {17, 9}), buffer, plan::layout::bytes};
  CHECK(plan::admits(ps).admitted());
  auto pt = ps;
  pt.ids = tensor(dtype::i32, {16, 9});
  CHECK(refused_at(plan::admits(pt)) == "ids");
  pt = ps;
  pt.hidden = tensor(dtype::bf16, {300, 2048});
  CHECK(refused_at(plan::admits(pt)) == "tokens");

  using down = contracts::moe_split_k_down<sm90a>;
  moe_grouped_down_signature d{};
  d.target = target_id::sm90a;
  d.device = cuda;
  d.tokens = 768;
  d.plan_tile = down::tile;
  d.plan = d.partials = buffer;
  d.plan_bytes = down::layout::bytes;
  d.partials_bytes = down::partials_bytes;
  d.act = tensor(dtype::e4m3, {6912, 512});
  d.act_scales = tensor(dtype::f32, {6912, 4});
  d.w2 = tensor(dtype::e4m3, {257, W::hidden, W::intermediate});
  d.s2 = tensor(dtype::f32, {257, 16, 4});
  CHECK(down::admits(d).admitted());
  auto e = d;
  e.tokens = 767;
  CHECK(refused_at(down::admits(e)) == "tokens");
  e = d;
  e.partials_bytes = down::partials_bytes - 16;
  CHECK(refused_at(down::admits(e)) == "partials_bytes");
  e = d;
  e.s2 = tensor(dtype::f32, {257, 16, 5});
  CHECK(refused_at(down::admits(e)) == "s2");

  using reduce = contracts::moe_split_k_reduce<sm90a>;
  moe_grouped_reduce_signature r{target_id::sm90a, cuda, buffer, reduce::partials_bytes, tensor(dtype::i32, {768, 9}), tensor(dtype::f32, {768, 9}),
                                 tensor(dtype::bf16, {768, 2048})};
  CHECK(reduce::admits(r).admitted());
  auto q = r;
  q.ids = tensor(dtype::i32, {767, 9});
  CHECK(refused_at(reduce::admits(q)) == "tokens");
  q = r;
  q.out = tensor(dtype::bf16, {768, 1024});
  CHECK(refused_at(reduce::admits(q)) == "out");
  q = r;
  q.ids.data = nullptr;
  CHECK(refused_at(reduce::admits(q)) == "ids");
}
