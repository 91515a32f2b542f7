// kernels/attention/extend_plan.hpp on the host: the native extend plan's lane maps and builders,
// composed with the host model of mma.sync m16n8k16 BF16 (tests/models/matrix_bf16.hpp), give
// S = Q K^T at score_of() and O = P V at o_of() for 16 rows over a block of 64 positions x 128;
// every K/V chunk, score and output is owned once; each row's score items meet the pair view's
// (dsl/attention_fragment.hpp's sm90a plan) in the same order and each QK k-step pairs the same
// head-dim elements (the bitwise argument of contracts::attention_gqa4_extend_native); the LDS
// staging swizzle is a bijection per row.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "models/matrix_bf16.hpp"
#include "netra/kernels/attention/extend_native.hpp"

using namespace netra;
using plan = kernels::extend_plan<mma_m16n8k16_bf16>;
using view_plan = attention_plan<mma_m16n8k16_bf16>;

namespace {
constexpr unsigned kRows = 16, kPos = 64, kDim = 128;
struct block_data {
  std::vector<std::uint16_t> q, p;  // [16][128], [16][64] BF16
  std::vector<std::uint8_t> k, v;   // [64][128] E4M3
};
block_data random_block(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 2.0f);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  block_data b;
  for (unsigned i = 0; i < kRows * kDim; ++i) b.q.push_back(bf16_from_f32_reference(n(rng)));
  for (unsigned i = 0; i < kPos * kDim; ++i) b.k.push_back(e4m3_from_f32_reference(n(rng))), b.v.push_back(e4m3_from_f32_reference(n(rng)));
  for (unsigned i = 0; i < kRows * kPos; ++i) b.p.push_back(bf16_from_f32_reference(u(rng)));
  return b;
}
wide_chunk wide_of(const std::vector<std::uint8_t>& m, fragment_element pc) {
  wide_chunk x;
  for (unsigned w = 0; w < 4; ++w) {
    std::uint32_t word = 0;
    for (unsigned i = 0; i < 4; ++i) word |= static_cast<std::uint32_t>(m[pc.row * kDim + 16 * pc.col + 4 * w + i]) << (8 * i);
    x.w[w] = e4m3x4_to_bf16x4_reference(word);
  }
  return x;
}
}  // namespace

