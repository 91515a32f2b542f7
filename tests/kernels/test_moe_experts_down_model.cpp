// The down kernel's decomposition modelled on the host (tests/kernels/moe_experts_model.hpp):
// both inputs within the policy, the fused act_quant prologue's bits, duplicate ids, adversarial
// route metadata, the unit schedule, and what the runtime reads of each staging.
#include "kernels/moe_experts_model.hpp"

using namespace netra;
using models::k_order_16x16x128;

namespace {

// ---- down ---------------------------------------------------------------------------------------

template <class Contract, k_order_16x16x128 Order>
std::vector<std::uint16_t> down_model(int tokens, const std::vector<std::uint8_t>& act, const std::vector<float>& act_scales,
                                      const std::vector<std::uint16_t>& gate_up_out, const std::vector<std::int32_t>& ids,
                                      const std::vector<float>& route_weights, const oracles::expert_weight_view& w,
                                      const std::vector<unsigned>& tiles) {
  using target = typename Contract::target;
  using format = typename Contract::fp8_format;
  using K = kernels::moe_expert_down_kernel<Contract>;
  using F = typename K::F;
  constexpr unsigned W = F::wave;
  const unsigned routes = static_cast<unsigned>(tokens) * 9;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(tokens) * 2048, poison_bf16);
  for (unsigned tile : tiles) {
    const unsigned row0 = tile * K::tile_rows;
    std::vector<std::array<std::array<float, 16>, 4>> partial(routes);
    for (unsigned route = 0; route < routes; ++route) {
      const std::int32_t e = ids[route];
      if (!moe::expert_weights::valid_expert(e)) {
        for (auto& blk : partial[route]) blk.fill(0.0f);
        continue;
      }
      unsigned occurrence = 0;
      for (unsigned r = 0; r < route; ++r) occurrence += ids[r] == e;
      if (occurrence % K::chunk_columns != 0) continue;  // the unit at occurrence 0, 16, .. serves 16 routes
      bool earlier;
      const auto cols = columns_of(ids, route, earlier);
      {
        const unsigned chunk = 0;
        const unsigned columns = std::min<unsigned>(static_cast<unsigned>(cols.size()), K::chunk_columns);
        for (unsigned n = 0; n < F::tiles; ++n) {
          if (n * F::tile_columns >= columns) continue;
          for (unsigned b = 0; b < K::blocks; ++b) {
            pieces_t<target> wp{}, q{};
            std::array<float, W> sa{};
            std::array<unsigned, W> lane_route{};
            std::array<std::uint32_t, W> magnitude{};
            std::array<std::array<std::uint32_t, 8>, F::act_pieces> y_words[W] = {};
            for (unsigned l = 0; l < W; ++l) {
              for (unsigned v = 0; v < F::weight_pieces; ++v) {
                const auto pc = F::weight_piece(l, v);
                std::uint8_t bytes[16];
                for (unsigned i = 0; i < 16; ++i) bytes[i] = w.w2(e, static_cast<int>(row0 + pc.index), static_cast<int>(b * 128 + pc.k + i));
                for (unsigned j = 0; j < 4; ++j) wp[l][v][j] = word_of(bytes + 4 * j);
              }
              const unsigned col = K::lane_column(l, n);
              const bool live = col < columns;
              const unsigned r = live ? cols[chunk * K::chunk_columns + col] : kernels::moe_experts::no_route;
              lane_route[l] = r;
              if constexpr (!Contract::fused_act_quant) {
                for (unsigned v = 0; v < F::act_pieces; ++v)
                  for (unsigned j = 0; j < 4; ++j) q[l][v][j] = live ? word_of(&act[r * 512 + b * 128 + F::act_piece(l, n, v).k + 4 * j]) : 0;
                sa[l] = live ? act_scales[r * 4 + b] : 0.0f;
              } else {
                for (unsigned v = 0; v < F::act_pieces; ++v)
                  for (unsigned j = 0; j < 8; ++j) {
                    std::uint32_t word = 0;
                    if (live) {
                      const unsigned k = b * 128 + F::act_piece(l, n, v).k + 2 * j;
                      const std::uint16_t* row = &gate_up_out[r * 1024];
                      const float lo = mul_rn(silu_f32(f32_from_bf16(row[k])), f32_from_bf16(row[512 + k]));
                      const float hi = mul_rn(silu_f32(f32_from_bf16(row[k + 1])), f32_from_bf16(row[512 + k + 1]));
                      word = bf16_from_f32_reference(lo) | (static_cast<std::uint32_t>(bf16_from_f32_reference(hi)) << 16);
                    }
                    y_words[l][v][j] = word;
                    magnitude[l] = std::max(magnitude[l], kernels::bf16x2_magnitude_max(word));
                  }
              }
            }
            if constexpr (Contract::fused_act_quant) {
              group_max<F>(magnitude);
              for (unsigned l = 0; l < W; ++l) {
                const float scale = kernels::act_quant_scale<format>(magnitude[l]);
                const float divisor = kernels::act_quant_divisor(magnitude[l], scale);
                sa[l] = lane_route[l] != kernels::moe_experts::no_route ? scale : 0.0f;
                for (unsigned v = 0; v < F::act_pieces; ++v) {
                  std::uint8_t bytes[16];
                  for (unsigned i = 0; i < 16; ++i) {
                    const std::uint32_t word = y_words[l][v][i / 2];
                    const float y = f32_from_bf16(static_cast<std::uint16_t>(i % 2 ? word >> 16 : word & 0xFFFF));
                    bytes[i] = fp8_from_f32_reference<format>(div_rn(y, divisor));
                  }
                  for (unsigned j = 0; j < 4; ++j) q[l][v][j] = word_of(bytes + 4 * j);
                }
              }
            }
            const auto d = block_d<target, Order>(wp, q);
            const float sw = w.s2(e, static_cast<int>(row0 / 128), static_cast<int>(b));
            for (unsigned l = 0; l < W; ++l)
              for (unsigned i = 0; i < F::shape::d_items; ++i) {
                const auto el = F::d_element(l, n, i);
                const unsigned src = F::d_column_is_b_column ? l : F::b_lane_of(el.col - n * F::tile_columns);
                if (lane_route[src] == kernels::moe_experts::no_route) continue;
                partial[lane_route[src]][b][el.row] = mul_rn(d[l][i], mul_rn(sa[src], sw));
              }
          }
        }
      }
    }
    for (int t = 0; t < tokens; ++t)
      for (unsigned row = 0; row < K::tile_rows; ++row) {
        float acc = 0.0f;
        for (unsigned s = 0; s < 9; ++s) {
          const auto& p = partial[static_cast<unsigned>(t) * 9 + s];
          const float y = add_rn(add_rn(add_rn(p[0][row], p[1][row]), p[2][row]), p[3][row]);
          acc = fma_rn(route_weights[static_cast<unsigned>(t) * 9 + s], y, acc);
        }
        out[static_cast<unsigned>(t) * 2048 + row0 + row] = bf16_from_f32_reference(acc);
      }
  }
  return out;
}

