// dsl/attention_fragment.hpp: each attention plan's lane maps and operand builders, composed with
// the host models of the matrix instructions (tests/models/matrix_bf16.hpp, written from the ISA
// documents independently of the plans), give S = Q K^T at score_of() and O = P V at o_of() for a
// block of 64 positions; every K/V chunk, score and output element is owned exactly once.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "kernels/attention_block_data.hpp"
#include "models/matrix_bf16.hpp"
#include "netra/dsl/attention_fragment.hpp"

using namespace netra;

namespace {
constexpr unsigned kRows = 8, kPos = 64, kDim = 256;

using block_data = testing::attention_block<kRows>;
block_data random_block(std::uint32_t seed) { return block_data::random(seed); }
double qk_exact(const block_data& b, unsigned row, unsigned pos) { return b.qk_exact(row, pos); }
double pv_exact(const block_data& b, unsigned row, unsigned d) { return b.pv_exact(row, d); }
u32x4 chunk_of(const std::vector<std::uint8_t>& m, fragment_element pc) {
  std::uint32_t w[4] = {};
  for (unsigned i = 0; i < 16; ++i) w[i / 4] |= static_cast<std::uint32_t>(m[pc.row * kDim + 16 * pc.col + i]) << (8 * (i % 4));
  return {w[0], w[1], w[2], w[3]};
}
template <class Plan> std::array<std::uint32_t, 4 * Plan::q_loads> q_regs(const block_data& b, unsigned lane) {
  std::array<std::uint32_t, 4 * Plan::q_loads> q{};
  for (unsigned j = 0; j < Plan::q_loads; ++j) {
    const fragment_element e = Plan::q_load(lane, j);
    if (e.row >= kRows) continue;  // padding rows stay zero
    for (unsigned w = 0; w < 4; ++w)
      q[4 * j + w] = b.q[e.row * kDim + e.col + 2 * w] | static_cast<std::uint32_t>(b.q[e.row * kDim + e.col + 2 * w + 1]) << 16;
  }
  return q;
}
template <class Plan> std::array<std::uint32_t, Plan::scores / 2> p_regs(const block_data& b, unsigned lane) {
  std::array<std::uint32_t, Plan::scores / 2> p{};
  for (unsigned w = 0; w < Plan::scores / 2; ++w) {
    std::uint32_t word = 0;
    for (unsigned h = 0; h < 2; ++h) {
      const fragment_element e = Plan::score_of(lane, 2 * w + h);
      if (e.row < kRows) word |= static_cast<std::uint32_t>(b.p[e.row * kPos + e.col]) << (16 * h);
    }
    p[w] = word;
  }
  return p;
}
template <class Plan> void check_ownership() {
  std::set<std::pair<unsigned, unsigned>> k, v, s, o;
  for (unsigned lane = 0; lane < Plan::wave; ++lane) {
    for (unsigned j = 0; j < Plan::k_reads; ++j) CHECK(k.insert({Plan::k_read(lane, j).row, Plan::k_read(lane, j).col}).second);
    for (unsigned j = 0; j < Plan::v_reads; ++j) CHECK(v.insert({Plan::v_read(lane, j).row, Plan::v_read(lane, j).col}).second);
    for (unsigned i = 0; i < Plan::scores; ++i)
      if (Plan::score_of(lane, i).row < kRows) CHECK(s.insert({Plan::score_of(lane, i).row, Plan::score_of(lane, i).col}).second);
    for (unsigned i = 0; i < Plan::o_items; ++i)
      if (Plan::o_of(lane, i).row < kRows) CHECK(o.insert({Plan::o_of(lane, i).row, Plan::o_of(lane, i).col}).second);
  }
  CHECK(k.size() == kPos * 16);
  CHECK(v.size() == kPos * 16);
  CHECK(s.size() == kRows * kPos);
  CHECK(o.size() == kRows * kDim);
  for (auto [pos, chunk] : k) CHECK((pos < kPos && chunk < 16));
  // Lanes that share a score row are exactly the lanes reached by the two xor masks.
  for (unsigned lane = 0; lane < Plan::wave; ++lane)
    for (unsigned m : {Plan::row_mask(0), Plan::row_mask(1), Plan::row_mask(0) ^ Plan::row_mask(1)})
      CHECK(Plan::score_of(lane ^ m, 0).row == Plan::score_of(lane, 0).row);
  for (unsigned lane = 0; lane < Plan::wave; ++lane)
    for (unsigned i = 0; i < Plan::o_items; ++i)
      if (Plan::o_of(lane, i).row < kRows) {
        CHECK(Plan::score_of(Plan::stats_lane(Plan::o_of(lane, i).row), 0).row == Plan::o_of(lane, i).row);
        CHECK(Plan::o_row(lane, Plan::o_row_slot(i)) == Plan::o_of(lane, i).row);
        if (Plan::o_rows_are_score_rows) CHECK(Plan::score_of(lane, 0).row == Plan::o_of(lane, i).row);
      }
}
}  // namespace

