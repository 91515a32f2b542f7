// kernels/attention/gqa8_block_split.hpp: the BlockSplit mapping of the GQA8 Stages 0 decode
// (S warps share each block) against the whole-block plan, on the host. For every plan and S:
// the warps' score tiles, PV groups and o items partition the plan's (each once); every K chunk
// and every V word of the block is read by exactly one (warp, lane), and each warp reads only
// what its instructions use; and, through the host models of the matrix instructions
// (tests/models/matrix_bf16.hpp), each warp's P V from just the words it loads (the rest zero, as
// the staging's load_words leaves them) gives bit for bit the whole-block plan's o at its items —
// so a split call's bits are the unsplit order's (the GPU test checks the kernels against it).
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/attention_block_data.hpp"
#include "models/matrix_bf16.hpp"
#include "netra/contracts/attention/gqa8_paged.hpp"
#include "netra/kernels/attention/gqa8_block_split.hpp"
#include "netra/kernels/attention/gqa8_wave_plan.hpp"

using namespace netra;

namespace {
constexpr unsigned kRows = 8, kPos = 64, kDim = 256;
using block_data = testing::attention_block<kRows>;

u32x4 chunk_of(const std::vector<std::uint8_t>& m, fragment_element pc) {
  std::uint32_t w[4] = {};
  for (unsigned i = 0; i < 16; ++i) w[i / 4] |= static_cast<std::uint32_t>(m[pc.row * kDim + 16 * pc.col + i]) << (8 * (i % 4));
  return {w[0], w[1], w[2], w[3]};
}
/// The words [w0, w1) of a chunk, the others 0 (what a split warp's V load leaves in its register).
u32x4 words_of(const u32x4& c, unsigned w0, unsigned w1) {
  std::uint32_t w[4];
  for (unsigned i = 0; i < 4; ++i) w[i] = i >= w0 && i < w1 ? c[static_cast<int>(i)] : 0u;
  return {w[0], w[1], w[2], w[3]};
}
template <class Plan> std::array<std::uint32_t, Plan::scores / 2> p_regs(const block_data& b, unsigned lane) {
  std::array<std::uint32_t, Plan::scores / 2> p{};
  for (unsigned w = 0; w < Plan::scores / 2; ++w)
    for (unsigned h = 0; h < 2; ++h) {
      const fragment_element e = Plan::score_of(lane, 2 * w + h);
      if (e.row < kRows) p[w] |= static_cast<std::uint32_t>(b.p[e.row * kPos + e.col]) << (16 * h);
    }
  return p;
}

template <class Plan, unsigned S, unsigned J> void ownership_of(std::vector<unsigned>& tile_owner, std::vector<unsigned>& group_owner,
                                                                std::vector<unsigned>& item_owner, std::set<std::tuple<unsigned, unsigned>>& k,
                                                                std::set<std::tuple<unsigned, unsigned, unsigned>>& v) {
  using split = kernels::gqa8_block_split<Plan, S, J>;
  constexpr unsigned k_pieces = Plan::k_reads / Plan::qk_chunks;
  for (unsigned t = 0; t < Plan::qk_tiles; ++t)
    if (split::owns_tile(t)) ++tile_owner[t];
  for (unsigned g = 0; g < split::groups; ++g)
    if (split::owns_group(g)) ++group_owner[g];
  for (unsigned i = 0; i < Plan::o_items; ++i)
    if (split::owns_o_item(i)) ++item_owner[i];
  for (unsigned mt = 0; mt < Plan::o_items / 4; ++mt) CHECK(split::group_of_tile(mt) < split::groups);
  for (unsigned i = 0; i < Plan::scores; ++i) CHECK(split::owns_score(i) == split::owns_tile(Plan::score_tile(i)));
  // The V chunks the warp's groups use are the ones it reads, and the words it keeps are its groups' words.
  std::set<unsigned> used;
  for (unsigned kk = 0; kk < Plan::pv_steps; ++kk)
    for (unsigned h = 0; h < Plan::pv_halves; ++h)
      for (unsigned w = 0; w < 4; ++w)
        if (split::owns_group(4 * h + w)) {
          CHECK((w >= split::w0 && w < split::w1));
          for (unsigned i = 0; i < Plan::pv_gather; ++i) used.insert(Plan::pv_chunk(kk, h, i));
        }
  for (unsigned j = 0; j < Plan::v_reads; ++j) CHECK(split::reads_v_chunk(j) == (used.count(j) == 1));
  for (unsigned lane = 0; lane < Plan::wave; ++lane) {
    for (unsigned n = 0; n < k_pieces; ++n)
      if (split::owns_tile(n))
        for (unsigned c = 0; c < Plan::qk_chunks; ++c) {
          const fragment_element e = Plan::k_read(lane, Plan::qk_chunks * n + c);
          CHECK(k.insert({e.row, e.col}).second);
        }
    for (unsigned j = 0; j < Plan::v_reads; ++j)
      if (split::reads_v_chunk(j))
        for (unsigned w = split::w0; w < split::w1; ++w) {
          const fragment_element e = Plan::v_read(lane, j);
          CHECK(v.insert({e.row, e.col, w}).second);
        }
  }
}

template <class Plan, unsigned S> void check_partition() {
  std::vector<unsigned> tile_owner(Plan::qk_tiles), group_owner(Plan::pv_halves * 4), item_owner(Plan::o_items);
  std::set<std::tuple<unsigned, unsigned>> k;
  std::set<std::tuple<unsigned, unsigned, unsigned>> v;
  [&]<unsigned... J>(std::integer_sequence<unsigned, J...>) {
    (ownership_of<Plan, S, J>(tile_owner, group_owner, item_owner, k, v), ...);
  }(std::make_integer_sequence<unsigned, S>{});
  for (unsigned x : tile_owner) CHECK(x == 1);
  for (unsigned x : group_owner) CHECK(x == 1);
  for (unsigned x : item_owner) CHECK(x == 1);
  CHECK(k.size() == kPos * 16);      // every K chunk of the block, once
  CHECK(v.size() == kPos * 16 * 4);  // every V word of the block, once
}

/// Lane `lane`'s P^T operand of k-step kk and word w of the V chunks of group (h, w), from only
/// the words [w0, w1) of each chunk (what a split warp's V loads keep).
template <class Plan, unsigned BWords>
void lane_pv(const block_data& b, unsigned lane, unsigned kk, unsigned h, unsigned w, unsigned w0, unsigned w1, u32 (&bv)[BWords],
             bf16x4 (&x)[Plan::pv_gather]) {
  const auto p = p_regs<Plan>(b, lane);
  std::uint32_t pa[Plan::scores / 2];
  std::memcpy(pa, p.data(), sizeof pa);
  Plan::pv_b(bv, pa, kk);
  for (unsigned i = 0; i < Plan::pv_gather; ++i)
    x[i] = e4m3x4_to_bf16x4_reference(words_of(chunk_of(b.v, Plan::v_read(lane, Plan::pv_chunk(kk, h, i))), w0, w1)[static_cast<int>(w)]);
}
/// The plan's V^T operand t of a group (pv_a<t>).
template <class Plan> void pv_a_of(unsigned t, u32 (&av)[4], const bf16x4 (&x)[Plan::pv_gather]) {
  [&]<unsigned... T>(std::integer_sequence<unsigned, T...>) {
    ((t == T ? Plan::template pv_a<T>(av, x) : void()), ...);
  }(std::make_integer_sequence<unsigned, Plan::pv_tiles_per_group>{});
}

/// o of the plan's PV over the block, groups [g0, g1) only, V chunks reduced to words [w0, w1):
/// sm90a (mma.sync m16n8k16; Wave64 false) or gfx950 (v_mfma_f32_16x16x32_bf16).
template <class Plan, bool Wave64> auto pv_model(const block_data& b, unsigned g0, unsigned g1, unsigned w0, unsigned w1) {
  using d_type = std::conditional_t<Wave64, models::wave_d_bf16, models::warp_d_bf16>;
  std::array<d_type, 16> o{};
  for (unsigned kk = 0; kk < Plan::pv_steps; ++kk)
    for (unsigned g = g0; g < g1; ++g)
      for (unsigned t = 0; t < Plan::pv_tiles_per_group; ++t) {
        const unsigned h = g / 4, w = g % 4, mt = Plan::pv_tile(h, w, t);
        if constexpr (Wave64) {
          models::wave_ab_bf16 a{}, bb{};
          for (unsigned lane = 0; lane < 64; ++lane) {
            u32 bv[4], av[4];
            bf16x4 x[Plan::pv_gather];
            lane_pv<Plan>(b, lane, kk, h, w, w0, w1, bv, x);
            pv_a_of<Plan>(t, av, x);
            for (unsigned i = 0; i < 4; ++i) a[lane][i] = av[i], bb[lane][i] = bv[i];
          }
          o[mt] = models::mfma_f32_16x16x32_bf16(a, bb, o[mt]);
        } else {
          models::warp_a_bf16 a{};
          models::warp_b_bf16 bb{};
          for (unsigned lane = 0; lane < 32; ++lane) {
            u32 bv[2], av[4];
            bf16x4 x[Plan::pv_gather];
            lane_pv<Plan>(b, lane, kk, h, w, w0, w1, bv, x);
            pv_a_of<Plan>(t, av, x);
            for (unsigned i = 0; i < 4; ++i) a[lane][i] = av[i];
            bb[lane] = {bv[0], bv[1]};
          }
          o[mt] = models::mma_m16n8k16_bf16(a, bb, o[mt]);
        }
      }
  return o;
}

/// Each split warp's o items from its own loads equal the whole-block plan's, bit for bit.
template <class Plan, unsigned S, class Pv> void check_split_pv(Pv pv) {
  for (std::uint32_t seed : {11u, 12u}) {
    const block_data b = block_data::random(seed);
    const auto whole = pv(b, 0, Plan::pv_halves * 4, 0, 4);
    unsigned compared = 0;
    [&]<unsigned... J>(std::integer_sequence<unsigned, J...>) {
      auto one = [&]<unsigned Jw>(std::integral_constant<unsigned, Jw>) {
        using split = kernels::gqa8_block_split<Plan, S, Jw>;
        const auto part = pv(b, split::g0, split::g1, split::w0, split::w1);
        for (unsigned lane = 0; lane < Plan::wave; ++lane)
          for (unsigned i = 0; i < Plan::o_items; ++i)
            if (split::owns_o_item(i)) {
              float x = part[i / 4][lane][i % 4], y = whole[i / 4][lane][i % 4];
              CHECK(std::memcmp(&x, &y, sizeof x) == 0);
              ++compared;
            }
      };
      (one(std::integral_constant<unsigned, J>{}), ...);
    }(std::make_integer_sequence<unsigned, S>{});
    CHECK(compared == Plan::wave * Plan::o_items);
  }
}
}  // namespace