struct down_case {
  int tokens;
  std::vector<std::int32_t> ids;
  std::vector<float> route_weights;
  std::vector<std::uint16_t> gate_up_out;  // BF16 [9M, 1024]
  std::vector<std::uint8_t> act;           // act_quant(gate_up_out)
  std::vector<float> act_scales;
};

template <class Format = fp8::e4m3fn>
down_case make_down_case(int tokens, std::uint64_t seed, std::vector<std::int32_t> ids, float gate_sigma = 0.5f) {
  down_case c{tokens, std::move(ids), {}, {}, {}, {}};
  oracles::xorshift r{seed * 31 + 7};
  c.route_weights.resize(static_cast<std::size_t>(tokens) * 9);
  for (auto& v : c.route_weights) v = 0.05f + 0.1f * (r.uniform() + 1.0f);
  c.gate_up_out.resize(static_cast<std::size_t>(tokens) * 9 * 1024);
  for (auto& v : c.gate_up_out) v = bf16_from_f32_reference((r.uniform() + r.uniform()) * gate_sigma * 4.0f);
  c.act.resize(static_cast<std::size_t>(tokens) * 9 * 512);
  c.act_scales.resize(static_cast<std::size_t>(tokens) * 9 * 4);
  oracles::act_quant<Format>(c.gate_up_out.data(), tokens * 9, 1024, c.act.data(), c.act_scales.data());
  return c;
}

