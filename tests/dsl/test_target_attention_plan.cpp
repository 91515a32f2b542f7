// gfx942's attention plan (dsl/attention_fragment.hpp on v_mfma_f32_16x16x16_bf16) composed with
// the independent instruction model of tests/models/mfma_bf16_gfx942.hpp: S = Q K^T at score_of()
// and O = P V at o_of() for a block of 64 positions whose K / V bytes are E4M3FNUZ, exactly; the
// same bytes widened as E4M3FN, and a plan step fed the wrong Q half, must fail. Its lane maps are
// gfx950's (so ownership, the softmax order and the oracles of tests/kernels carry over). Also the
// FP8 -> BF16 widening of both formats on every code.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "models/mfma_bf16_gfx942.hpp"
#include "netra/dsl/attention_fragment.hpp"

using namespace netra;

namespace {
constexpr unsigned kRows = 8, kPos = 64, kDim = 256;
using plan = attention_plan_of<gfx942>;
using gfx950_plan = attention_plan_of<gfx950>;

struct fnuz_block {
  std::vector<std::uint16_t> q, p;  // [8][256], [8][64] BF16
  std::vector<std::uint8_t> k, v;   // [64][256] E4M3FNUZ
};
fnuz_block random_block(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 2.0f);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  fnuz_block b;
  for (unsigned i = 0; i < kRows * kDim; ++i) b.q.push_back(bf16_from_f32_reference(n(rng)));
  for (unsigned i = 0; i < kPos * kDim; ++i) {
    b.k.push_back(fp8_from_f32_reference<fp8::e4m3fnuz>(n(rng)));
    b.v.push_back(fp8_from_f32_reference<fp8::e4m3fnuz>(n(rng)));
  }
  for (unsigned i = 0; i < kRows * kPos; ++i) b.p.push_back(bf16_from_f32_reference(u(rng)));
  return b;
}
double qk_exact(const fnuz_block& b, unsigned row, unsigned pos) {
  double s = 0;
  for (unsigned d = 0; d < kDim; ++d) s += static_cast<double>(f32_from_bf16(b.q[row * kDim + d])) * f32_from_fp8<fp8::e4m3fnuz>(b.k[pos * kDim + d]);
  return s;
}
double pv_exact(const fnuz_block& b, unsigned row, unsigned d) {
  double s = 0;
  for (unsigned pos = 0; pos < kPos; ++pos) s += static_cast<double>(f32_from_bf16(b.p[row * kPos + pos])) * f32_from_fp8<fp8::e4m3fnuz>(b.v[pos * kDim + d]);
  return s;
}
/// The 16-byte chunk (position, chunk index) of a [64][256] FP8 block, widened in format F.
template <class F> wide_chunk wide_of(const std::vector<std::uint8_t>& m, fragment_element pc) {
  wide_chunk x;
  for (unsigned w = 0; w < 4; ++w) {
    std::uint32_t word = 0;
    for (unsigned i = 0; i < 4; ++i) word |= static_cast<std::uint32_t>(m[pc.row * kDim + 16 * pc.col + 4 * w + i]) << (8 * i);
    x.w[w] = fp8x4_to_bf16x4_reference<F>(word);
  }
  return x;
}
u32x4 q_load(const fnuz_block& b, unsigned lane, unsigned j) {
  const fragment_element e = plan::q_load(lane, j);
  if (e.row >= kRows) return {0, 0, 0, 0};  // padding rows stay zero
  std::uint32_t w[4];
  for (unsigned i = 0; i < 4; ++i) w[i] = b.q[e.row * kDim + e.col + 2 * i] | static_cast<std::uint32_t>(b.q[e.row * kDim + e.col + 2 * i + 1]) << 16;
  return {w[0], w[1], w[2], w[3]};
}
void p_words(const fnuz_block& b, unsigned lane, u32 (&p)[plan::scores / 2]) {
  for (unsigned w = 0; w < plan::scores / 2; ++w) {
    p[w] = 0;
    for (unsigned h = 0; h < 2; ++h) {
      const fragment_element e = plan::score_of(lane, 2 * w + h);
      if (e.row < kRows) p[w] |= static_cast<std::uint32_t>(b.p[e.row * kPos + e.col]) << (16 * h);
    }
  }
}

