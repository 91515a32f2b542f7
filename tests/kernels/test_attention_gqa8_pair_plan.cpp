// kernels/attention/gqa8_wave_plan.hpp: the two-token wave plans (verify) composed with the host
// models of the matrix instructions (tests/models/matrix_bf16.hpp) give S = Q K^T at score_of()
// and O = P V at o_of() for 16 real rows over a block of 64 positions; every score and output is
// owned once; and each row keeps the one-token plan's association (the same positions in the same
// lanes and item order, the same statistics lane), so the two-token verify has the one-token bits.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "kernels/attention_block_data.hpp"
#include "models/matrix_bf16.hpp"
#include "netra/kernels/attention/gqa8_wave_plan.hpp"

using namespace netra;

namespace {
constexpr unsigned kRows = 16, kPos = 64, kDim = 256;

using block16 = testing::attention_block<kRows>;
wide_chunk wide_of(const std::vector<std::uint8_t>& m, fragment_element pc) {
  wide_chunk x;
  for (unsigned w = 0; w < 4; ++w) {
    std::uint32_t word = 0;
    for (unsigned i = 0; i < 4; ++i) word |= static_cast<std::uint32_t>(m[pc.row * kDim + 16 * pc.col + 4 * w + i]) << (8 * i);
    x.w[w] = e4m3x4_to_bf16x4_reference(word);
  }
  return x;
}
template <class Plan> u32x4 q_reg(const block16& b, unsigned lane, unsigned j) {
  const fragment_element e = Plan::q_load(lane, j);
  std::uint32_t w[4];
  for (unsigned i = 0; i < 4; ++i) w[i] = b.q[e.row * kDim + e.col + 2 * i] | static_cast<std::uint32_t>(b.q[e.row * kDim + e.col + 2 * i + 1]) << 16;
  return {w[0], w[1], w[2], w[3]};
}
template <class Plan> void p_regs(const block16& b, unsigned lane, std::uint32_t (&p)[Plan::scores / 2]) {
  for (unsigned w = 0; w < Plan::scores / 2; ++w) {
    p[w] = 0;
    for (unsigned h = 0; h < 2; ++h) {
      const fragment_element e = Plan::score_of(lane, 2 * w + h);
      p[w] |= static_cast<std::uint32_t>(b.p[e.row * kPos + e.col]) << (16 * h);
    }
  }
}

/// Every score / output of the 16 rows owned once; the slots name the rows; each row r's items
/// in each of its lanes are the one-token plan's items of row r % 8 in that lane, in order.
template <class Pair, class One> void check_rows() {
  std::set<std::pair<unsigned, unsigned>> s, o;
  for (unsigned lane = 0; lane < Pair::wave; ++lane) {
    for (unsigned i = 0; i < Pair::scores; ++i) CHECK(s.insert({Pair::score_of(lane, i).row, Pair::score_of(lane, i).col}).second);
    for (unsigned i = 0; i < Pair::o_items; ++i) {
      const fragment_element e = Pair::o_of(lane, i);
      CHECK(o.insert({e.row, e.col}).second);
      CHECK(Pair::o_row(lane, Pair::o_row_slot(i)) == e.row);
      const unsigned k = Pair::o_row_score_slot(Pair::o_row_slot(i));
      bool named = false;  // the statistics lane holds row e.row in score slot k
      for (unsigned j = 0; j < Pair::scores; ++j)
        named |= Pair::score_row_slot(j) == k && Pair::score_of(Pair::stats_lane(e.row), j).row == e.row;
      CHECK(named);
    }
    for (unsigned m : {Pair::row_mask(0), Pair::row_mask(1)})
      for (unsigned i = 0; i < Pair::scores; ++i) CHECK(Pair::score_of(lane ^ m, i).row == Pair::score_of(lane, i).row);
    for (unsigned k = 0; k < Pair::score_row_slots; ++k) {
      unsigned row = kRows;
      for (unsigned i = 0; i < Pair::scores; ++i)
        if (Pair::score_row_slot(i) == k) {
          if (row == kRows) row = Pair::score_of(lane, i).row;
          CHECK(Pair::score_of(lane, i).row == row);  // a slot is one row
        }
    }
    for (unsigned w = 0; w < Pair::scores / 2; ++w) CHECK(Pair::score_row_slot(2 * w) == Pair::score_row_slot(2 * w + 1));  // a P word: one row
  }
  // Row r's four lanes (the statistics lane and its butterfly partners, in the order l is summed)
  // hold the positions the one-token plan's lanes of row r % 8 hold, item for item.
  CHECK(Pair::row_mask(0) == One::row_mask(0));
  CHECK(Pair::row_mask(1) == One::row_mask(1));
  for (unsigned row = 0; row < kRows; ++row)
    for (unsigned k = 0; k < 4; ++k) {
      const unsigned flip = (k & 1 ? Pair::row_mask(0) : 0) ^ (k & 2 ? Pair::row_mask(1) : 0);
      const unsigned lp = Pair::stats_lane(row) ^ flip, lo = One::stats_lane(row % 8) ^ flip;
      std::vector<unsigned> pair_cols, one_cols;
      for (unsigned i = 0; i < Pair::scores; ++i)
        if (Pair::score_of(lp, i).row == row) pair_cols.push_back(Pair::score_of(lp, i).col);
      for (unsigned i = 0; i < One::scores; ++i) {
        CHECK(One::score_of(lo, i).row == row % 8);
        one_cols.push_back(One::score_of(lo, i).col);
      }
      CHECK(pair_cols == one_cols);
    }
  CHECK(s.size() == kRows * kPos);
  CHECK(o.size() == kRows * kDim);
  for (unsigned lane = 0; lane < Pair::wave; ++lane)
    for (unsigned j = 0; j < Pair::k_reads; ++j) CHECK(Pair::k_read(lane, j).row == One::k_read(lane, j).row);
}
}  // namespace

