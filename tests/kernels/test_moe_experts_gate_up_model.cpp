// The gate_up kernel's decomposition modelled on the host (tests/kernels/moe_experts_model.hpp):
// within the policy for M = 1, 2, 16 and adversarial inputs, the quantization pass's lanes and the
// B pieces' gather, duplicate ids, and the fused hidden quantization bit for bit.
#include "kernels/moe_experts_model.hpp"

using namespace netra;
using models::k_order_16x16x128;

namespace {

// ---- gate_up ------------------------------------------------------------------------------------

/// The gate_up kernel's decomposition: the workgroup of the route at occurrence 0, 16, .. of its
/// expert serves 16 columns; per instruction tile each wave quantizes the tile's used columns one
/// at a time with the pass's lane map (lane l: values [V l, V l + V) of the wave's K range, the
/// xor butterfly over K::pass_masks), then every lane gathers its B words (F::act_piece of its
/// column) from the lanes that hold them and its column's block scales; the D items' scales come
/// from the lane whose B column the item's column is.
template <class Contract, k_order_16x16x128 Order>
std::vector<std::uint16_t> gate_up_model(int tokens, const std::vector<std::uint16_t>& hidden, const std::vector<std::int32_t>& ids,
                                         const oracles::expert_weight_view& w, const std::vector<unsigned>& tiles) {
  using target = typename Contract::target;
  using format = typename Contract::fp8_format;
  using K = kernels::moe_expert_gate_up_kernel<Contract>;
  using F = typename K::F;
  constexpr unsigned W = F::wave;
  constexpr unsigned V = K::pass_values;
  const unsigned routes = static_cast<unsigned>(tokens) * 9;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(routes) * 1024, poison_bf16);
  long lane_values_across_blocks = 0, written_twice = 0;
  for (unsigned route = 0; route < routes; ++route)
    for (unsigned tile : tiles) {
      const unsigned row0 = tile * K::tile_rows;
      const std::int32_t e = ids[route];
      if (!moe::expert_weights::valid_expert(e)) {
        for (unsigned i = 0; i < K::tile_rows; ++i) out[route * 1024 + row0 + i] = 0;
        continue;
      }
      unsigned occurrence = 0;
      for (unsigned r = 0; r < route; ++r) occurrence += ids[r] == e;
      if (occurrence % K::chunk_columns != 0) continue;
      bool earlier;
      const auto cols = columns_of(ids, route, earlier);
      const unsigned columns = std::min<unsigned>(static_cast<unsigned>(cols.size()), K::chunk_columns);
      float partial[K::k_split][K::chunk_columns][K::tile_rows] = {};
      for (unsigned wv = 0; wv < K::k_split; ++wv)
        for (unsigned n = 0; n < F::tiles; ++n) {
          if (n * F::tile_columns >= columns) continue;
          // the pass: held[c][l] = lane l's E4M3 words of column c, scale[c][l] its block's scale
          std::vector<std::array<std::array<std::uint32_t, 4>, W>> held(K::chunk_columns);
          std::vector<std::array<float, W>> scale(K::chunk_columns);
          for (unsigned c = n * F::tile_columns; c < std::min(columns, (n + 1) * F::tile_columns); ++c) {
            const std::uint16_t* x = &hidden[(cols[c] / 9) * 2048 + wv * K::k_per_wave];
            std::array<std::uint32_t, W> magnitude{};
            for (unsigned l = 0; l < W; ++l)
              for (unsigned j = 0; j < V; ++j) magnitude[l] = std::max<std::uint32_t>(magnitude[l], x[V * l + j] & 0x7FFFu);
            for (unsigned i = 0; i < K::pass_masks; ++i) {
              const auto before = magnitude;
              for (unsigned l = 0; l < W; ++l) magnitude[l] = std::max(before[l], before[l ^ (1u << i)]);
            }
            for (unsigned l = 0; l < W; ++l) {
              const auto h = Contract::hidden_quant::of(magnitude[l]);
              scale[c][l] = h.scale;
              lane_values_across_blocks += (V * l) / 128 != (V * l + V - 1) / 128;
              std::uint8_t bytes[16] = {};
              for (unsigned j = 0; j < V; ++j)
                bytes[j] = h.poison ? format::nan_code : (h.zero ? 0 : fp8_from_f32_reference<format>(mul_rn(f32_from_bf16(x[V * l + j]), h.reciprocal)));
              for (unsigned i = 0; i < V / 4; ++i) held[c][l][i] = word_of(bytes + 4 * i);
            }
          }
          std::array<std::array<float, F::shape::d_items>, W> acc{};
          for (unsigned b = 0; b < K::blocks_per_wave; ++b) {
            const unsigned kb = wv * K::blocks_per_wave + b;  // global scale block
            pieces_t<target> wp{}, q{};
            std::array<float, W> sx{};
            for (unsigned l = 0; l < W; ++l) {
              for (unsigned v = 0; v < F::weight_pieces; ++v) {
                const auto pc = F::weight_piece(l, v);
                std::uint8_t bytes[16];
                for (unsigned i = 0; i < 16; ++i) bytes[i] = w.w13(e, static_cast<int>(row0 + pc.index), static_cast<int>(kb * 128 + pc.k + i));
                for (unsigned j = 0; j < 4; ++j) wp[l][v][j] = word_of(bytes + 4 * j);
              }
              const unsigned c = K::lane_column(l, n);
              if (c >= columns) continue;  // an unused column: zeros
              for (unsigned v = 0; v < F::act_pieces; ++v)
                for (unsigned j = 0; j < 4; ++j) {
                  const unsigned k = b * 128 + F::act_piece(l, n, v).k + 4 * j;
                  q[l][v][j] = held[c][k / V][(k % V) / 4];
                }
              sx[l] = scale[c][b * K::pass_lanes];
            }
            const auto d = block_d<target, Order>(wp, q);
            const float sw = w.s13(e, static_cast<int>(row0 / 128), static_cast<int>(kb));
            for (unsigned l = 0; l < W; ++l)
              for (unsigned i = 0; i < F::shape::d_items; ++i) {
                const auto el = F::d_element(l, n, i);
                const unsigned src = F::d_column_is_b_column ? l : F::b_lane_of(el.col - n * F::tile_columns);
                acc[l][i] = fma_rn(d[l][i], mul_rn(sw, sx[src]), acc[l][i]);
              }
          }
          for (unsigned l = 0; l < W; ++l)
            for (unsigned i = 0; i < F::shape::d_items; ++i) {
              const auto el = F::d_element(l, n, i);
              partial[wv][el.col][el.row] = acc[l][i];
            }
        }
      for (unsigned col = 0; col < columns; ++col)
        for (unsigned row = 0; row < K::tile_rows; ++row) {
          float s = partial[0][col][row];
          for (unsigned wv = 1; wv < K::k_split; ++wv) s = add_rn(s, partial[wv][col][row]);
          written_twice += out[cols[col] * 1024 + row0 + row] != poison_bf16;  // every output is written once
          out[cols[col] * 1024 + row0 + row] = bf16_from_f32_reference(s);
        }
    }
  CHECK(lane_values_across_blocks == 0);  // a lane's pass values lie in one scale block
  CHECK(written_twice == 0);
  return out;
}

