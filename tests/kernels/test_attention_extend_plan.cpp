// kernels/attention/extend_plan.hpp on the host: each native extend plan's lane maps and builders,
// composed with the host models of mma.sync m16n8k16 BF16 (sm90a, 16 rows) and
// v_mfma_f32_16x16x32_bf16 (gfx950, 12 rows of 16 columns) (tests/models/matrix_bf16.hpp), give
// S = Q K^T at score_of() and O = P V at o_of() over a block of 64 positions x 128; every K/V
// read, score and output is owned once; each row's score items meet the pair view's
// (dsl/attention_fragment.hpp) in the same order and each QK k-step pairs the same head-dim
// elements (the bitwise argument of contracts::attention_gqa4_extend_native); the LDS staging
// swizzle is a bijection per row; the native slice count and the batched stage two's threshold.
#include <doctest/doctest.h>

#include <algorithm>

#include <cstdint>
#include <random>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "models/matrix_bf16.hpp"
#include "netra/kernels/attention/extend_native.hpp"

using namespace netra;
using plan = kernels::extend_plan<mma_m16n8k16_bf16>;
using view_plan = attention_plan<mma_m16n8k16_bf16>;
using plan950 = kernels::extend_plan<mfma_f32_16x16x32_bf16>;
using view950 = attention_plan<mfma_f32_16x16x32_bf16>;

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
/// The BF16 of the `words` E4M3 words at (position, first byte) of a [64][128] block.
wide_chunk wide_of(const std::vector<std::uint8_t>& m, fragment_element pb, unsigned words = 4) {
  wide_chunk x{};
  for (unsigned w = 0; w < words; ++w) {
    std::uint32_t word = 0;
    for (unsigned i = 0; i < 4; ++i) word |= static_cast<std::uint32_t>(m[pb.row * kDim + pb.col + 4 * w + i]) << (8 * i);
    x.w[w] = e4m3x4_to_bf16x4_reference(word);
  }
  return x;
}
u32x4 q_of(const block_data& b, fragment_element e, unsigned rows) {
  std::uint32_t w[4] = {};
  if (e.row < rows)
    for (unsigned i = 0; i < 4; ++i) w[i] = b.q[e.row * kDim + e.col + 2 * i] | static_cast<std::uint32_t>(b.q[e.row * kDim + e.col + 2 * i + 1]) << 16;
  return {w[0], w[1], w[2], w[3]};
}
double qk_exact(const block_data& b, fragment_element e) {
  double want = 0;
  for (unsigned d = 0; d < kDim; ++d) want += static_cast<double>(f32_from_bf16(b.q[e.row * kDim + d])) * f32_from_e4m3(b.k[e.col * kDim + d]);
  return want;
}
double pv_exact(const block_data& b, fragment_element e) {
  double want = 0;
  for (unsigned pos = 0; pos < kPos; ++pos) want += static_cast<double>(f32_from_bf16(b.p[e.row * kPos + pos])) * f32_from_e4m3(b.v[pos * kDim + e.col]);
  return want;
}
/// The lane's BF16 weight pair words (score items 2w, 2w + 1; padding rows 0).
template <class Plan> void p_words(u32 (&p)[Plan::scores / 2], const block_data& b, unsigned lane) {
  for (unsigned w = 0; w < Plan::scores / 2; ++w) {
    const fragment_element e0 = Plan::score_of(lane, 2 * w), e1 = Plan::score_of(lane, 2 * w + 1);
    p[w] = e0.row < Plan::rows ? b.p[e0.row * kPos + e0.col] | static_cast<std::uint32_t>(b.p[e1.row * kPos + e1.col]) << 16 : 0u;
  }
}
template <class Plan> void check_ownership(unsigned wave, unsigned tile_rows) {
  std::set<std::pair<unsigned, unsigned>> k, v, s, o, q;
  for (unsigned lane = 0; lane < wave; ++lane) {
    for (unsigned j = 0; j < Plan::k_reads; ++j) CHECK(k.insert({Plan::k_read(lane, j).row, Plan::k_read(lane, j).col}).second);
    for (unsigned j = 0; j < Plan::v_reads; ++j) CHECK(v.insert({Plan::v_read(lane, j).row, Plan::v_read(lane, j).col}).second);
    for (unsigned j = 0; j < Plan::q_loads; ++j) CHECK(q.insert({Plan::q_load(lane, j).row, Plan::q_load(lane, j).col}).second);
    for (unsigned i = 0; i < Plan::scores; ++i) CHECK(s.insert({Plan::score_of(lane, i).row, Plan::score_of(lane, i).col}).second);
    for (unsigned i = 0; i < Plan::o_items; ++i) {
      CHECK(o.insert({Plan::o_of(lane, i).row, Plan::o_of(lane, i).col}).second);
      for (unsigned j = 0; j < Plan::scores; ++j)  // o items sit in the rows of the same slot's scores
        if (Plan::row_slot(j) == Plan::row_slot(i)) CHECK(Plan::o_of(lane, i).row == Plan::score_of(lane, j).row);
    }
    for (unsigned m : {Plan::row_mask(0), Plan::row_mask(1)})
      for (unsigned i = 0; i < Plan::scores; ++i) CHECK(Plan::score_of(lane ^ m, i).row == Plan::score_of(lane, i).row);
  }
  CHECK(k.size() * 16 == kPos * kDim);
  CHECK(v.size() * Plan::v_bytes == kPos * kDim);
  CHECK(q.size() * 8 == tile_rows * kDim);
  CHECK(s.size() == tile_rows * kPos);
  CHECK(o.size() == tile_rows * kDim);
}
}  // namespace

