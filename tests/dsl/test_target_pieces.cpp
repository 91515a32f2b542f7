// The fragment layer's piece maps (dsl/fragment/operand_pieces.hpp) with replicated operands:
// gfx1151's WMMA holds every A row and B column in lanes l and l + 16, so its maps have two
// replicas, 16 lanes apart, each loading the same pieces. Checked against the independent WMMA
// model (tests/models/wmma.hpp, which has no result unless the halves repeat): runs of 1, 2 and 4
// instructions assembled from 16-byte memory pieces give the plain matmul exactly, every
// (index, k) is loaded once per replica, and wrong maps (B one piece off in K; the upper half at
// another K) fail. Every other shape keeps one replica. The router's matrix tactic on gfx1151
// (its WMMA shape, steps, LDS stride against the bank model) is checked here too; its lane maps
// against the model are in tests/kernels/test_moe_router_logits_model.cpp. The decode experts'
// block tile on gfx942 (four FNUZ MFMA 16x16x32 per 128-K scale block) is checked the same way.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "models/instruction.hpp"
#include "models/mfma.hpp"
#include "netra/dsl/fragment/block_tile.hpp"
#include "netra/dsl/fragment/lds_tile.hpp"
#include "netra/dsl/fragment/target_shapes.hpp"
#include "netra/kernels/moe/experts_fragment.hpp"
#include "netra/kernels/moe/router.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;

namespace {

using W = wmma_f32_16x16x16_bf16_w32;
using A = fragment::a_pieces<W>;
using B = fragment::b_pieces<W>;

enum class fault { none, b_piece_k, upper_half_k };

/// A [16][K], B [K][16] (BF16 of small integers), C [16][16].
struct wmma_run {
  unsigned k;
  std::vector<std::uint16_t> a, b;
  std::vector<double> c;
  wmma_run(unsigned k_, std::uint64_t seed) : k(k_), a(16 * k_), b(k_ * 16), c(256) {
    oracles::xorshift r{seed};
    for (auto& x : a) x = bf16_from_f32_reference(static_cast<float>(static_cast<int>(r.next() % 17) - 8));
    for (auto& x : b) x = bf16_from_f32_reference(static_cast<float>(static_cast<int>(r.next() % 17) - 8));
    for (auto& x : c) x = static_cast<double>(static_cast<int>(r.next() % 201) - 100);
  }
  /// Word w of the piece at (index, k0) of A (row) or B (column).
  std::uint32_t word(bool is_a, unsigned index, unsigned k0, unsigned w) const {
    std::uint32_t x = 0;
    for (unsigned e = 0; e < 2; ++e) {
      const unsigned kk = (k0 + 2 * w + e) % k;
      x |= static_cast<std::uint32_t>(is_a ? a[index * k + kk] : b[kk * 16 + index]) << (16 * e);
    }
    return x;
  }
  double expect(unsigned m, unsigned n) const {
    double s = c[m * 16 + n];
    for (unsigned kk = 0; kk < k; ++kk) s += static_cast<double>(f32_from_bf16(a[m * k + kk])) * f32_from_bf16(b[kk * 16 + n]);
    return s;
  }
};

/// D mismatches of a run of `steps` WMMAs whose registers come from the piece maps.
long run_mismatches(unsigned steps, std::uint64_t seed, fault f) {
  using M = models::instruction_model<W>;
  const wmma_run x(steps * W::k, seed);
  M::d_type d{};
  for (unsigned l = 0; l < 32; ++l)
    for (unsigned i = 0; i < W::d_items; ++i) d[l][i] = x.c[W::d_element(l, i).row * 16 + W::d_element(l, i).col];
  for (unsigned q = 0; q < steps; ++q) {
    M::a_type a{};
    M::b_type b{};
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned i = 0; i < 8; ++i) {
        const fragment::word_source sa = A::word_of(q, i), sb = B::word_of(q, i);
        const fragment::piece pa = A::piece_of(l, sa.piece), pb = B::piece_of(l, sb.piece);
        const unsigned a_shift = f == fault::upper_half_k && l >= 16 ? A::piece_elements : 0;
        const unsigned b_shift = f == fault::b_piece_k ? B::piece_elements : 0;
        a[l][i] = x.word(true, pa.index, pa.k + a_shift, sa.word);
        b[l][i] = x.word(false, pb.index, pb.k + b_shift, sb.word);
      }
    d = M::run(a, b, d);
  }
  long bad = 0;
  for (unsigned l = 0; l < 32; ++l)
    for (unsigned i = 0; i < W::d_items; ++i) bad += !(d[l][i] == x.expect(W::d_element(l, i).row, W::d_element(l, i).col));
  return bad;
}