template <class Contract, k_order_16x16x128 Order = k_order_16x16x128::halves>
oracles::policy_report check_gate_up(int tokens, const std::vector<std::uint16_t>& hidden, const std::vector<std::int32_t>& ids,
                                     const oracles::expert_weight_view& w, const std::vector<unsigned>& tiles) {
  std::vector<bool> selected(1024, false);
  for (unsigned t : tiles)
    for (unsigned i = 0; i < 16; ++i) selected[t * 16 + i] = true;
  const auto got = gate_up_model<Contract, Order>(tokens, hidden, ids, w, tiles);
  const auto ref = oracles::gate_up_reference<typename Contract::fp8_format>(tokens, hidden.data(), ids.data(), w,
                                                                             [&](int n) { return selected[static_cast<std::size_t>(n)]; });
  return oracles::check_policy(ref, got, [&](std::size_t i) { return selected[i % 1024]; });
}

}  // namespace

// ---- gate_up ------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("gate_up model, M = 1, every tile, within the policy", Target, gfx950, sm90a) {
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const auto w = hashed_weights({});
  const auto hidden = oracles::hidden_rows(1, 3);
  const auto ids = oracles::routed_ids(1, 3);
  const auto rep = check_gate_up<C>(1, hidden, ids, w, all_tiles(64));
  INFO(rep.describe());
  CHECK(rep.checked == 9 * 1024);
  CHECK(rep.failures == 0);
  if constexpr (same_v<Target, gfx950>) {
    const auto alt = check_gate_up<C, k_order_16x16x128::contiguous>(1, hidden, ids, w, {0, 17, 63});
    INFO(alt.describe());
    CHECK(alt.failures == 0);
  }
}