/// The block's scores through the plan and the model (tile-major: [tile][lane][item]); K widened
/// as F; swap_q feeds each step the other Q load (a wrong plan).
template <class F> std::array<models::wave_d_bf16, plan::qk_tiles> scores(const fnuz_block& b, bool swap_q = false) {
  std::array<models::wave_d_bf16, plan::qk_tiles> acc{};
  for (unsigned t = 0; t < plan::qk_tiles; ++t)
    for (unsigned step = 0; step < plan::qk_chunks * plan::qk_steps; ++step) {
      const unsigned c = step / plan::qk_steps;
      models::wave_ab2_bf16 a{}, bb{};
      for (unsigned lane = 0; lane < 64; ++lane) {
        u32 av[2], bv[2];
        const u32x4 q0 = q_load(b, lane, 2 * c), q1 = q_load(b, lane, 2 * c + 1);
        plan::qk_step(av, bv, swap_q ? q1 : q0, swap_q ? q0 : q1, wide_of<F>(b.k, plan::k_read(lane, plan::qk_chunks * t + c)), step);
        a[lane] = {av[0], av[1]}, bb[lane] = {bv[0], bv[1]};
      }
      acc[t] = models::mfma_f32_16x16x16_bf16(a, bb, acc[t]);
    }
  return acc;
}
template <u32 Half> void pv_operand(u32 (&av)[2], const bf16x4 (&x)[plan::pv_gather]) { plan::pv_a<Half>(av, x); }

/// O^T through the plan and the model, V widened as F ([M-tile][lane][item]).
template <class F> std::array<models::wave_d_bf16, 16> values(const fnuz_block& b) {
  std::array<models::wave_d_bf16, 16> o{};
  for (unsigned kk = 0; kk < plan::pv_steps; ++kk)
    for (unsigned w = 0; w < 4; ++w)
      for (unsigned t = 0; t < plan::pv_tiles_per_group; ++t) {
        models::wave_ab2_bf16 a{}, bb{};
        for (unsigned lane = 0; lane < 64; ++lane) {
          u32 p[plan::scores / 2], bv[2], av[2];
          p_words(b, lane, p);
          plan::pv_b(bv, p, kk);
          bf16x4 x[plan::pv_gather];
          for (unsigned i = 0; i < plan::pv_gather; ++i) x[i] = wide_of<F>(b.v, plan::v_read(lane, plan::pv_chunk(kk, 0, i))).w[w];
          if (t == 0) pv_operand<0>(av, x);
          if (t == 1) pv_operand<1>(av, x);
          if (t == 2) pv_operand<2>(av, x);
          if (t == 3) pv_operand<3>(av, x);
          a[lane] = {av[0], av[1]}, bb[lane] = {bv[0], bv[1]};
        }
        const unsigned mt = plan::pv_tile(0, w, t);
        o[mt] = models::mfma_f32_16x16x16_bf16(a, bb, o[mt]);
      }
  return o;
}
/// Scores (or outputs) that differ from the exact FNUZ products by more than 1e-12 relative.
unsigned score_mismatches(const fnuz_block& b, const std::array<models::wave_d_bf16, plan::qk_tiles>& acc) {
  unsigned bad = 0;
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned i = 0; i < plan::scores; ++i) {
      const fragment_element se = plan::score_of(lane, i);
      const double got = acc[plan::score_tile(i)][lane][plan::score_item(i)];
      const double want = se.row < kRows ? qk_exact(b, se.row, se.col) : 0.0;  // padding columns: Q rows 8..15 are zero
      bad += std::fabs(got - want) <= 1e-12 * std::fabs(want) ? 0 : 1;
    }
  return bad;
}
unsigned value_mismatches(const fnuz_block& b, const std::array<models::wave_d_bf16, 16>& o) {
  unsigned bad = 0;
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned i = 0; i < plan::o_items; ++i) {
      const fragment_element oe = plan::o_of(lane, i);
      if (oe.row >= kRows) continue;
      const double want = pv_exact(b, oe.row, oe.col);
      bad += std::fabs(o[i / 4][lane][i % 4] - want) <= 1e-12 * std::fabs(want) ? 0 : 1;
    }
  return bad;
}
}  // namespace