template <class Contract, k_order_16x16x128 Order = k_order_16x16x128::halves>
oracles::policy_report check_down(const down_case& c, const oracles::expert_weight_view& w, const std::vector<unsigned>& tiles) {
  std::vector<bool> selected(2048, false);
  for (unsigned t : tiles)
    for (unsigned i = 0; i < 16; ++i) selected[t * 16 + i] = true;
  const auto got = down_model<Contract, Order>(c.tokens, c.act, c.act_scales, c.gate_up_out, c.ids, c.route_weights, w, tiles);
  const auto ref = oracles::down_reference<typename Contract::fp8_format>(c.tokens, c.act.data(), c.act_scales.data(), c.ids.data(),
                                                                         c.route_weights.data(), w,
                                                                         [&](int n) { return selected[static_cast<std::size_t>(n)]; });
  return oracles::check_policy(ref, got, [&](std::size_t i) { return selected[i % 2048]; });
}
}  // namespace

// ---- down ---------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("down model, M = 1, every tile, both inputs, within the policy", Target, gfx950, sm90a) {
  const auto w = hashed_weights({7});
  const auto c = make_down_case(1, 4, oracles::routed_ids(1, 4));
  const auto a = check_down<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>>(c, w, all_tiles(128));
  INFO(a.describe());
  CHECK(a.checked == 2048);
  CHECK(a.failures == 0);
  const auto b = check_down<contracts::moe_expert_down<Target, 4, moe_down_input_gate_up>>(c, w, {0, 64, 127});
  INFO(b.describe());
  CHECK(b.failures == 0);
  if constexpr (same_v<Target, gfx950>) {
    const auto alt = check_down<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>, k_order_16x16x128::contiguous>(c, w, {5, 99});
    CHECK(alt.failures == 0);
  }
}

TEST_CASE("down model on gfx942: act_quant fused in E4M3FNUZ (amax / 240), FNUZ W2, four MFMA 16x16x32 per block, within the policy") {
  using C = contracts::moe_expert_down_fused_decode<gfx942>;
  auto w = hashed_weights({9});
  const auto ocp = w.w2;
  w.w2 = [ocp](int e, int n, int k) -> std::uint8_t { const std::uint8_t v = ocp(e, n, k); return v == 0x80 ? 0x00 : v; };  // 0x80 is FNUZ's NaN
  for (int tokens : {1, 4}) {
    const auto c = make_down_case<fp8::e4m3fnuz>(tokens, 50 + tokens, oracles::routed_ids(tokens, 50 + tokens, tokens == 4 ? 24 : 256));
    const auto rep = check_down<C>(c, w, tokens == 1 ? all_tiles(128) : std::vector<unsigned>{0, 64, 127});
    INFO("tokens ", tokens, ": ", rep.describe());
    CHECK(rep.checked == tokens * (tokens == 1 ? 2048 : 48));
    CHECK(rep.failures == 0);
  }
  // the same bytes taken as E4M3FN (an OCP act_quant and reference): outside the policy
  const auto c = make_down_case<fp8::e4m3fnuz>(1, 51, oracles::routed_ids(1, 51));
  const auto as_ocp = make_down_case<fp8::e4m3fn>(1, 51, oracles::routed_ids(1, 51));
  std::vector<bool> sel(2048, false);
  for (unsigned i = 0; i < 16; ++i) sel[i] = true;
  const auto got = down_model<C, k_order_16x16x128::halves>(c.tokens, c.act, c.act_scales, c.gate_up_out, c.ids, c.route_weights, w, {0});
  const auto ref = oracles::down_reference<fp8::e4m3fn>(1, as_ocp.act.data(), as_ocp.act_scales.data(), as_ocp.ids.data(), as_ocp.route_weights.data(), w,
                                                        [&](int n) { return sel[static_cast<std::size_t>(n)]; });
  CHECK(oracles::check_policy(ref, got, [&](std::size_t i) { return sel[i % 2048]; }).failures > 0);
}

