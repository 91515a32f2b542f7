// The fragment layer's operand-piece maps (dsl/fragment/operand_pieces.hpp), for every fragment
// shape netra knows and both targets, against the independent instruction models of tests/models/:
// a run of instructions along K whose A and B registers are assembled from 16-byte memory pieces
// by piece_of / word_of gives the plain matmul over the run's memory K exactly (small-integer
// E4M3 / BF16 data), every (index, k) of the run is loaded exactly once, and deliberately wrong
// maps (B's pieces one piece off in K; B's words swapped inside a piece) do not reproduce it.
// The block tiles the kernels use (dsl/fragment/block_tile.hpp, per target) are checked the same
// way, with their D map, the lane of each B column and the xor masks that join a column's lanes.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "models/instruction.hpp"
#include "netra/dsl/fragment/block_tile.hpp"
#include "netra/dsl/fragment/target_shapes.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;

namespace {

enum class corruption { none, b_piece_k, b_word_order };

/// Operand memory of a run: A [M][K] and B [K][N] as 8- or 16-bit encodings of small integers.
template <class Shape> struct run_data {
  static constexpr unsigned bits = Shape::input_bits;
  unsigned k;
  std::vector<std::uint16_t> a, b;  // encodings (E4M3 in the low byte, or BF16)
  std::vector<double> c;            // C [M][N]
  run_data(unsigned k_, std::uint64_t seed) : k(k_), a(Shape::m * k_), b(k_ * Shape::n), c(Shape::m * Shape::n) {
    oracles::xorshift r{seed};
    auto draw = [&] {
      const float v = static_cast<float>(static_cast<int>(r.next() % 17) - 8);
      return bits == 8 ? static_cast<std::uint16_t>(e4m3_from_f32_reference(v)) : bf16_from_f32_reference(v);
    };
    for (auto& x : a) x = draw();
    for (auto& x : b) x = draw();
    for (auto& x : c) x = static_cast<double>(static_cast<int>(r.next() % 201) - 100);
  }
  static double value(std::uint16_t e) { return bits == 8 ? static_cast<double>(f32_from_e4m3(static_cast<std::uint8_t>(e))) : f32_from_bf16(e); }
  double expect(unsigned m, unsigned n) const {
    double s = c[m * Shape::n + n];
    for (unsigned kk = 0; kk < k; ++kk) s += value(a[m * k + kk]) * value(b[kk * Shape::n + n]);
    return s;
  }
  /// Word w (0..3) of the 16-byte piece at (index, k0): A row / B column `index`.
  std::uint32_t piece_word(fragment::operand op, unsigned index, unsigned k0, unsigned w) const {
    constexpr unsigned per_word = 32 / bits;
    std::uint32_t word = 0;
    for (unsigned e = 0; e < per_word; ++e) {
      const unsigned kk = (k0 + per_word * w + e) % k;
      const std::uint16_t v = op == fragment::operand::a ? a[index * k + kk] : b[kk * Shape::n + index];
      word |= static_cast<std::uint32_t>(v) << (bits * e);
    }
    return word;
  }
};

/// D of a run of `Steps` instructions assembled by the piece maps, through the instruction model.
template <class Shape, unsigned Steps, models::k_order_16x16x128 Order = models::k_order_16x16x128::halves>
typename models::instruction_registers<Shape>::d_type run_pieces(const run_data<Shape>& x, corruption bad) {
  using A = fragment::a_pieces<Shape>;
  using B = fragment::b_pieces<Shape>;
  using M = models::instruction_model<Shape, Order>;
  typename M::d_type d{};
  for (unsigned l = 0; l < Shape::wave_size; ++l)
    for (unsigned i = 0; i < Shape::d_items; ++i) {
      const auto e = Shape::d_element(l, i);
      d[l][i] = x.c[e.row * Shape::n + e.col];
    }
  for (unsigned q = 0; q < Steps; ++q) {
    typename M::a_type a{};
    typename M::b_type b{};
    for (unsigned l = 0; l < Shape::wave_size; ++l) {
      for (unsigned i = 0; i < A::words; ++i) {
        const fragment::word_source s = A::word_of(q, i);
        const fragment::piece p = A::piece_of(l, s.piece);
        a[l][i] = x.piece_word(fragment::operand::a, p.index, p.k, s.word);
      }
      for (unsigned i = 0; i < B::words; ++i) {
        const fragment::word_source s = B::word_of(q, i);
        const fragment::piece p = B::piece_of(l, s.piece);
        const unsigned k0 = bad == corruption::b_piece_k ? p.k + B::piece_elements : p.k;
        const unsigned w = bad == corruption::b_word_order ? s.word ^ 1u : s.word;
        b[l][i] = x.piece_word(fragment::operand::b, p.index, k0, w);
      }
    }
    d = M::run(a, b, d);
  }
  return d;
}

template <class Shape, class D> long mismatches(const run_data<Shape>& x, const D& d) {
  long bad = 0;
  for (unsigned l = 0; l < Shape::wave_size; ++l)
    for (unsigned i = 0; i < Shape::d_items; ++i) {
      const auto e = Shape::d_element(l, i);
      bad += d[l][i] != x.expect(e.row, e.col);
    }
  return bad;
}

/// Every (index, k) of the run's operand is in exactly one (lane, piece, element).
template <class Map> bool pieces_cover_once(unsigned steps, unsigned indices) {
  std::set<std::pair<unsigned, unsigned>> seen;
  for (unsigned l = 0; l < Map::wave; ++l)
    for (unsigned v = 0; v < Map::pieces(steps); ++v) {
      const fragment::piece p = Map::piece_of(l, v);
      if (p.index >= indices || p.k + Map::piece_elements > Map::run_k(steps)) return false;
      for (unsigned e = 0; e < Map::piece_elements; ++e)
        if (!seen.insert({p.index, p.k + e}).second) return false;
    }
  return seen.size() == static_cast<std::size_t>(indices) * Map::run_k(steps);
}

/// Every word of every instruction comes from a piece the lane holds, each piece word used once.
template <class Map> bool words_use_pieces_once(unsigned steps) {
  std::set<std::pair<unsigned, unsigned>> used;
  for (unsigned q = 0; q < steps; ++q)
    for (unsigned i = 0; i < Map::words; ++i) {
      const fragment::word_source s = Map::word_of(q, i);
      if (s.piece >= Map::pieces(steps) || s.word >= 4 || !used.insert({s.piece, s.word}).second) return false;
    }
  return used.size() == 4u * Map::pieces(steps);
}

template <class Shape, unsigned Steps> void check_shape() {
  INFO(Shape::instruction, ", ", Steps, " instructions along K");
  using A = fragment::a_pieces<Shape>;
  using B = fragment::b_pieces<Shape>;
  CHECK(pieces_cover_once<A>(Steps, Shape::m));
  CHECK(pieces_cover_once<B>(Steps, Shape::n));
  CHECK(words_use_pieces_once<A>(Steps));
  CHECK(words_use_pieces_once<B>(Steps));
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const run_data<Shape> x(Steps * Shape::k, seed);
    CHECK(mismatches(x, run_pieces<Shape, Steps>(x, corruption::none)) == 0);
    CHECK(mismatches(x, run_pieces<Shape, Steps>(x, corruption::b_piece_k)) > 0);
    CHECK(mismatches(x, run_pieces<Shape, Steps>(x, corruption::b_word_order)) > 0);
    if constexpr (same_v<Shape, mfma_f32_16x16x128_e4m3>)  // either reading of the undocumented byte order
      CHECK(mismatches(x, run_pieces<Shape, Steps, models::k_order_16x16x128::contiguous>(x, corruption::none)) == 0);
  }
}