TEST_CASE("native extend plan, sm90a: ownership, S = Q K^T and O = P V through the m16n8k16 model") {
  check_ownership<plan>(32, 16);
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const block_data b = random_block(seed);
    models::warp_d_bf16 acc[8] = {};
    for (unsigned nt = 0; nt < 8; ++nt)
      for (unsigned st = 0; st < 8; ++st) {
        models::warp_a_bf16 a{};
        models::warp_b_bf16 bb{};
        for (unsigned lane = 0; lane < 32; ++lane) {
          u32x4 ql[plan::q_loads];
          for (unsigned j = 0; j < plan::q_loads; ++j) ql[j] = q_of(b, plan::q_load(lane, j), plan::rows);
          plan::q_operands qa;
          plan::q_operands_of(qa, ql);
          const bf16x4 k4 = wide_of(b.k, plan::k_read(lane, 2 * nt + st / 4)).w[st % 4];
          const u32 av[4] = {qa[st][0], qa[st][1], qa[st][2], qa[st][3]}, bv[2] = {k4.lo, k4.hi};
          for (unsigned w = 0; w < 4; ++w) a[lane][w] = av[w];
          bb[lane] = {bv[0], bv[1]};
        }
        acc[nt] = models::mma_m16n8k16_bf16(a, bb, acc[nt]);
      }
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned i = 0; i < plan::scores; ++i) REQUIRE(acc[i / 4][lane][i % 4] == doctest::Approx(qk_exact(b, plan::score_of(lane, i))).epsilon(1e-12));
    models::warp_d_bf16 out[16] = {};
    for (unsigned kk = 0; kk < 4; ++kk)
      for (unsigned nd = 0; nd < 16; ++nd) {
        models::warp_a_bf16 a{};
        models::warp_b_bf16 bb{};
        for (unsigned lane = 0; lane < 32; ++lane) {
          u32 p[plan::scores / 2];
          p_words<plan>(p, b, lane);
          bf16x4 x[4];
          for (unsigned e = 0; e < 4; ++e) x[e] = wide_of(b.v, plan::v_read(lane, 4 * kk + e)).w[nd / 4];
          u32 av[4], bv[2];
          plan::pv_a(av, p, kk);
          plan::pv_b(bv, x, nd);
          for (unsigned w = 0; w < 4; ++w) a[lane][w] = av[w];
          bb[lane] = {bv[0], bv[1]};
        }
        out[nd] = models::mma_m16n8k16_bf16(a, bb, out[nd]);
      }
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned i = 0; i < plan::o_items; ++i) REQUIRE(out[i / 4][lane][i % 4] == doctest::Approx(pv_exact(b, plan::o_of(lane, i))).epsilon(1e-12));
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
      CHECK(plan::k_read(lane, c).col / 16 == view_plan::k_read(lane, c).col);
    }
  }
  for (unsigned lane = 0; lane < 64; ++lane) {  // gfx950: the same positions per item, Q elements and K chunks of the head's half
    for (unsigned i = 0; i < plan950::scores; ++i) CHECK(plan950::score_of(lane, i).col == view950::score_of(lane, i).col);
    for (unsigned j = 0; j < plan950::q_loads; ++j) CHECK(plan950::q_load(lane, j).col == view950::q_load(lane, j).col);
    for (unsigned t = 0; t < 4; ++t)
      for (unsigned c = 0; c < 2; ++c) {
        CHECK(plan950::k_read(lane, 2 * t + c).row == view950::k_read(lane, 4 * t + c).row);
        CHECK(plan950::k_read(lane, 2 * t + c).col / 16 == view950::k_read(lane, 4 * t + c).col);
      }
  }
}

