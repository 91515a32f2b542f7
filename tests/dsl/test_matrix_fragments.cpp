// The fragment traits of dsl/matrix_fragment.hpp and the decode expert kernels' block lane maps
// (kernels/moe/experts_fragment.hpp), composed with the independent instruction models of
// tests/models/, equal a plain matmul exactly (small-integer E4M3 data). For
// v_mfma_f32_16x16x128_f8f6f4 this holds under both readings of the undocumented byte order
// inside a lane, which is what makes the kernels independent of it. A deliberately wrong map
// must fail (the tests can fail).
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "models/mfma.hpp"
#include "models/mma_sync.hpp"
#include "netra/dsl/matrix_fragment.hpp"
#include "netra/dsl/wave_vote.hpp"
#include "netra/kernels/moe/experts_fragment.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;

namespace {

/// E4M3 encodings of the integers -8..8.
std::uint8_t small_e4m3(oracles::xorshift& r) {
  const int v = static_cast<int>(r.next() % 17) - 8;
  return e4m3_from_f32_reference(static_cast<float>(v));
}

struct matrices {
  std::vector<std::uint8_t> a, b;  // A [m][k], B [k][n] (E4M3)
  std::vector<float> c;            // C [m][n]
  unsigned m, n, k;
  matrices(unsigned m_, unsigned n_, unsigned k_, std::uint64_t seed) : a(m_ * k_), b(k_ * n_), c(m_ * n_), m(m_), n(n_), k(k_) {
    oracles::xorshift r{seed};
    for (auto& x : a) x = small_e4m3(r);
    for (auto& x : b) x = small_e4m3(r);
    for (auto& x : c) x = static_cast<float>(static_cast<int>(r.next() % 201) - 100);
  }
  double expect(unsigned i, unsigned j) const {
    double s = c[i * n + j];
    for (unsigned kk = 0; kk < k; ++kk) s += static_cast<double>(f32_from_e4m3(a[i * k + kk])) * f32_from_e4m3(b[kk * n + j]);
    return s;
  }
};

void put_byte(std::uint32_t& word, unsigned byte, std::uint8_t v) {
  word &= ~(0xFFu << (8 * byte));
  word |= static_cast<std::uint32_t>(v) << (8 * byte);
}

/// Registers of every lane from the traits' maps; `b_shift` != 0 corrupts B's K map (negative control).
template <class Shape, std::size_t AW, std::size_t BW, std::size_t DI>
void registers_from_traits(const matrices& x, std::array<std::array<std::uint32_t, AW>, Shape::wave_size>& a,
                           std::array<std::array<std::uint32_t, BW>, Shape::wave_size>& b,
                           std::array<std::array<float, DI>, Shape::wave_size>& c, unsigned b_shift = 0) {
  for (unsigned l = 0; l < Shape::wave_size; ++l) {
    for (unsigned byte = 0; byte < Shape::a_bytes; ++byte) {
      const auto e = Shape::a_element(l, byte);
      put_byte(a[l][byte / 4], byte % 4, x.a[e.row * x.k + e.col]);
    }
    for (unsigned byte = 0; byte < Shape::b_bytes; ++byte) {
      const auto e = Shape::b_element(l, byte);
      put_byte(b[l][byte / 4], byte % 4, x.b[((e.row + b_shift) % x.k) * x.n + e.col]);
    }
    for (unsigned i = 0; i < Shape::d_items; ++i) {
      const auto e = Shape::d_element(l, i);
      c[l][i] = x.c[e.row * x.n + e.col];
    }
  }
}

template <class Shape, class D> int mismatches(const matrices& x, const D& d) {
  int bad = 0;
  for (unsigned l = 0; l < Shape::wave_size; ++l)
    for (unsigned i = 0; i < Shape::d_items; ++i) {
      const auto e = Shape::d_element(l, i);
      if (static_cast<double>(d[l][i]) != x.expect(e.row, e.col)) ++bad;
    }
  return bad;
}

/// Every element of A, B and D appears in exactly one (lane, byte / item).
template <class Shape> void check_bijections() {
  std::set<std::pair<unsigned, unsigned>> a, b, d;
  for (unsigned l = 0; l < Shape::wave_size; ++l) {
    for (unsigned byte = 0; byte < Shape::a_bytes; ++byte) {
      const auto e = Shape::a_element(l, byte);
      REQUIRE(e.row < Shape::m);
      REQUIRE(e.col < Shape::k);
      a.insert({e.row, e.col});
    }
    for (unsigned byte = 0; byte < Shape::b_bytes; ++byte) {
      const auto e = Shape::b_element(l, byte);
      REQUIRE(e.row < Shape::k);
      REQUIRE(e.col < Shape::n);
      b.insert({e.row, e.col});
    }
    for (unsigned i = 0; i < Shape::d_items; ++i) {
      const auto e = Shape::d_element(l, i);
      REQUIRE(e.row < Shape::m);
      REQUIRE(e.col < Shape::n);
      d.insert({e.row, e.col});
    }
  }
  CHECK(a.size() == Shape::m * Shape::k);
  CHECK(b.size() == Shape::k * Shape::n);
  CHECK(d.size() == Shape::m * Shape::n);
}

}  // namespace