TEST_CASE("BlockSplit on sm90a (mma.sync m16n8k16): the warps partition the block; each warp's P V from its own loads is the plan's, bit for bit") {
  using plan = attention_plan<mma_m16n8k16_bf16>;
  check_partition<plan, 2>();
  check_partition<plan, 4>();
  check_partition<plan, 8>();
  auto pv = [](const block_data& b, unsigned g0, unsigned g1, unsigned w0, unsigned w1) { return pv_model<plan, false>(b, g0, g1, w0, w1); };
  check_split_pv<plan, 2>(pv);
  check_split_pv<plan, 4>(pv);
  check_split_pv<plan, 8>(pv);
  // A warp that dropped a word it needs is caught: warp 0 of S = 4 with only its first word.
  const block_data b = block_data::random(13);
  const auto whole = pv_model<plan, false>(b, 0, 8, 0, 4), short_read = pv_model<plan, false>(b, 0, 2, 0, 1);
  bool differs = false;
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned i = 0; i < plan::o_items; ++i)
      if (kernels::gqa8_block_split<plan, 4, 0>::owns_o_item(i)) differs |= short_read[i / 4][lane][i % 4] != whole[i / 4][lane][i % 4];
  CHECK(differs);
}

TEST_CASE("BlockSplit on gfx950 (v_mfma_f32_16x16x32_bf16): the warps partition the block; each warp's P V from its own loads is the plan's, bit for bit") {
  using plan = attention_plan<mfma_f32_16x16x32_bf16>;
  check_partition<plan, 2>();
  check_partition<plan, 4>();
  auto pv = [](const block_data& b, unsigned g0, unsigned g1, unsigned w0, unsigned w1) { return pv_model<plan, true>(b, g0, g1, w0, w1); };
  check_split_pv<plan, 2>(pv);
  check_split_pv<plan, 4>(pv);
}

