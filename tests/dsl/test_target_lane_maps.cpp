// gfx942 and gfx1151 matrix fragments (dsl/matrix_fragment_targets.hpp) composed with the
// independent instruction models of tests/models/ equal a plain matmul exactly (small-integer
// data); a deliberately wrong map, FNUZ bytes read as E4M3FN, and a WMMA wave whose halves differ
// must all fail. Also the gfx1151 xor shuffle's lane selections (row_xmask DPP, v_permlanex16).
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "models/mfma.hpp"
#include "models/mfma_bf16_gfx942.hpp"
#include "models/wmma.hpp"
#include "netra/dsl/arch/gfx1151/cross_lane.hpp"
#include "netra/dsl/fragment/target_shapes.hpp"
#include "netra/dsl/matrix_fragment_targets.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;

namespace {

/// A, B (codes of the format) and C of small integers: A, B in -8..8, C in -100..100.
template <class Encode, class Decode> struct small_matrices {
  std::vector<std::uint16_t> a, b;
  std::vector<float> c;
  unsigned m, n, k;
  Decode decode;
  small_matrices(unsigned m_, unsigned n_, unsigned k_, std::uint64_t seed, Encode encode, Decode dec)
      : a(m_ * k_), b(k_ * n_), c(m_ * n_), m(m_), n(n_), k(k_), decode(dec) {
    oracles::xorshift r{seed};
    for (auto& x : a) x = encode(static_cast<float>(static_cast<int>(r.next() % 17) - 8));
    for (auto& x : b) x = encode(static_cast<float>(static_cast<int>(r.next() % 17) - 8));
    for (auto& x : c) x = static_cast<float>(static_cast<int>(r.next() % 201) - 100);
  }
  double expect(unsigned i, unsigned j) const {
    double s = c[i * n + j];
    for (unsigned kk = 0; kk < k; ++kk) s += static_cast<double>(decode(a[i * k + kk])) * decode(b[kk * n + j]);
    return s;
  }
};

auto fnuz_matrices(std::uint64_t seed) {
  return small_matrices(16, 16, 32, seed, [](float v) -> std::uint16_t { return fp8_from_f32_reference<fp8::e4m3fnuz>(v); },
                        [](std::uint16_t v) { return f32_from_fp8<fp8::e4m3fnuz>(static_cast<u8>(v)); });
}
auto bf16_matrices(std::uint64_t seed) {
  return small_matrices(16, 16, 16, seed, [](float v) -> std::uint16_t { return bf16_from_f32_reference(v); },
                        [](std::uint16_t v) { return f32_from_bf16(v); });
}

/// gfx942 registers from the fragment maps; `k_shift` != 0 corrupts B's K map (negative control).
template <class X> void mfma_registers(const X& x, models::lane_words<2>& a, models::lane_words<2>& b, models::lane_floats<4>& c, unsigned k_shift = 0) {
  using S = mfma_f32_16x16x32_fnuz;
  a = {}, b = {};
  for (unsigned l = 0; l < 64; ++l) {
    for (unsigned byte = 0; byte < S::a_bytes; ++byte) {
      const auto ea = S::a_element(l, byte);
      const auto eb = S::b_element(l, byte);
      a[l][byte / 4] |= static_cast<std::uint32_t>(x.a[ea.row * x.k + ea.col]) << (8 * (byte % 4));
      b[l][byte / 4] |= static_cast<std::uint32_t>(x.b[((eb.row + k_shift) % x.k) * x.n + eb.col]) << (8 * (byte % 4));
    }
    for (unsigned i = 0; i < S::d_items; ++i) {
      const auto e = S::d_element(l, i);
      c[l][i] = x.c[e.row * x.n + e.col];
    }
  }
}
template <class X, class D> unsigned mfma_mismatches(const X& x, const D& d) {
  unsigned bad = 0;
  for (unsigned l = 0; l < 64; ++l)
    for (unsigned i = 0; i < 4; ++i) {
      const auto e = mfma_f32_16x16x32_fnuz::d_element(l, i);
      bad += static_cast<double>(d[l][i]) != x.expect(e.row, e.col);
    }
  return bad;
}

/// gfx1151 registers from the fragment maps; `upper_k_shift` != 0 gives lanes 16..31 another K
/// map (a wave whose halves differ).
template <class X> void wmma_registers(const X& x, models::wave32_words8& a, models::wave32_words8& b, models::wave32_floats8& c, unsigned upper_k_shift = 0) {
  using S = wmma_f32_16x16x16_bf16_w32;
  a = {}, b = {};
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned shift = l >= 16 ? upper_k_shift : 0;
    for (unsigned v = 0; v < S::a_values; ++v) {
      const auto ea = S::a_element(l, v);
      const auto eb = S::b_element(l, v);
      a[l][v / 2] |= static_cast<std::uint32_t>(x.a[ea.row * x.k + (ea.col + shift) % x.k]) << (16 * (v % 2));
      b[l][v / 2] |= static_cast<std::uint32_t>(x.b[eb.row * x.n + eb.col]) << (16 * (v % 2));
    }
    for (unsigned i = 0; i < S::d_items; ++i) {
      const auto e = S::d_element(l, i);
      c[l][i] = x.c[e.row * x.n + e.col];
    }
  }
}

}  // namespace