TEST_CASE("gate_up model on gfx942: E4M3FNUZ weights and hidden quantization (amax / 240), four MFMA 16x16x32 per block, within the policy") {
  using C = contracts::moe_expert_gate_up_decode<gfx942>;
  auto w = hashed_weights({7});
  const auto ocp = w.w13;
  w.w13 = [ocp](int e, int n, int k) -> std::uint8_t { const std::uint8_t v = ocp(e, n, k); return v == 0x80 ? 0x00 : v; };  // 0x80 is FNUZ's NaN
  for (int tokens : {1, 2, 16}) {
    const auto hidden = oracles::hidden_rows(tokens, 40 + tokens);
    const auto ids = oracles::routed_ids(tokens, 40 + tokens, tokens == 16 ? 24 : 256);
    const auto rep = check_gate_up<C>(tokens, hidden, ids, w, tokens == 1 ? all_tiles(64) : std::vector<unsigned>{0, 31, 63});
    INFO("tokens ", tokens, ": ", rep.describe());
    CHECK(rep.checked == tokens * 9 * (tokens == 1 ? 1024 : 48));
    CHECK(rep.failures == 0);
  }
  // a NaN hidden value poisons its token's rows (0x80 bytes through the FNUZ model)
  auto hidden = oracles::hidden_rows(1, 9);
  hidden[700] = 0x7FC0;
  const auto ids = oracles::routed_ids(1, 9);
  const auto got = gate_up_model<C, k_order_16x16x128::halves>(1, hidden, ids, w, {0});
  for (unsigned r = 0; r < 9; ++r) CHECK((got[r * 1024] & 0x7FFFu) > 0x7F80u);
  // the same weight bytes read as E4M3FN (a gfx950 reading of an FNUZ checkpoint): outside the policy
  const auto h1 = oracles::hidden_rows(1, 41);
  const auto i1 = oracles::routed_ids(1, 41);
  std::vector<bool> sel(1024, false);
  for (unsigned i = 0; i < 16; ++i) sel[i] = true;
  const auto fnuz = gate_up_model<C, k_order_16x16x128::halves>(1, h1, i1, w, {0});
  const auto as_ocp = oracles::gate_up_reference<fp8::e4m3fn>(1, h1.data(), i1.data(), w, [&](int n) { return sel[static_cast<std::size_t>(n)]; });
  CHECK(oracles::check_policy(as_ocp, fnuz, [&](std::size_t i) { return sel[i % 1024]; }).failures > 0);
}

TEST_CASE_TEMPLATE("gate_up model, M = 2 and M = 16 (shared expert: 16 columns), within the policy", Target, gfx950, sm90a) {
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const auto w = hashed_weights({5});
  for (int tokens : {2, 16}) {
    const auto hidden = oracles::hidden_rows(tokens, 11 + tokens);
    const auto ids = oracles::routed_ids(tokens, 11 + tokens, 24);  // a small pool: many shared experts
    const auto rep = check_gate_up<C>(tokens, hidden, ids, w, {0, 31, 63});
    INFO("tokens ", tokens, ": ", rep.describe());
    CHECK(rep.checked == tokens * 9 * 48);
    CHECK(rep.failures == 0);
  }
}

TEST_CASE_TEMPLATE("gate_up: the quantization pass's lanes and the B pieces' gather agree", Target, gfx950, sm90a, gfx942) {
  // Pass: lane l holds K [V l, V l + V) of the wave's range; 128 / V lanes per block, joined by
  // xor 1 .. 128 / V / 2. Gather: word j of a lane's piece v, block b comes from lane
  // (128 b + k + 4 j) / V, word (4 j % V) / 4 (the kernel's compile-time word index): it must hold
  // exactly those 4 K, and the scale source lane b * 128 / V must lie in block b.
  using K = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_decode<Target>>;
  using F = typename K::F;
  constexpr unsigned V = K::pass_values;
  CHECK(K::pass_lanes * V == 128);
  CHECK((1u << K::pass_masks) == K::pass_lanes);
  for (unsigned b = 0; b < K::blocks_per_wave; ++b) CHECK((b * K::pass_lanes * V) / 128 == b);
  for (unsigned l = 0; l < F::wave; ++l)
    for (unsigned n = 0; n < F::tiles; ++n)
      for (unsigned v = 0; v < F::act_pieces; ++v)
        for (unsigned b = 0; b < K::blocks_per_wave; ++b)
          for (unsigned j = 0; j < 4; ++j) {
            const unsigned k = b * 128 + F::act_piece(l, n, v).k + 4 * j;  // first K of the word
            const unsigned src = k / V, word = (4 * j % V) / 4;
            CHECK(src * V + 4 * word == k);
          }
  CHECK(K::lds_bytes <= 48u * 1024);  // static shared memory, no opt-in
  if constexpr (K::weights_in_lds) {
    // the staged rows are unpadded (one copy per tile): a quarter-warp's 16-byte A reads (lanes
    // 8j .. 8j + 7, one piece each) fall on 16-byte bank groups at most two at a time (2-way)
    CHECK(K::weight_row_stride == 2048u);
    for (unsigned v = 0; v < F::weight_pieces; ++v)
      for (unsigned j = 0; j < F::wave / 8; ++j) {
        std::array<int, 8> groups{};
        for (unsigned l = 8 * j; l < 8 * j + 8; ++l) {
          const auto pc = F::weight_piece(l, v);
          ++groups[((pc.index * K::weight_row_stride + pc.k) / 16) % 8];
        }
        for (int g : groups) CHECK(g <= 2);
      }
  }
}