TEST_CASE("sm90a plan (mma.sync m16n8k16 BF16): ownership, S = Q K^T and O = P V through the instruction model") {
  using plan = attention_plan<mma_m16n8k16_bf16>;
  check_ownership<plan>();
  CHECK_FALSE(plan::o_rows_are_score_rows);
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const block_data b = random_block(seed);
    // QK: per N-tile, 16 chained instructions.
    for (unsigned nt = 0; nt < 8; ++nt) {
      models::warp_d_bf16 acc{};
      for (unsigned step = 0; step < 16; ++step) {
        models::warp_a_bf16 a{};
        models::warp_b_bf16 bb{};
        for (unsigned lane = 0; lane < 32; ++lane) {
          const auto q = q_regs<plan>(b, lane);
          const unsigned j = step / 2;
          u32 av[4], bv[2];
          plan::qk_a(av, u32x4{q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]}, step);
          plan::qk_b(bv, e4m3x4_to_bf16x4_reference(plan::k_word(chunk_of(b.k, plan::k_read(lane, 4 * nt + step / 4)), step)));
          for (unsigned w = 0; w < 4; ++w) a[lane][w] = av[w];
          bb[lane] = {bv[0], bv[1]};
        }
        acc = models::mma_m16n8k16_bf16(a, bb, acc);
      }
      for (unsigned lane = 0; lane < 32; ++lane) {
        for (unsigned e = 0; e < 2; ++e) {
          const fragment_element se = plan::score_of(lane, 2 * nt + e);
          REQUIRE(acc[lane][e] == doctest::Approx(qk_exact(b, se.row, se.col)).epsilon(1e-12));
        }
        CHECK(acc[lane][2] == 0.0);  // padding rows g + 8
        CHECK(acc[lane][3] == 0.0);
      }
    }
    // PV: 4 k-steps x 16 M-tiles.
    models::warp_d_bf16 o[16] = {};
    for (unsigned kk = 0; kk < 4; ++kk)
      for (unsigned h = 0; h < 2; ++h)
        for (unsigned w = 0; w < 4; ++w)
          for (unsigned hi = 0; hi < 2; ++hi) {
            models::warp_a_bf16 a{};
            models::warp_b_bf16 bb{};
            for (unsigned lane = 0; lane < 32; ++lane) {
              const auto p = p_regs<plan>(b, lane);
              std::uint32_t pa[plan::scores / 2];
              for (unsigned i = 0; i < plan::scores / 2; ++i) pa[i] = p[i];
              u32 bv[2], av[4];
              plan::pv_b(bv, pa, kk);
              bf16x4 x[4];
              for (unsigned pi = 0; pi < 4; ++pi) x[pi] = e4m3x4_to_bf16x4_reference(chunk_of(b.v, plan::v_read(lane, 8 * kk + 2 * pi + h))[static_cast<int>(w)]);
              if (hi) plan::pv_a<1>(av, x);
              else plan::pv_a<0>(av, x);
              for (unsigned i = 0; i < 4; ++i) a[lane][i] = av[i];
              bb[lane] = {bv[0], bv[1]};
            }
            const unsigned mt = 8 * h + 2 * w + hi;
            o[mt] = models::mma_m16n8k16_bf16(a, bb, o[mt]);
          }
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned i = 0; i < plan::o_items; ++i) {
        const fragment_element oe = plan::o_of(lane, i);
        REQUIRE(o[i / 4][lane][i % 4] == doctest::Approx(pv_exact(b, oe.row, oe.col)).epsilon(1e-12));
      }
  }
}