/// The smallest run whose pieces are whole for both operands, and a longer one.
template <class Shape> void check_shape_runs() {
  constexpr unsigned a_min = 4 / (fragment::a_pieces<Shape>::slot_words < 4 ? fragment::a_pieces<Shape>::slot_words : 4);
  constexpr unsigned b_min = 4 / (fragment::b_pieces<Shape>::slot_words < 4 ? fragment::b_pieces<Shape>::slot_words : 4);
  constexpr unsigned steps = a_min > b_min ? a_min : b_min;
  check_shape<Shape, steps>();
  check_shape<Shape, 2 * steps>();
}

/// The block tile of a target: pieces through the model equal the matmul per tile; D map, B lanes
/// and amax masks agree with the piece maps.
template <class Target> void check_block_tile() {
  using T = fragment::block_tile<typename fragment::matrix_instructions<Target>::e4m3, 128, 16>;
  using S = typename T::shape;
  INFO(Target::name, " block tile on ", S::instruction);
  static_assert(same_v<typename S::target, Target>);
  CHECK(T::wave == Target::wave_size);
  CHECK(T::tiles * T::tile_columns == 16);
  for (unsigned c = 0; c < T::tile_columns; ++c) CHECK(fragment::b_pieces<S>::element(T::b_lane_of(c), 0).index == c);
  for (unsigned l = 0; l < T::wave; ++l) {
    std::set<unsigned> joined{l};
    for (unsigned m = 0; m < T::amax_masks; ++m) {
      std::set<unsigned> next = joined;
      for (unsigned x : joined) next.insert(x ^ T::amax_mask(m));
      joined = next;
    }
    std::set<unsigned> same_column;  // the lanes holding l's B column
    for (unsigned x = 0; x < T::wave; ++x)
      if (T::act_piece(x, 0, 0).index == T::act_piece(l, 0, 0).index) same_column.insert(x);
    CHECK(joined == same_column);
    for (unsigned n = 0; n < T::tiles; ++n)
      for (unsigned i = 0; i < S::d_items; ++i) CHECK(T::d_element(l, n, i).col == n * T::tile_columns + S::d_element(l, i).col);
  }
  CHECK(T::d_column_is_b_column == (T::wave == 64));  // MFMA: the lane's own column; mma.sync: lane 4 (2t + i % 2)
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const run_data<S> x(128, seed);
    CHECK(mismatches(x, run_pieces<S, T::mmas>(x, corruption::none)) == 0);
    CHECK(mismatches(x, run_pieces<S, T::mmas>(x, corruption::b_piece_k)) > 0);
  }
}

}  // namespace