TEST_CASE("native extend plan: ownership, S = Q K^T and O = P V through the m16n8k16 model") {
  std::set<std::pair<unsigned, unsigned>> k, v, s, o, q;
  for (unsigned lane = 0; lane < 32; ++lane) {
    for (unsigned j = 0; j < plan::k_reads; ++j) CHECK(k.insert({plan::k_read(lane, j).row, plan::k_read(lane, j).col}).second);
    for (unsigned j = 0; j < plan::v_reads; ++j) CHECK(v.insert({plan::v_read(lane, j).row, plan::v_read(lane, j).col}).second);
    for (unsigned j = 0; j < plan::q_loads; ++j) CHECK(q.insert({plan::q_load(lane, j).row, plan::q_load(lane, j).col}).second);
    for (unsigned i = 0; i < plan::scores; ++i) CHECK(s.insert({plan::score_of(lane, i).row, plan::score_of(lane, i).col}).second);
    for (unsigned i = 0; i < plan::o_items; ++i) CHECK(o.insert({plan::o_of(lane, i).row, plan::o_of(lane, i).col}).second);
    for (unsigned m : {plan::row_mask(0), plan::row_mask(1)})
      for (unsigned i = 0; i < 4; ++i) CHECK(plan::score_of(lane ^ m, i).row == plan::score_of(lane, i).row);
  }
  CHECK(k.size() == kPos * 8);
  CHECK(v.size() == kPos * 8);
  CHECK(q.size() == kRows * kDim / 8);
  CHECK(s.size() == kRows * kPos);
  CHECK(o.size() == kRows * kDim);
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const block_data b = random_block(seed);
    models::warp_d_bf16 acc[8] = {};
    for (unsigned nt = 0; nt < 8; ++nt)
      for (unsigned st = 0; st < 8; ++st) {
        models::warp_a_bf16 a{};
        models::warp_b_bf16 bb{};
        for (unsigned lane = 0; lane < 32; ++lane) {
          u32x4 ql[plan::q_loads];
          for (unsigned j = 0; j < plan::q_loads; ++j) {
            const fragment_element e = plan::q_load(lane, j);
            std::uint32_t w[4];
            for (unsigned i = 0; i < 4; ++i) w[i] = b.q[e.row * kDim + e.col + 2 * i] | static_cast<std::uint32_t>(b.q[e.row * kDim + e.col + 2 * i + 1]) << 16;
            ql[j] = {w[0], w[1], w[2], w[3]};
          }
          u32 av[4], bv[2];
          plan::qk_a(av, ql, st);
          plan::qk_b(bv, wide_of(b.k, plan::k_read(lane, 2 * nt + st / 4)), st);
          for (unsigned w = 0; w < 4; ++w) a[lane][w] = av[w];
          bb[lane] = {bv[0], bv[1]};
        }
        acc[nt] = models::mma_m16n8k16_bf16(a, bb, acc[nt]);
      }
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned i = 0; i < plan::scores; ++i) {
        const fragment_element e = plan::score_of(lane, i);
        double want = 0;
        for (unsigned d = 0; d < kDim; ++d) want += static_cast<double>(f32_from_bf16(b.q[e.row * kDim + d])) * f32_from_e4m3(b.k[e.col * kDim + d]);
        REQUIRE(acc[i / 4][lane][i % 4] == doctest::Approx(want).epsilon(1e-12));
      }
    models::warp_d_bf16 out[16] = {};
    for (unsigned kk = 0; kk < 4; ++kk)
      for (unsigned nd = 0; nd < 16; ++nd) {
        models::warp_a_bf16 a{};
        models::warp_b_bf16 bb{};
        for (unsigned lane = 0; lane < 32; ++lane) {
          u32 p[8][2];
          for (unsigned nt = 0; nt < 8; ++nt)
            for (unsigned rh = 0; rh < 2; ++rh) {
              const fragment_element e0 = plan::score_of(lane, 4 * nt + 2 * rh), e1 = plan::score_of(lane, 4 * nt + 2 * rh + 1);
              p[nt][rh] = b.p[e0.row * kPos + e0.col] | static_cast<std::uint32_t>(b.p[e1.row * kPos + e1.col]) << 16;
            }
          const wide_chunk x[4] = {wide_of(b.v, plan::v_read(lane, 4 * kk)), wide_of(b.v, plan::v_read(lane, 4 * kk + 1)),
                                   wide_of(b.v, plan::v_read(lane, 4 * kk + 2)), wide_of(b.v, plan::v_read(lane, 4 * kk + 3))};
          u32 av[4], bv[2];
          plan::pv_a(av, p, kk);
          plan::pv_b(bv, x, nd);
          for (unsigned w = 0; w < 4; ++w) a[lane][w] = av[w];
          bb[lane] = {bv[0], bv[1]};
        }
        out[nd] = models::mma_m16n8k16_bf16(a, bb, out[nd]);
      }
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned i = 0; i < plan::o_items; ++i) {
        const fragment_element e = plan::o_of(lane, i);
        double want = 0;
        for (unsigned pos = 0; pos < kPos; ++pos) want += static_cast<double>(f32_from_bf16(b.p[e.row * kPos + pos])) * f32_from_e4m3(b.v[pos * kDim + e.col]);
        REQUIRE(out[i / 4][lane][i % 4] == doctest::Approx(want).epsilon(1e-12));
      }
  }
}

TEST_CASE("native extend plan: a row's scores and QK k-steps meet the pair view's in the same order") {
  for (unsigned lane = 0; lane < 32; ++lane) {
    // Row g's items in the lane's summation order (nt, then the pair) are the pair view's score_of order.
    for (unsigned nt = 0; nt < 8; ++nt)
      for (unsigned e = 0; e < 2; ++e) {
        CHECK(plan::score_of(lane, 4 * nt + e).col == view_plan::score_of(lane, 2 * nt + e).col);
        CHECK(plan::score_of(lane, 4 * nt + 2 + e).col == view_plan::score_of(lane, 2 * nt + e).col);  // row g + 8 likewise
      }
    // k-step s pairs head-dim elements of Q load 2c + (s % 4) / 2 (c = s / 4) at the view plan's offsets.
    for (unsigned st = 0; st < 8; ++st) {
      const unsigned c = st / 4, j = 2 * c + (st % 4) / 2;
      CHECK(plan::q_load(lane, j).col == view_plan::q_load(lane, j).col);
      CHECK(plan::k_read(lane, 2 * 0 + c).col == view_plan::k_read(lane, c).col);
    }
  }
}

TEST_CASE("native extend staging: the swizzle is a bijection of each staged row's 8 chunks") {
  for (unsigned pos = 0; pos < kPos; ++pos) {
    std::set<unsigned> slots;
    for (unsigned c = 0; c < 8; ++c) slots.insert(kernels::extend_staged_chunk(pos, c));
    CHECK(slots.size() == 8);
    CHECK(*slots.begin() == 8 * pos);
    CHECK(*slots.rbegin() == 8 * pos + 7);
  }
}