TEST_CASE("gfx942 v_mfma_f32_16x16x32_fp8_fp8 (E4M3FNUZ): traits + model == matmul") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto x = fnuz_matrices(seed);
    models::lane_words<2> a{}, b{};
    models::lane_floats<4> c{};
    mfma_registers(x, a, b, c);
    CHECK(mfma_mismatches(x, models::v_mfma_f32_16x16x32_fp8_fp8<fp8::e4m3fnuz>(a, b, c)) == 0);
    // The same bytes read as E4M3FN (a gfx950 reading): every nonzero product is 4x too large.
    CHECK(mfma_mismatches(x, models::v_mfma_f32_16x16x32_fp8_fp8<fp8::e4m3fn>(a, b, c)) > 0);
    mfma_registers(x, a, b, c, 8);
    CHECK(mfma_mismatches(x, models::v_mfma_f32_16x16x32_fp8_fp8<fp8::e4m3fnuz>(a, b, c)) > 0);
  }
}

TEST_CASE("gfx942 MFMA fragment: the gfx950 instruction's maps, its own target and format") {
  CHECK(same_v<mfma_f32_16x16x32_fnuz::target, gfx942>);
  CHECK(same_v<mfma_f32_16x16x32_fnuz::fp8_format, native_fp8_t<gfx942>>);
  CHECK(mfma_f32_16x16x32_fnuz::a_bytes == 8);
  CHECK(mfma_f32_16x16x32_fnuz::wave_size == gfx942::wave_size);
}

TEST_CASE("gfx942 v_mfma_f32_16x16x16_bf16: traits + model == matmul; B's K map shifted fails") {
  using S = mfma_f32_16x16x16_bf16;
  CHECK(same_v<fragment::matrix_instructions<gfx942>::bf16, S>);
  CHECK((S::a_words == 2 && S::b_words == 2 && S::d_items == 4));
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto x = bf16_matrices(seed);
    for (unsigned k_shift : {0u, 4u}) {
      models::wave_ab2_bf16 a{}, b{};
      models::wave_d_bf16 c{};
      for (unsigned l = 0; l < 64; ++l) {
        for (unsigned v = 0; v < S::a_values; ++v) {
          const auto ea = S::a_element(l, v), eb = S::b_element(l, v);
          a[l][v / 2] |= static_cast<std::uint32_t>(x.a[ea.row * x.k + ea.col]) << (16 * (v % 2));
          b[l][v / 2] |= static_cast<std::uint32_t>(x.b[((eb.row + k_shift) % x.k) * x.n + eb.col]) << (16 * (v % 2));
        }
        for (unsigned i = 0; i < S::d_items; ++i) c[l][i] = x.c[S::d_element(l, i).row * x.n + S::d_element(l, i).col];
      }
      const auto d = models::mfma_f32_16x16x16_bf16(a, b, c);
      unsigned bad = 0;
      for (unsigned l = 0; l < 64; ++l)
        for (unsigned i = 0; i < S::d_items; ++i) bad += d[l][i] != x.expect(S::d_element(l, i).row, S::d_element(l, i).col);
      if (k_shift == 0) CHECK(bad == 0);
      else CHECK(bad > 0);
    }
  }
}

TEST_CASE("gfx1151 v_wmma_f32_16x16x16_bf16 (wave32): traits + model == matmul") {
  using S = wmma_f32_16x16x16_bf16_w32;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto x = bf16_matrices(seed);
    models::wave32_words8 a{}, b{};
    models::wave32_floats8 c{};
    wmma_registers(x, a, b, c);
    const auto d = models::v_wmma_f32_16x16x16_bf16_w32(a, b, c);
    REQUIRE(d.has_value());
    unsigned bad = 0;
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned i = 0; i < S::d_items; ++i) {
        const auto e = S::d_element(l, i);
        bad += static_cast<double>((*d)[l][i]) != x.expect(e.row, e.col);
      }
    CHECK(bad == 0);
    wmma_registers(x, a, b, c, 1);  // lanes 16..31 no longer repeat lanes 0..15
    CHECK_FALSE(models::v_wmma_f32_16x16x16_bf16_w32(a, b, c).has_value());
  }
}

TEST_CASE("gfx1151 WMMA fragment: D is a bijection onto 16 x 16, A and B are held twice (both halves)") {
  using S = wmma_f32_16x16x16_bf16_w32;
  CHECK(S::wave_size == gfx1151::wave_size);
  std::array<int, 256> d{}, a{}, b{};
  for (unsigned l = 0; l < 32; ++l) {
    for (unsigned i = 0; i < S::d_items; ++i) ++d[S::d_element(l, i).row * 16 + S::d_element(l, i).col];
    for (unsigned v = 0; v < S::a_values; ++v) {
      ++a[S::a_element(l, v).row * 16 + S::a_element(l, v).col];
      ++b[S::b_element(l, v).row * 16 + S::b_element(l, v).col];
      CHECK(S::a_element(l, v).row == S::a_element(l ^ 16, v).row);
    }
  }
  for (unsigned e = 0; e < 256; ++e) {
    CHECK(d[e] == 1);
    CHECK(a[e] == 2);
    CHECK(b[e] == 2);
  }
}

TEST_CASE("gfx1151 xor shuffle: row_xmask 1..8 and v_permlanex16's selects read lane i ^ mask") {
  for (unsigned lane = 0; lane < 32; ++lane) {
    for (const unsigned m : {1u, 2u, 4u, 8u}) CHECK(models::row_xmask_source(lane, m) == (lane ^ m));
    CHECK(models::permlanex16_source(lane, gfx1151_isa::permlanex16_same_position_lo, gfx1151_isa::permlanex16_same_position_hi) ==
          (lane ^ 16u));
    CHECK(models::permlanex16_source(lane, 0x01234567u, 0x89ABCDEFu) != (lane ^ 16u));  // a reversed select does not
  }
}