TEST_CASE_TEMPLATE("down model: the fused act_quant prologue gives the bits of the E4M3 input", Target, gfx950, sm90a) {
  const auto w = hashed_weights({8});
  auto c = make_down_case(3, 8, oracles::routed_ids(3, 8, 20));
  c.gate_up_out[5 * 1024 + 7] = 0x7FC0;  // NaN gate: route 5's group 0 poisoned
  oracles::act_quant(c.gate_up_out.data(), 27, 1024, c.act.data(), c.act_scales.data());
  const std::vector<unsigned> tiles{2, 77};
  const auto a = down_model<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>, k_order_16x16x128::halves>(
      c.tokens, c.act, c.act_scales, c.gate_up_out, c.ids, c.route_weights, w, tiles);
  const auto b = down_model<contracts::moe_expert_down<Target, 4, moe_down_input_gate_up>, k_order_16x16x128::halves>(
      c.tokens, c.act, c.act_scales, c.gate_up_out, c.ids, c.route_weights, w, tiles);
  CHECK(a == b);
  CHECK(std::count(a.begin(), a.end(), 0x7FFF) == 32);  // token 0 (route 5) is NaN on both tiles
}

TEST_CASE_TEMPLATE("down model: more than 16 routes of one expert (duplicate ids): a unit per 16 of them, both inputs", Target, gfx950, sm90a) {
  const auto w = hashed_weights({14});
  const int tokens = 4;
  std::vector<std::int32_t> ids(tokens * 9, 42);  // 36 routes of expert 42: units at its occurrences 0, 16, 32
  ids[17] = 256;
  ids[30] = -3;
  const auto c = make_down_case(tokens, 14, ids);
  const auto a = check_down<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>>(c, w, {0, 127});
  INFO(a.describe());
  CHECK(a.checked == tokens * 32);
  CHECK(a.failures == 0);
  const auto b = check_down<contracts::moe_expert_down<Target, 4, moe_down_input_gate_up>>(c, w, {0, 127});
  INFO(b.describe());
  CHECK(b.failures == 0);
}

TEST_CASE_TEMPLATE("down model, M = 16 and adversarial route metadata, within the policy", Target, gfx950, sm90a) {
  const auto w = hashed_weights({12});
  auto ids = oracles::routed_ids(16, 12, 40);
  ids[3] = 257;           // invalid: y = 0
  ids[20] = ids[19];      // duplicate expert inside token 2
  ids[30] = -7;
  auto c = make_down_case(16, 12, ids);
  c.route_weights[4 * 9 + 2] = 0.0f;
  const auto rep = check_down<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>>(c, w, {0, 50, 127});
  INFO(rep.describe());
  CHECK(rep.checked == 16 * 48);
  CHECK(rep.failures == 0);
}