TEST_CASE("sm90a two-token plan: 16 real rows, the one-token association per row, S = Q K^T and O = P V through the instruction model") {
  using plan = kernels::gqa8_pair_plan<mma_m16n8k16_bf16>;
  using one = kernels::gqa8_single_plan<mma_m16n8k16_bf16>;
  check_rows<plan, one>();
  for (std::uint32_t seed : {11u, 12u}) {
    const block16 b = block16::random(seed);
    for (unsigned nt = 0; nt < plan::qk_tiles; ++nt) {
      models::warp_d_bf16 acc{};
      for (unsigned step = 0; step < 16; ++step) {
        models::warp_a_bf16 a{};
        models::warp_b_bf16 bb{};
        const unsigned c = step / 4, j = 2 * c + (step % 4) / 2;
        for (unsigned lane = 0; lane < 32; ++lane) {
          u32 av[4];
          plan::qk_a(av, q_reg<plan>(b, lane, j), q_reg<plan>(b, lane, 8 + j), step);
          const wide_chunk k4 = wide_of(b.k, plan::k_read(lane, plan::qk_chunks * nt + c));
          for (unsigned w = 0; w < 4; ++w) a[lane][w] = av[w];
          bb[lane] = {k4.w[step % 4].lo, k4.w[step % 4].hi};
        }
        acc = models::mma_m16n8k16_bf16(a, bb, acc);
      }
      for (unsigned lane = 0; lane < 32; ++lane)
        for (unsigned e = 0; e < 4; ++e) {
          const fragment_element se = plan::score_of(lane, 4 * nt + e);
          REQUIRE(acc[lane][e] == doctest::Approx(b.qk_exact(se.row, se.col)).epsilon(1e-12));
        }
    }
    models::warp_d_bf16 o[32] = {};
    for (unsigned kk = 0; kk < plan::pv_steps; ++kk)
      for (unsigned h = 0; h < 2; ++h)
        for (unsigned w = 0; w < 4; ++w)
          for (unsigned hi = 0; hi < 2; ++hi)
            for (unsigned tok = 0; tok < 2; ++tok) {
              models::warp_a_bf16 a{};
              models::warp_b_bf16 bb{};
              for (unsigned lane = 0; lane < 32; ++lane) {
                std::uint32_t p[plan::scores / 2];
                p_regs<plan>(b, lane, p);
                u32 bv[2], av[4];
                plan::pv_b(bv, p, kk, tok);
                bf16x4 x[4];
                for (unsigned i = 0; i < 4; ++i) x[i] = wide_of(b.v, plan::v_read(lane, plan::view::pv_chunk(kk, h, i))).w[w];
                if (hi) plan::view::pv_a<1>(av, x);
                else plan::view::pv_a<0>(av, x);
                for (unsigned i = 0; i < 4; ++i) a[lane][i] = av[i];
                bb[lane] = {bv[0], bv[1]};
              }
              const unsigned t = 16 * tok + plan::view::pv_tile(h, w, hi);
              o[t] = models::mma_m16n8k16_bf16(a, bb, o[t]);
            }
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned i = 0; i < plan::o_items; ++i) {
        const fragment_element oe = plan::o_of(lane, i);
        REQUIRE(o[i / 4][lane][i % 4] == doctest::Approx(b.pv_exact(oe.row, oe.col)).epsilon(1e-12));
      }
  }
}