/// How often each (index, k) of a run is loaded, over every lane and piece.
template <class Map> std::map<std::pair<unsigned, unsigned>, unsigned> loads(unsigned steps) {
  std::map<std::pair<unsigned, unsigned>, unsigned> n;
  for (unsigned l = 0; l < Map::wave; ++l)
    for (unsigned v = 0; v < Map::pieces(steps); ++v)
      for (unsigned e = 0; e < Map::piece_elements; ++e) ++n[{Map::piece_of(l, v).index, Map::piece_of(l, v).k + e}];
  return n;
}

}  // namespace

TEST_CASE("piece maps: one replica for every shape but WMMA's") {
  CHECK(fragment::a_pieces<mfma_f32_16x16x128_e4m3>::replicas == 1);
  CHECK(fragment::b_pieces<mfma_f32_32x32x64_e4m3>::replicas == 1);
  CHECK(fragment::a_pieces<mfma_f32_16x16x32_fp8_fp8>::replicas == 1);
  CHECK(fragment::b_pieces<mfma_f32_16x16x32_fnuz>::replicas == 1);
  CHECK(fragment::a_pieces<mma_m16n8k32_e4m3>::replicas == 1);
  CHECK(fragment::b_pieces<mfma_f32_16x16x32_bf16>::replicas == 1);
  CHECK(fragment::a_pieces<mma_m16n8k16_bf16>::replicas == 1);
  CHECK(fragment::b_pieces<mma_m16n8k16_bf16>::replicas == 1);
}

TEST_CASE("gfx1151 WMMA piece maps: two replicas 16 lanes apart, the same pieces, each (index, k) once per replica") {
  CHECK(A::replicas == 2);
  CHECK(B::replicas == 2);
  CHECK(A::replica_stride == 16);
  CHECK(A::slots == 1);
  CHECK(A::groups == 1);
  CHECK(A::run == 16);  // a run longer than a piece (8 BF16)
  for (unsigned l = 0; l < 32; ++l) {
    CHECK(A::replica(l) == l / 16);
    CHECK(B::lane_of(B::element(l, 0).index, 0) == l % 16);
    for (unsigned v = 0; v < A::pieces(4); ++v) {
      CHECK(A::piece_of(l, v).index == A::piece_of(l % 16, v).index);
      CHECK(A::piece_of(l, v).k == A::piece_of(l % 16, v).k);
    }
  }
  for (const unsigned steps : {1u, 2u, 4u}) {
    const auto na = loads<A>(steps), nb = loads<B>(steps);
    CHECK(na.size() == 16u * 16u * steps);
    CHECK(nb.size() == 16u * 16u * steps);
    for (const auto& [key, n] : na) CHECK(n == 2);
    for (const auto& [key, n] : nb) CHECK(n == 2);
  }
  // the decode expert kernels' block tile shape (16 x 128 x 16) on WMMA: pieces per replica
  using T = fragment::block_tile<W, 128, 16>;
  CHECK(T::weight_pieces == 16);
  CHECK(T::amax_masks == 0);
  CHECK(T::d_column_is_b_column);
}

TEST_CASE("gfx1151 WMMA piece maps through the instruction model == matmul; wrong maps fail") {
  for (const unsigned steps : {1u, 2u, 4u})
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      INFO(steps, " instructions, seed ", seed);
      CHECK(run_mismatches(steps, seed, fault::none) == 0);
      CHECK(run_mismatches(steps, seed, fault::b_piece_k) > 0);
      CHECK(run_mismatches(steps, seed, fault::upper_half_k) == 32 * 8);  // no defined result at all
    }
}