TEST_CASE("BlockSplit contracts: warps, LDS (the score exchange inside the epilogue's bytes), names and the order's fields") {
  using split4 = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 0, 64, 512, 4>;
  using split8 = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 0, 64, 512, 8>;
  using whole = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 0, 64, 512>;
  CHECK(split4::waves == 2);
  CHECK(split4::warps == 8);
  CHECK(split4::workgroup_size == 256);
  CHECK(split8::workgroup_size == 512);
  CHECK(split8::budget().max_registers == 128);  // 16 warps a SM need <= 128 registers a lane
  CHECK(whole::exchange_bytes == 0);
  CHECK(split4::exchange_bytes == 2 * 2 * 8 * 72 * 4);
  CHECK(split4::exchange_bytes <= split4::epilogue_bytes);
  CHECK(split4::lds_bytes == whole::lds_bytes + 6 * 2 * 64 * 8);  // the six more warps' tables
  // The order depends on BlockWarps and the slices only: the same chunks and slices as 2 x 0.
  for (unsigned len : {1u, 63u, 8192u, 32768u})
    for (unsigned slices : {1u, 16u, 66u}) CHECK(split4::chunk_for(len, slices) == whole::chunk_for(len, slices));
  CHECK(split4::slices_for(1, 132) == whole::slices_for(1, 132));
  CHECK(std::size(whole::template_args) == 7);  // BlockSplit 1 keeps the unsplit names
  CHECK(std::size(split8::template_args) == 8);
  CHECK(split8::template_args[7] == 8);
}