TEST_CASE_TEMPLATE("gate_up model: more than 16 routes of one expert (duplicate ids): a workgroup per 16 of them", Target, gfx950, sm90a) {
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const auto w = hashed_weights({13});
  const int tokens = 5;
  std::vector<std::int32_t> ids(tokens * 9, 42);  // 45 routes of expert 42: workgroups at occurrences 0, 16, 32
  ids[7] = 256;
  ids[20] = 300;  // an invalid id in the middle shifts nothing
  const auto hidden = oracles::hidden_rows(tokens, 13);
  const auto rep = check_gate_up<C>(tokens, hidden, ids, w, {0, 63});
  INFO(rep.describe());
  CHECK(rep.checked == tokens * 9 * 32);
  CHECK(rep.failures == 0);
}

TEST_CASE_TEMPLATE("gate_up model, adversarial inputs", Target, gfx950, sm90a) {
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const int tokens = 3;
  auto ids = oracles::routed_ids(tokens, 21, 16);
  ids[4] = 300;      // invalid id: rows of +0.0
  ids[10] = -1;      // invalid id
  ids[9 + 3] = ids[9 + 2];  // a duplicate expert inside one token
  auto hidden = oracles::hidden_rows(tokens, 21);
  hidden[0 * 2048 + 5] = 0x7FC0;                          // token 0, block 0: NaN
  for (int k = 256; k < 384; ++k) hidden[1 * 2048 + k] = 0;  // token 1, block 2: all zero
  hidden[1 * 2048 + 1000] = bf16_from_f32_reference(1e30f);   // token 1: a huge block (scale ~2e27)
  hidden[1 * 2048 + 1001] = bf16_from_f32_reference(-1e30f);
  hidden[2 * 2048 + 2047] = 0xFF80;                        // token 2: -Inf
  weight_params wp{9};
  wp.zero_scale_expert = ids[9 + 5];  // every block scale of one of token 1's experts is 0
  const auto w = hashed_weights(wp);
  const auto got = gate_up_model<C, k_order_16x16x128::halves>(tokens, hidden, ids, w, {0, 40});
  const auto ref = oracles::gate_up_reference(tokens, hidden.data(), ids.data(), w, [](int n) { return n < 16 || (n >= 640 && n < 656); });
  std::size_t nan_rows = 0, zero_rows = 0;
  for (int r = 0; r < tokens * 9; ++r)
    for (unsigned n : {0u, 15u, 640u, 655u}) {
      const std::size_t i = static_cast<std::size_t>(r) * 1024 + n;
      INFO("route ", r, " row ", n);
      REQUIRE(oracles::within_policy(ref[i], got[i]));
      if (r / 9 == 0 || r / 9 == 2) CHECK((oracles::valid_expert(ids[r]) ? got[i] == 0x7FFF : got[i] == 0));  // poisoned tokens
      nan_rows += std::isnan(ref[i].value);
      zero_rows += got[i] == 0;
    }
  CHECK(nan_rows > 0);
  CHECK(zero_rows > 0);
  // saturated weights (every byte ±448) with large scales stay within the policy
  weight_params sat{10};
  sat.saturate = true;
  sat.scale_lo = 1.0f, sat.scale_hi = 2.0f;
  const auto hs = oracles::hidden_rows(1, 5, 300.0f);
  const auto rep = check_gate_up<C>(1, hs, oracles::routed_ids(1, 5), hashed_weights(sat), {3});
  INFO(rep.describe());
  CHECK(rep.failures == 0);
}