TEST_CASE("fragment traits: per-lane counts derive from M, N, K and the wave size") {
  CHECK(mfma_f32_16x16x128_e4m3::a_words == 8);
  CHECK(mfma_f32_16x16x128_e4m3::d_items == 4);
  CHECK(mfma_f32_32x32x64_e4m3::a_words == 8);
  CHECK(mfma_f32_32x32x64_e4m3::d_items == 16);
  CHECK(mfma_f32_16x16x32_fp8_fp8::a_words == 2);
  CHECK(mma_m16n8k32_e4m3::a_words == 4);
  CHECK(mma_m16n8k32_e4m3::b_words == 2);
  CHECK(mma_m16n8k32_e4m3::d_items == 4);
}

TEST_CASE("fragment traits: every lane map is a bijection onto its operand") {
  check_bijections<mfma_f32_16x16x128_e4m3>();
  check_bijections<mfma_f32_32x32x64_e4m3>();
  check_bijections<mfma_f32_16x16x32_fp8_fp8>();
  check_bijections<mma_m16n8k32_e4m3>();
}

TEST_CASE("v_mfma_f32_16x16x128_f8f6f4: traits + model == matmul under both byte-order readings") {
  using S = mfma_f32_16x16x128_e4m3;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const matrices x(16, 16, 128, seed);
    models::lane_words<8> a{}, b{};
    models::lane_floats<4> c{};
    registers_from_traits<S>(x, a, b, c);
    CHECK(mismatches<S>(x, models::v_mfma_f32_16x16x128_e4m3<models::k_order_16x16x128::halves>(a, b, c)) == 0);
    CHECK(mismatches<S>(x, models::v_mfma_f32_16x16x128_e4m3<models::k_order_16x16x128::contiguous>(a, b, c)) == 0);
    registers_from_traits<S>(x, a, b, c, 1);  // B's K shifted by one: must not reproduce the matmul
    CHECK(mismatches<S>(x, models::v_mfma_f32_16x16x128_e4m3<models::k_order_16x16x128::halves>(a, b, c)) > 0);
  }
}

TEST_CASE("v_mfma_f32_32x32x64_f8f6f4: traits + model == matmul") {
  using S = mfma_f32_32x32x64_e4m3;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const matrices x(32, 32, 64, seed);
    models::lane_words<8> a{}, b{};
    models::lane_floats<16> c{};
    registers_from_traits<S>(x, a, b, c);
    CHECK(mismatches<S>(x, models::v_mfma_f32_32x32x64_e4m3(a, b, c)) == 0);
    registers_from_traits<S>(x, a, b, c, 16);
    CHECK(mismatches<S>(x, models::v_mfma_f32_32x32x64_e4m3(a, b, c)) > 0);
  }
}

TEST_CASE("v_mfma_f32_16x16x32_fp8_fp8: traits + model == matmul") {
  using S = mfma_f32_16x16x32_fp8_fp8;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const matrices x(16, 16, 32, seed);
    models::lane_words<2> a{}, b{};
    models::lane_floats<4> c{};
    registers_from_traits<S>(x, a, b, c);
    CHECK(mismatches<S>(x, models::v_mfma_f32_16x16x32_fp8_fp8(a, b, c)) == 0);
    registers_from_traits<S>(x, a, b, c, 8);
    CHECK(mismatches<S>(x, models::v_mfma_f32_16x16x32_fp8_fp8(a, b, c)) > 0);
  }
}

TEST_CASE("mma.sync.m16n8k32 e4m3: traits + model == matmul") {
  using S = mma_m16n8k32_e4m3;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const matrices x(16, 8, 32, seed);
    models::warp_a a{};
    models::warp_b b{};
    models::warp_c c{};
    registers_from_traits<S>(x, a, b, c);
    CHECK(mismatches<S>(x, models::mma_m16n8k32_e4m3(a, b, c)) == 0);
    registers_from_traits<S>(x, a, b, c, 4);
    CHECK(mismatches<S>(x, models::mma_m16n8k32_e4m3(a, b, c)) > 0);
  }
}

// ---- the decode expert kernels' block tile: pieces + register assembly + instruction model ------