TEST_CASE("router matrix tactic on gfx1151: WMMA shape, 8 waves of 4 steps, LDS stride against the bank model") {
  using C = contracts::moe_router_matrix<gfx1151>;
  using K = kernels::moe_router_logits_kernel<C>;
  static_assert(same_v<K::matrix_shape, W>);
  CHECK(K::waves == 8);
  CHECK(K::matrix_steps == 4);
  CHECK(C::matrix_tile_stride == 80);
  CHECK(C::lds_bytes == 8u * 16u * 80u * 4u + 16u);
  CHECK(C::lds_bytes <= gfx1151::lds_bytes_per_workgroup);
  CHECK_FALSE(fragment::d_pairs_adjacent<W>());
  // every single-item store of the tile: 32 words in one wavefront at stride 80, two at 64
  for (unsigned n = 0; n < 4; ++n)
    for (unsigned i = 0; i < W::d_items; ++i) {
      CHECK(fragment::store_d_wavefronts<W, 80, gfx1151::lds_banks>(n, i) == 1);
      CHECK(fragment::store_d_wavefronts<W, 64, gfx1151::lds_banks>(n, i) == 2);
    }
  CHECK(C::budget().max_vgprs == 192);
  CHECK(contracts::moe_router_exact<gfx1151>::budget().max_vgprs == 128);
}

TEST_CASE("gfx942 decode-expert block tile: 4 FNUZ MFMA per 128-K block from the piece maps == matmul; read as E4M3FN it is not") {
  using T = kernels::moe_experts::block_fragment<gfx942>;
  using S = T::shape;
  static_assert(same_v<S, mfma_f32_16x16x32_fnuz>);
  CHECK(T::mmas == 4);
  CHECK(T::weight_pieces == 2);
  CHECK(T::act_pieces == 2);
  CHECK(T::amax_masks == 2);
  CHECK(T::d_column_is_b_column);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    oracles::xorshift r{seed};
    auto draw = [&] { return fp8_from_f32_reference<fp8::e4m3fnuz>(static_cast<float>(static_cast<int>(r.next() % 17) - 8)); };
    std::vector<std::uint8_t> a(16 * 128), b(128 * 16);  // W [row][k], X [k][column]
    for (auto& x : a) x = draw();
    for (auto& x : b) x = draw();
    auto piece_word = [&](bool is_a, fragment::piece p, unsigned w) {
      std::uint32_t x = 0;
      for (unsigned e = 0; e < 4; ++e) x |= static_cast<std::uint32_t>(is_a ? a[p.index * 128 + p.k + 4 * w + e] : b[(p.k + 4 * w + e) * 16 + p.index]) << (8 * e);
      return x;
    };
    auto run = [&]<class Format>() {
      models::lane_floats<4> d{};
      for (unsigned q = 0; q < T::mmas; ++q) {
        models::lane_words<2> aw{}, bw{};
        for (unsigned l = 0; l < 64; ++l)
          for (unsigned i = 0; i < 2; ++i) {
            aw[l][i] = piece_word(true, T::weight_piece(l, T::a_word(q, i).piece), T::a_word(q, i).word);
            bw[l][i] = piece_word(false, T::act_piece(l, 0, T::b_word(q, i).piece), T::b_word(q, i).word);
          }
        d = models::v_mfma_f32_16x16x32_fp8_fp8<Format>(aw, bw, d);
      }
      long bad = 0;
      for (unsigned l = 0; l < 64; ++l)
        for (unsigned i = 0; i < S::d_items; ++i) {
          const auto e = T::d_element(l, 0, i);
          double want = 0;
          for (unsigned k = 0; k < 128; ++k)
            want += static_cast<double>(f32_from_fp8<fp8::e4m3fnuz>(a[e.row * 128 + k])) * f32_from_fp8<fp8::e4m3fnuz>(b[k * 16 + e.col]);
          bad += static_cast<double>(d[l][i]) != want;
        }
      return bad;
    };
    CHECK(run.template operator()<fp8::e4m3fnuz>() == 0);
    CHECK(run.template operator()<fp8::e4m3fn>() > 0);
  }
}