TEST_CASE_TEMPLATE("down: the schedule (the lister's units less invalid keys, in route order) serves every valid route once, as "
                   "its expert's occurrence 0, 16, .. unit",
                   Target, gfx950, sm90a) {
  using K = kernels::moe_expert_down_kernel<contracts::moe_expert_down_decode<Target>>;
  using schedule = typename K::schedule;
  using list = moe::expert_unit_list;
  std::vector<std::vector<std::int32_t>> cases;
  for (int tokens : {1, 2, 3, 4, 7, 16}) cases.push_back(oracles::routed_ids(tokens, 300 + tokens, tokens == 16 ? 40 : 256));
  {
    auto ids = oracles::routed_ids(16, 12, 40);
    ids[3] = 257, ids[20] = ids[19], ids[30] = -7, ids[31] = 300, ids[143] = -1;
    cases.push_back(ids);
  }
  {
    std::vector<std::int32_t> ids(16 * 9, 42);  // 144 routes of one expert: 9 units of 16
    ids[17] = 256, ids[30] = -3, ids[100] = 7, ids[101] = 7;
    cases.push_back(ids);
  }
  cases.push_back(std::vector<std::int32_t>(9, -1));  // no valid id: no unit
  for (const auto& ids : cases) {
    const unsigned routes = static_cast<unsigned>(ids.size());
    INFO("routes ", routes);
    // The lister's emits (its lane model equals this oracle: "gate_up unit list" tests), recorded
    // as wave 0 records them, then the units of valid keys kept in order as its ballots keep them.
    const auto listed = oracles::unit_list(ids);
    schedule s{};
    for (unsigned j = 0; j < listed.size(); ++j)
      for (unsigned c = 0; c < listed[j].routes.size(); ++c) {
        const unsigned r = listed[j].routes[c];
        K::record_route(s, r, j, c, ids[r], c == 0 ? static_cast<unsigned>(listed[j].routes.size()) : 0u);
      }
    unsigned units = 0;
    for (unsigned j = 0; j < listed.size(); ++j)
      if (s.expert[j] != list::invalid_key) s.unit[units++] = static_cast<std::uint8_t>(j);
    std::vector<unsigned> served(routes, 0);
    unsigned previous_first = 0;
    for (unsigned k = 0; k < units; ++k) {
      const unsigned j = s.unit[k];
      const std::int32_t e = s.expert[j];
      REQUIRE(moe::expert_weights::valid_expert(e));
      REQUIRE(s.columns[j] >= 1);
      REQUIRE(s.columns[j] <= K::chunk_columns);
      const unsigned first = s.column[j][0];
      if (k > 0) CHECK(first > previous_first);  // route order of first routes
      previous_first = first;
      unsigned occurrence = 0;
      for (unsigned r = 0; r < first; ++r) occurrence += ids[r] == e;
      CHECK(occurrence % K::chunk_columns == 0);  // the expert's occurrence 0, 16, ..
      bool earlier;
      const auto cols = columns_of(ids, first, earlier);
      REQUIRE(s.columns[j] == std::min<unsigned>(static_cast<unsigned>(cols.size()), K::chunk_columns));
      for (unsigned c = 0; c < s.columns[j]; ++c) {
        CHECK(s.column[j][c] == cols[c]);
        ++served[s.column[j][c]];
      }
    }
    for (unsigned r = 0; r < routes; ++r) {
      CHECK(s.key[r] == list::key_of(ids[r]));
      CHECK(served[r] == (moe::expert_weights::valid_expert(ids[r]) ? 1u : 0u));
    }
  }
  CHECK(K::waves * K::wave >= 16 * K::tile_rows);
}

TEST_CASE("expert kernels: weight staging per target, and what the runtime reads of it") {
  // sm90a stages weights in LDS (bulk copy): gate_up asks for the largest carve-out and fits 5
  // workgroups of static LDS per SM; down's launches ask for 12 waves x 2 stages x 8 KiB of
  // dynamic LDS, which with its static LDS stays within the 227 KiB a workgroup may have.
  // gfx950 keeps weights in VGPRs: no dynamic LDS, no carve-out request.
  using gu_nv = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_decode<sm90a>>;
  using gu_amd = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_decode<gfx950>>;
  using dn_nv = kernels::moe_expert_down_kernel<contracts::moe_expert_down_decode<sm90a>>;
  using dn_amd = kernels::moe_expert_down_kernel<contracts::moe_expert_down_decode<gfx950>>;
  static_assert(gu_nv::weights_in_lds && dn_nv::weights_in_lds && !gu_amd::weights_in_lds && !dn_amd::weights_in_lds);
  CHECK(prefers_max_lds<gu_nv>());
  CHECK(prefers_max_lds<dn_nv>());
  CHECK_FALSE(prefers_max_lds<gu_amd>());
  CHECK_FALSE(prefers_max_lds<dn_amd>());
  CHECK(5 * (gu_nv::lds_bytes + 1024) <= 228u * 1024);
  CHECK(dynamic_lds_bytes_of<dn_nv>() == 12u * 2 * 8192);
  CHECK(dn_nv::shape(16).dynamic_lds_bytes == dynamic_lds_bytes_of<dn_nv>());
  CHECK(dynamic_lds_bytes_of<dn_amd>() == 0);
  CHECK(dn_amd::shape(16).dynamic_lds_bytes == 0);
  CHECK(dynamic_lds_bytes_of<gu_nv>() == 0);
  CHECK(gu_nv::shape(1).dynamic_lds_bytes == 0);
}