TEST_CASE("native extend plan, gfx950: ownership, S = Q K^T and O = P V through the 16x16x32 MFMA model (12 of 16 columns)") {
  check_ownership<plan950>(64, 16);
  for (std::uint32_t seed : {4u, 5u}) {
    const block_data b = random_block(seed);
    for (unsigned t = 0; t < 4; ++t) {
      models::wave_d_bf16 acc{};
      for (unsigned c = 0; c < 2; ++c)
        for (unsigned sub = 0; sub < 2; ++sub) {
          models::wave_ab_bf16 a{}, bb{};
          for (unsigned lane = 0; lane < 64; ++lane) {
            u32x4 ql[plan950::q_loads];
            for (unsigned j = 0; j < plan950::q_loads; ++j) ql[j] = q_of(b, plan950::q_load(lane, j), plan950::rows);
            plan950::q_operands qa;
            plan950::q_operands_of(qa, ql);
            u32 av[4];
            view950::qk_a(av, wide_of(b.k, plan950::k_read(lane, 2 * t + c)), sub);
            const u32x4 q = qa[2 * c + sub];
            a[lane] = {av[0], av[1], av[2], av[3]}, bb[lane] = {q.x, q.y, q.z, q.w};
          }
          acc = models::mfma_f32_16x16x32_bf16(a, bb, acc);
        }
      for (unsigned lane = 0; lane < 64; ++lane)
        for (unsigned i = 0; i < 4; ++i) {
          const fragment_element e = plan950::score_of(lane, 4 * t + i);
          if (e.row < plan950::rows) REQUIRE(acc[lane][i] == doctest::Approx(qk_exact(b, e)).epsilon(1e-12));
          else CHECK(acc[lane][i] == 0.0);  // padding columns: Q rows 12..15 are zero
        }
    }
    models::wave_d_bf16 out[8] = {};
    for (unsigned kk = 0; kk < 2; ++kk)
      for (unsigned w = 0; w < 2; ++w)
        for (unsigned half = 0; half < 4; ++half) {
          models::wave_ab_bf16 a{}, bb{};
          for (unsigned lane = 0; lane < 64; ++lane) {
            u32 p[plan950::scores / 2];
            p_words<plan950>(p, b, lane);
            bf16x4 x[8];
            for (unsigned i = 0; i < 8; ++i) x[i] = wide_of(b.v, plan950::v_read(lane, 8 * kk + i), 2).w[w];
            u32 av[4];
            if (half == 0) view950::pv_a<0>(av, x);
            if (half == 1) view950::pv_a<1>(av, x);
            if (half == 2) view950::pv_a<2>(av, x);
            if (half == 3) view950::pv_a<3>(av, x);
            a[lane] = {av[0], av[1], av[2], av[3]}, bb[lane] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
          }
          out[4 * w + half] = models::mfma_f32_16x16x32_bf16(a, bb, out[4 * w + half]);
        }
    for (unsigned lane = 0; lane < 64; ++lane)
      for (unsigned i = 0; i < plan950::o_items; ++i) {
        const fragment_element e = plan950::o_of(lane, i);
        if (e.row < plan950::rows) REQUIRE(out[i / 4][lane][i % 4] == doctest::Approx(pv_exact(b, e)).epsilon(1e-12));
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

TEST_CASE("native extend slices: one wave of stage-one workgroups, 2 to 16 (the H200's measured counts); stage two's forms") {
  using native = contracts::attention_gqa4_extend_native<sm90a, 1, 6, 64, 128>;
  CHECK(native::slices_for(1, 132) == 16);
  CHECK(native::slices_for(1, 256) == 16);
  CHECK(native::slices_for(8, 132) == 8);
  CHECK(native::slices_for(16, 132) == 4);
  CHECK(native::slices_for(32, 132) == 2);
  CHECK(native::slices_for(64, 132) == 2);
  CHECK(native::slices_for(0, 132) == 16);
  for (u32 b = 1; b <= 64; ++b) {
    CHECK(native::slices_for(b, 132) >= 2);
    CHECK(b * native::slices_for(b, 132) <= native::split_capacity);
    CHECK(b * native::slices_for(b, 132) * 8 <= std::max(2u * b * 8, 4u * 132));  // at most one wave of 4 workgroups per SM
  }
  CHECK(kernels::attention_extend_stage_two<native>::wide_slices == 16);
  using kernels::attention_extend_stage_two, kernels::extend_stage_two_wide;
  CHECK(std::string_view(attention_extend_stage_two<native, extend_stage_two_wide>::symbol) == "netra_attention_extend_stage_two_wide");
  CHECK(attention_extend_stage_two<native, extend_stage_two_wide>::workgroup_size == 512);
  CHECK(attention_extend_stage_two<native, extend_stage_two_wide>::rows == 1);
  CHECK(std::string_view(attention_extend_stage_two<native>::symbol) == "netra_attention_extend_stage_two");
  CHECK(attention_extend_stage_two<native>::workgroup_size == 128);
  CHECK(attention_extend_stage_two<native>::rows == 4);
}