TEST_CASE("gfx950 two-token plan: query columns 8..15 are the second token, S = Q K^T and O = P V through the instruction model") {
  using plan = kernels::gqa8_pair_plan<mfma_f32_16x16x32_bf16>;
  using one = kernels::gqa8_single_plan<mfma_f32_16x16x32_bf16>;
  check_rows<plan, one>();
  const block16 b = block16::random(13);
  for (unsigned mt = 0; mt < plan::qk_tiles; ++mt) {
    models::wave_d_bf16 acc{};
    for (unsigned step = 0; step < plan::qk_chunks * plan::qk_steps; ++step) {
      models::wave_ab_bf16 a{}, bb{};
      const unsigned c = step / plan::qk_steps;
      for (unsigned lane = 0; lane < 64; ++lane) {
        u32 av[4], bv[4];
        plan::qk_step(av, bv, q_reg<plan>(b, lane, 2 * c), q_reg<plan>(b, lane, 2 * c + 1), wide_of(b.k, plan::k_read(lane, plan::qk_chunks * mt + c)), step);
        for (unsigned w = 0; w < 4; ++w) a[lane][w] = av[w], bb[lane][w] = bv[w];
      }
      acc = models::mfma_f32_16x16x32_bf16(a, bb, acc);
    }
    for (unsigned lane = 0; lane < 64; ++lane)
      for (unsigned e = 0; e < 4; ++e) {
        const fragment_element se = plan::score_of(lane, 4 * mt + e);
        REQUIRE(acc[lane][e] == doctest::Approx(b.qk_exact(se.row, se.col)).epsilon(1e-12));
      }
  }
  models::wave_d_bf16 o[16] = {};
  for (unsigned kk = 0; kk < plan::pv_steps; ++kk)
    for (unsigned w = 0; w < 4; ++w)
      for (unsigned half = 0; half < 4; ++half) {
        models::wave_ab_bf16 a{}, bb{};
        for (unsigned lane = 0; lane < 64; ++lane) {
          std::uint32_t p[plan::scores / 2];
          p_regs<plan>(b, lane, p);
          u32 bv[4], av[4];
          plan::pv_b(bv, p, kk);
          bf16x4 x[8];
          for (unsigned i = 0; i < 8; ++i) x[i] = wide_of(b.v, plan::v_read(lane, plan::pv_chunk(kk, 0, i))).w[w];
          if (half == 0) plan::pv_a<0>(av, x);
          if (half == 1) plan::pv_a<1>(av, x);
          if (half == 2) plan::pv_a<2>(av, x);
          if (half == 3) plan::pv_a<3>(av, x);
          for (unsigned i = 0; i < 4; ++i) a[lane][i] = av[i], bb[lane][i] = bv[i];
        }
        const unsigned t = plan::pv_tile(0, w, half);
        o[t] = models::mfma_f32_16x16x32_bf16(a, bb, o[t]);
      }
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned i = 0; i < plan::o_items; ++i) {
      const fragment_element oe = plan::o_of(lane, i);
      REQUIRE(o[i / 4][lane][i % 4] == doctest::Approx(b.pv_exact(oe.row, oe.col)).epsilon(1e-12));
    }
}