namespace {
/// One-hot W13 rows (row n reads hidden value k = 2n + odd with weight 1.0, scale 1): every output
/// is sx * qx[k], so any difference in qx (one E4M3 step: 2^-4 relative or more) would exceed the
/// BF16 rounding (2^-8). Returns the rows of route `route` that differ from the oracle.
template <class Target> long one_hot_mismatches(const std::vector<std::uint16_t>& hidden, int tokens, unsigned odd) {
  oracles::expert_weight_view w;
  w.w13 = [odd](int, int n, int k) -> std::uint8_t { return static_cast<unsigned>(k) == 2 * static_cast<unsigned>(n) + odd ? 0x38 : 0x00; };
  w.s13 = [](int, int, int) { return 1.0f; };
  w.w2 = [](int, int, int) -> std::uint8_t { return 0; };
  w.s2 = [](int, int, int) { return 0.0f; };
  const auto ids = oracles::routed_ids(tokens, 99);
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const auto got = gate_up_model<C, k_order_16x16x128::halves>(tokens, hidden, ids, w, all_tiles(64));
  long mismatches = 0;
  std::uint8_t q[128];
  for (int t = 0; t < tokens; ++t)
    for (int n = 0; n < 1024; ++n) {
      const int k = 2 * n + static_cast<int>(odd), b = k / 128;
      const float scale = oracles::hidden_quant_block(hidden.data() + t * 2048 + 128 * b, q);
      const std::uint16_t expect = bf16_from_f32_reference(f32_from_e4m3(q[k % 128]) * scale);
      // +0 == -0: an fma chain from +0 never gives -0
      for (int s = 0; s < 9; ++s) mismatches += f32_from_bf16(got[static_cast<std::size_t>(t * 9 + s) * 1024 + n]) != f32_from_bf16(expect);
    }
  return mismatches;
}
}  // namespace

TEST_CASE_TEMPLATE("gate_up model: the fused hidden quantization equals the oracle bit for bit (one-hot probe)", Target, gfx950, sm90a) {
  const auto hidden = oracles::hidden_rows(1, 99, 3.0f);
  CHECK(one_hot_mismatches<Target>(hidden, 1, 0) == 0);
  // every 128-block on E4M3 ties (oracles::tie_hidden_rows), even and odd k
  const auto ties = oracles::tie_hidden_rows(2, 7);
  CHECK(one_hot_mismatches<Target>(ties, 2, 0) == 0);
  CHECK(one_hot_mismatches<Target>(ties, 2, 1) == 0);
}

TEST_CASE("hidden quantization on E4M3 ties: r = 448 / amax is one IEEE division (a reciprocal-then-multiply r differs)") {
  // The bug the Python reference had (torch's `448.0 / amax` is amax.reciprocal() * 448): on these
  // blocks the two r differ by an ulp and every tie value rounds the other way. The oracle, the
  // contract's hidden_block_quant (the kernels' code) and the tie rows must agree that they do.
  const int tokens = 4;
  const auto hidden = oracles::tie_hidden_rows(tokens, 3);
  long contract_mismatches = 0, reciprocal_differs = 0, blocks_that_differ = 0;
  for (int blk = 0; blk < tokens * 16; ++blk) {
    const std::uint16_t* x = hidden.data() + blk * 128;
    std::uint8_t q[128];
    const float scale = oracles::hidden_quant_block(x, q);
    std::uint32_t m = 0;
    for (int k = 0; k < 128; ++k) m = std::max<std::uint32_t>(m, x[k] & 0x7FFFu);
    const auto h = moe::hidden_block_quant::of(m);
    CHECK(h.scale == scale);
    const float amax = f32_from_bf16(static_cast<std::uint16_t>(m));
    const float r_two_roundings = mul_rn(div_rn(1.0f, amax), 448.0f);
    long differ = 0;
    for (int k = 0; k < 128; ++k) {
      const float v = f32_from_bf16(x[k]);
      contract_mismatches += e4m3_from_f32_reference(mul_rn(v, h.reciprocal)) != q[k];
      differ += e4m3_from_f32_reference(mul_rn(v, r_two_roundings)) != q[k];
    }
    reciprocal_differs += differ;
    blocks_that_differ += differ > 0;
  }
  CHECK(contract_mismatches == 0);
  CHECK(blocks_that_differ == tokens * 16);  // the rows are sensitive: every block tells the two apart
  CHECK(reciprocal_differs >= 6 * tokens * 16);
}