namespace {

template <class Target> struct block_model;
template <> struct block_model<gfx950> {
  template <models::k_order_16x16x128 Order>
  static void run(const models::lane_words<8>& a, const models::lane_words<8>& b, models::lane_floats<4>& d) {
    d = models::v_mfma_f32_16x16x128_e4m3<Order>(a, b, d);
  }
};

/// D of one block tile (16 weight rows x 128 K x chunk columns) the way the kernels assemble it,
/// as [row][column]; `mismatch_b` perturbs the activation K map (negative control).
template <class Target, models::k_order_16x16x128 Order = models::k_order_16x16x128::halves>
std::vector<double> block_tile(const std::vector<std::uint8_t>& w, const std::vector<std::uint8_t>& x, unsigned columns, bool mismatch_b = false) {
  using F = kernels::moe_experts::block_fragment<Target>;
  using S = typename F::shape;
  constexpr unsigned W = F::wave;
  std::vector<double> out(16 * columns, 0.0);
  for (unsigned tile = 0; tile < F::tiles; ++tile) {
    // pieces of every lane: 16 bytes each
    std::array<std::array<std::array<std::uint8_t, 16>, F::weight_pieces>, W> wp{};
    std::array<std::array<std::array<std::uint8_t, 16>, F::act_pieces>, W> ap{};
    for (unsigned l = 0; l < W; ++l) {
      for (unsigned v = 0; v < F::weight_pieces; ++v) {
        const auto p = F::weight_piece(l, v);
        for (unsigned i = 0; i < 16; ++i) wp[l][v][i] = w[p.index * 128 + p.k + i];
      }
      for (unsigned v = 0; v < F::act_pieces; ++v) {
        const auto p = F::act_piece(l, tile, v);
        for (unsigned i = 0; i < 16; ++i) {
          const unsigned k = (p.k + i + (mismatch_b ? 1 : 0)) % 128;
          ap[l][v][i] = p.index < columns ? x[p.index * 128 + k] : 0;
        }
      }
    }
    auto word = [](const std::array<std::uint8_t, 16>& piece, unsigned j) {
      return static_cast<std::uint32_t>(piece[4 * j]) | (static_cast<std::uint32_t>(piece[4 * j + 1]) << 8) |
             (static_cast<std::uint32_t>(piece[4 * j + 2]) << 16) | (static_cast<std::uint32_t>(piece[4 * j + 3]) << 24);
    };
    std::array<std::array<float, S::d_items>, W> d{};
    for (unsigned q = 0; q < F::mmas; ++q) {
      std::array<std::array<std::uint32_t, S::a_words>, W> a{};
      std::array<std::array<std::uint32_t, S::b_words>, W> b{};
      for (unsigned l = 0; l < W; ++l) {
        for (unsigned i = 0; i < S::a_words; ++i) a[l][i] = word(wp[l][F::a_word(q, i).piece], F::a_word(q, i).word);
        for (unsigned i = 0; i < S::b_words; ++i) b[l][i] = word(ap[l][F::b_word(q, i).piece], F::b_word(q, i).word);
      }
      if constexpr (same_v<Target, gfx950>) d = models::v_mfma_f32_16x16x128_e4m3<Order>(a, b, d);
      else d = models::mma_m16n8k32_e4m3(a, b, d);
    }
    for (unsigned l = 0; l < W; ++l)
      for (unsigned i = 0; i < S::d_items; ++i) {
        const auto e = F::d_element(l, tile, i);
        if (e.col < columns) out[e.row * columns + e.col] = d[l][i];
      }
  }
  return out;
}

template <class Target, models::k_order_16x16x128 Order = models::k_order_16x16x128::halves> void check_block_tile(unsigned columns) {
  oracles::xorshift r{columns * 7919u + 3};
  for (int trial = 0; trial < 8; ++trial) {
    std::vector<std::uint8_t> w(16 * 128), x(columns * 128);
    for (auto& v : w) v = small_e4m3(r);
    for (auto& v : x) v = small_e4m3(r);
    const auto d = block_tile<Target, Order>(w, x, columns);
    int bad = 0;
    for (unsigned row = 0; row < 16; ++row)
      for (unsigned col = 0; col < columns; ++col) {
        double s = 0;
        for (unsigned k = 0; k < 128; ++k) s += static_cast<double>(f32_from_e4m3(w[row * 128 + k])) * f32_from_e4m3(x[col * 128 + k]);
        bad += d[row * columns + col] != s;
      }
    CHECK(bad == 0);
    const auto wrong = block_tile<Target, Order>(w, x, columns, true);
    int differ = 0;
    for (unsigned i = 0; i < wrong.size(); ++i) differ += wrong[i] != d[i];
    CHECK(differ > 0);
  }
}

}  // namespace

TEST_CASE("decode expert block tile, gfx950 lane maps + MFMA 16x16x128 model == matmul (both byte orders)") {
  for (unsigned columns : {1u, 2u, 9u, 16u}) {
    check_block_tile<gfx950, models::k_order_16x16x128::halves>(columns);
    check_block_tile<gfx950, models::k_order_16x16x128::contiguous>(columns);
  }
}

TEST_CASE("decode expert block tile, sm90a lane maps + mma.m16n8k32 model == matmul") {
  for (unsigned columns : {1u, 2u, 8u, 9u, 16u}) check_block_tile<sm90a>(columns);
}

TEST_CASE("nth_set_bit finds the set bit with n set bits below it") {
  oracles::xorshift r{11};
  for (int trial = 0; trial < 2000; ++trial) {
    const std::uint64_t mask = r.next() & r.next();
    unsigned n = 0;
    for (unsigned bit = 0; bit < 64; ++bit)
      if (mask >> bit & 1) REQUIRE(nth_set_bit(mask, n++) == bit);
  }
  CHECK(nth_set_bit(0x8000000000000000ull, 0) == 63);
  CHECK(nth_set_bit(0b1011, 2) == 3);
}