TEST_CASE("BlockSplit 2 of the two-token verify plan (sm90a): each token's tiles and o split as the one-token plan's, every item once") {
  using pair = kernels::gqa8_pair_plan<mma_m16n8k16_bf16>;
  using view = attention_plan<mma_m16n8k16_bf16>;
  using s0 = kernels::gqa8_block_split<pair, 2, 0>;
  using s1 = kernels::gqa8_block_split<pair, 2, 1>;
  using v0 = kernels::gqa8_block_split<view, 2, 0>;
  CHECK(s0::o_tiles == 16);  // one token's M-tiles; token 1's items are tiles 16..31
  for (unsigned t = 0; t < pair::qk_tiles; ++t) CHECK(s0::owns_tile(t) != s1::owns_tile(t));
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned i = 0; i < pair::scores; ++i) {
      CHECK(pair::score_of(lane, i).col / 8 == pair::score_tile(i));  // item i sits in N-tile score_tile(i)
      CHECK(s0::owns_score(i) != s1::owns_score(i));
    }
  std::set<std::tuple<unsigned, unsigned, unsigned>> items;  // (warp, row, d) of every o item
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned i = 0; i < pair::o_items; ++i) {
      CHECK(s0::owns_o_item(i) != s1::owns_o_item(i));
      CHECK(s0::owns_o_item(i) == v0::owns_o_item(i % view::o_items));  // both tokens' o split alike
      const fragment_element e = pair::o_of(lane, i);
      CHECK(items.insert({s0::owns_o_item(i) ? 0u : 1u, e.row, e.col}).second);
    }
  CHECK(items.size() == 16 * 256);
  for (const auto& [warp, row, d] : items) CHECK((warp == 0) == (d % 32 < 16));  // each warp a half of the head dimension (half h of the PV groups)
  // The V chunks each warp reads are its half's (the one-token plan's groups).
  for (unsigned j = 0; j < pair::v_reads; ++j) CHECK(s0::reads_v_chunk(j) == v0::reads_v_chunk(j));
}

TEST_CASE("verify BlockSplit 2 contracts: 12 warps, the exchange in its own LDS bytes, names, the order's fields") {
  using split6 = contracts::attention_gqa8<sm90a, 2, 12, 1, 1, 6, 64, 128, 2>;
  using split7 = contracts::attention_gqa8<sm90a, 2, 12, 1, 1, 7, 64, 128, 2>;  // measured (lab row attention_verify_split_7)
  using unsplit = contracts::attention_gqa8<sm90a, 2, 12, 1, 1, 8, 64, 128>;     // served before BlockSplit 2
  // served before the warpgroup verify (WarpgroupMma), which is sm90a's served verify now; gfx950 unsplit
  CHECK(std::is_same_v<contracts::attention_gqa8_verify<sm90a>, contracts::attention_gqa8<sm90a, 2, 12, 1, 1, 6, 64, 128, 1, 1>>);
  CHECK(std::is_same_v<contracts::attention_gqa8_verify<gfx950>, contracts::attention_gqa8<gfx950, 2, 12, 1, 1, 6, 64, 128>>);
  CHECK(split6::waves == 6);
  CHECK(split6::warps == 12);
  CHECK(split6::workgroup_size == 384);
  CHECK(split6::budget().max_registers == 170);
  CHECK(split6::exchange_bytes == 6 * 16 * 72 * 4);
  CHECK(split6::widen_once);
  CHECK(split7::widen_once);
  CHECK(split6::lds_bytes == 6 * 16384 + split6::q_bytes + split6::table_bytes + split6::stats_bytes + split6::exchange_bytes + 32768);
  CHECK(split7::lds_bytes <= sm90a::lds_bytes_per_workgroup);
  CHECK(unsplit::exchange_bytes == 0);
  for (unsigned len : {12u, 13u, 8204u, 49164u})
    for (unsigned slices : {1u, 8u, 66u}) CHECK(split6::chunk_for(len, slices) == unsplit::chunk_for(len, slices));
  CHECK(split6::slices_for(1, 132) == unsplit::slices_for(1, 132));
  CHECK(std::size(split6::template_args) == 8);
  CHECK(split6::template_args[7] == 2);
}