TEST_CASE("gfx950 plan (v_mfma_f32_16x16x32_bf16): ownership, S = Q K^T and O = P V through the instruction model") {
  using plan = attention_plan<mfma_f32_16x16x32_bf16>;
  check_ownership<plan>();
  CHECK(plan::o_rows_are_score_rows);
  for (std::uint32_t seed : {4u, 5u}) {
    const block_data b = random_block(seed);
    for (unsigned mt = 0; mt < 4; ++mt) {
      models::wave_d_bf16 acc{};
      for (unsigned step = 0; step < 8; ++step) {
        models::wave_ab_bf16 a{}, bb{};
        for (unsigned lane = 0; lane < 64; ++lane) {
          const auto q = q_regs<plan>(b, lane);
          const unsigned c = step / plan::qk_steps;
          const u32x4 chunk = chunk_of(b.k, plan::k_read(lane, plan::qk_chunks * mt + c));
          wide_chunk k4;
          for (unsigned w = 0; w < 4; ++w) k4.w[w] = e4m3x4_to_bf16x4_reference(chunk[static_cast<int>(w)]);
          u32 av[4], bv[4];
          plan::qk_step(av, bv, u32x4{q[8 * c], q[8 * c + 1], q[8 * c + 2], q[8 * c + 3]}, u32x4{q[8 * c + 4], q[8 * c + 5], q[8 * c + 6], q[8 * c + 7]}, k4,
                        step);
          for (unsigned w = 0; w < 4; ++w) a[lane][w] = av[w], bb[lane][w] = bv[w];
        }
        acc = models::mfma_f32_16x16x32_bf16(a, bb, acc);
      }
      for (unsigned lane = 0; lane < 64; ++lane)
        for (unsigned e = 0; e < 4; ++e) {
          const fragment_element se = plan::score_of(lane, 4 * mt + e);
          if (se.row < kRows) REQUIRE(acc[lane][e] == doctest::Approx(qk_exact(b, se.row, se.col)).epsilon(1e-12));
          else CHECK(acc[lane][e] == 0.0);  // padding columns (Q rows 8..15 are zero)
        }
    }
    models::wave_d_bf16 o[16] = {};
    for (unsigned kk = 0; kk < 2; ++kk)
      for (unsigned w = 0; w < 4; ++w)
        for (unsigned half = 0; half < 4; ++half) {
          models::wave_ab_bf16 a{}, bb{};
          for (unsigned lane = 0; lane < 64; ++lane) {
            const auto p = p_regs<plan>(b, lane);
            std::uint32_t pa[plan::scores / 2];
            for (unsigned i = 0; i < plan::scores / 2; ++i) pa[i] = p[i];
            u32 bv[4], av[4];
            plan::pv_b(bv, pa, kk);
            bf16x4 x[8];
            for (unsigned i = 0; i < 8; ++i) x[i] = e4m3x4_to_bf16x4_reference(chunk_of(b.v, plan::v_read(lane, 8 * kk + i))[static_cast<int>(w)]);
            if (half == 0) plan::pv_a<0>(av, x);
            if (half == 1) plan::pv_a<1>(av, x);
            if (half == 2) plan::pv_a<2>(av, x);
            if (half == 3) plan::pv_a<3>(av, x);
            for (unsigned i = 0; i < 4; ++i) a[lane][i] = av[i], bb[lane][i] = bv[i];
          }
          const unsigned mt = 4 * w + half;
          o[mt] = models::mfma_f32_16x16x32_bf16(a, bb, o[mt]);
        }
    for (unsigned lane = 0; lane < 64; ++lane)
      for (unsigned i = 0; i < plan::o_items; ++i) {
        const fragment_element oe = plan::o_of(lane, i);
        if (oe.row < kRows) REQUIRE(o[i / 4][lane][i % 4] == doctest::Approx(pv_exact(b, oe.row, oe.col)).epsilon(1e-12));
      }
  }
}

TEST_CASE("E4M3 -> BF16 widening is exact on every code (NaN -> 0x7FFF)") {
  for (unsigned c = 0; c < 256; ++c) {
    const bf16x4 w = e4m3x4_to_bf16x4_reference(c | (c << 8) | (c << 16) | (c << 24));
    const float f = f32_from_e4m3(static_cast<std::uint8_t>(c));
    const std::uint16_t h = static_cast<std::uint16_t>(w.lo);
    if (f != f) CHECK(h == 0x7FFF);
    else CHECK(f32_from_bf16(h) == f);
    CHECK(w.lo == w.hi);
    CHECK((w.lo >> 16) == h);
  }
}