TEST_CASE("fragment pieces: FP8 shapes (gfx950 MFMA 16x16x128, 32x32x64, 16x16x32; sm90a mma.sync m16n8k32)") {
  check_shape_runs<mfma_f32_16x16x128_e4m3>();
  check_shape_runs<mfma_f32_32x32x64_e4m3>();
  check_shape_runs<mfma_f32_16x16x32_fp8_fp8>();
  check_shape_runs<mma_m16n8k32_e4m3>();
}

TEST_CASE("fragment pieces: BF16 shapes (gfx950 MFMA 16x16x32, sm90a mma.sync m16n8k16)") {
  check_shape_runs<mfma_f32_16x16x32_bf16>();
  check_shape_runs<mma_m16n8k16_bf16>();
}

TEST_CASE("fragment pieces: the documented structure of each map") {
  // MFMA: the instruction's own K order is group-strided, so pieces are the identity permutation
  CHECK(fragment::a_pieces<mfma_f32_16x16x128_e4m3>::word_of(0, 5).piece == 1);
  CHECK(fragment::a_pieces<mfma_f32_16x16x128_e4m3>::piece_of(17, 1).k == 16 + 64);
  // mma.sync m16n8k32: rows g and g + 8 are two slots; a piece spans two instructions
  using A = fragment::a_pieces<mma_m16n8k32_e4m3>;
  CHECK(A::slots == 2);
  CHECK(A::piece_of(6, 1).index == 1 + 8);
  CHECK(A::piece_of(6, 2).k == 64 + 16 * 2);
  CHECK(A::word_of(3, 2).piece == 2);  // instruction 2c + j = 3: piece 2c, word 2j + 1
  CHECK(A::word_of(3, 2).word == 3);
  using Bb = fragment::b_pieces<mma_m16n8k16_bf16>;
  CHECK(Bb::piece_of(5, 1).k == 8 * 1 + 32);
  CHECK(Bb::lane_of(3, 2) == 14);
}

TEST_CASE("block tiles of both targets (the decode expert kernels' 16 x 128 x 16)") {
  check_block_tile<gfx950>();
  check_block_tile<sm90a>();
}