TEST_CASE("gfx942 attention plan: v_mfma_f32_16x16x16_bf16, twice gfx950's instructions, gfx950's lane maps") {
  CHECK(same_v<plan::shape, mfma_f32_16x16x16_bf16>);
  CHECK(same_v<plan::target, gfx942>);
  CHECK(plan::qk_steps == 2 * gfx950_plan::qk_steps);
  CHECK(plan::pv_steps == 2 * gfx950_plan::pv_steps);
  CHECK(plan::k_reads == gfx950_plan::k_reads);
  CHECK(plan::v_reads == gfx950_plan::v_reads);
  for (unsigned lane = 0; lane < 64; ++lane) {
    for (unsigned j = 0; j < plan::q_loads; ++j) CHECK((plan::q_load(lane, j).row == gfx950_plan::q_load(lane, j).row && plan::q_load(lane, j).col == gfx950_plan::q_load(lane, j).col));
    for (unsigned j = 0; j < plan::k_reads; ++j) CHECK((plan::k_read(lane, j).row == gfx950_plan::k_read(lane, j).row && plan::k_read(lane, j).col == gfx950_plan::k_read(lane, j).col));
    for (unsigned j = 0; j < plan::v_reads; ++j) CHECK((plan::v_read(lane, j).row == gfx950_plan::v_read(lane, j).row && plan::v_read(lane, j).col == gfx950_plan::v_read(lane, j).col));
    for (unsigned i = 0; i < plan::scores; ++i) CHECK((plan::score_of(lane, i).row == gfx950_plan::score_of(lane, i).row && plan::score_of(lane, i).col == gfx950_plan::score_of(lane, i).col));
    for (unsigned i = 0; i < plan::o_items; ++i) CHECK((plan::o_of(lane, i).row == gfx950_plan::o_of(lane, i).row && plan::o_of(lane, i).col == gfx950_plan::o_of(lane, i).col));
  }
  CHECK(plan::row_mask(0) == gfx950_plan::row_mask(0));
  CHECK(plan::row_mask(1) == gfx950_plan::row_mask(1));
}

TEST_CASE("gfx942 attention plan + instruction model: S = Q K^T, O = P V exact over E4M3FNUZ K / V; E4M3FN reading and a wrong step fail") {
  for (std::uint32_t seed : {31u, 32u, 33u}) {
    const fnuz_block b = random_block(seed);
    CHECK(score_mismatches(b, scores<fp8::e4m3fnuz>(b)) == 0);
    CHECK(value_mismatches(b, values<fp8::e4m3fnuz>(b)) == 0);
    // The same bytes widened as OCP E4M3FN (a gfx950 reading): 2x every value, or worse.
    CHECK(score_mismatches(b, scores<fp8::e4m3fn>(b)) > 400);
    CHECK(value_mismatches(b, values<fp8::e4m3fn>(b)) > 1500);
    CHECK(score_mismatches(b, scores<fp8::e4m3fnuz>(b, true)) > 400);
  }
}

TEST_CASE("FP8 -> BF16 widening: E4M3FNUZ and E4M3FN exact on every code, NaN -> 0x7FFF") {
  for (unsigned c = 0; c < 256; ++c) {
    const u32 word = c | (c << 8) | (c << 16) | (c << 24);
    const bf16x4 z = fp8x4_to_bf16x4_reference<fp8::e4m3fnuz>(word);
    const float f = f32_from_fp8<fp8::e4m3fnuz>(static_cast<std::uint8_t>(c));
    const std::uint16_t h = static_cast<std::uint16_t>(z.lo);
    if (c == 0x80) CHECK(h == 0x7FFF);  // FNUZ's only NaN
    else CHECK((f == f && f32_from_bf16(h) == f));
    if (c != 0) CHECK(h != 0x8000);  // no negative zero from FNUZ
    CHECK(z.lo == z.hi);
    CHECK((z.lo >> 16) == h);
    const std::uint16_t o = static_cast<std::uint16_t>(fp8x4_to_bf16x4_reference<fp8::e4m3fn>(word).lo);
    const float fo = f32_from_fp8<fp8::e4m3fn>(static_cast<std::uint8_t>(c));
    if ((c & 0x7F) == 0x7F) CHECK(o == 0x7FFF);  // OCP E4M3's NaNs S.1111.111
    else CHECK((fo == fo && f32_from_bf16(o) == fo && (o >> 15) == (c >> 7)));  // ±0 keeps its sign
  }
  // Byte order: value i is byte i of the word.
  const bf16x4 z = fp8x4_to_bf16x4_reference<fp8::e4m3fnuz>(0x48403830u);
  CHECK(f32_from_bf16(static_cast<std::uint16_t>(z.lo)) == f32_from_fp8<fp8::e4m3fnuz>(0x30));
  CHECK(f32_from_bf16(static_cast<std::uint16_t>(z.hi >> 16)) == f32_from_fp8<fp8::e4m3fnuz>(0x48));
}
