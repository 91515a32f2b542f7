// kernels/attention/gqa8_warpgroup_layout.hpp: the warpgroup stage ones' LDS operands (the GQA8
// verify's at head dim 256 against the pair plan, the GQA4 extend's at 128 against extend_plan.hpp's sm90a plan) composed with
// a host model of the warpgroup matrix unit's no-swizzle descriptor reads (PTX ISA "Matrix
// Descriptor Format": core matrix (8 rows x 16 bytes) at start + k-column * LBO + row-group * SBO;
// the reading checked on the H200 by tests/gpu/test_moe_fragments_gpu.cpp) give S = Q K^T and
// O = P V exactly; each k-step of Q K^T sums the head-dim elements of the pair plan's k-step
// (gqa8_wave_plan.hpp: lane reads of chunk k_read(lane, c), word s; extend_plan.hpp: K read j = c
// of N-tile 0, word s), each k-step of P V the
// positions of the plan's P words pb[4 kk .. 4 kk + 3] in the A layout; every offset is in bounds
// and owned by one element.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <type_traits>
#include <vector>

#include "netra/kernels/attention/gqa8_warpgroup_layout.hpp"
#include "netra/kernels/attention/gqa8_wave_plan.hpp"
#include "netra/kernels/attention/extend_plan.hpp"

using namespace netra;
namespace L = netra::kernels::gqa8_warpgroup_layout;
using pair_plan = kernels::gqa8_pair_plan<mma_m16n8k16_bf16>;
using extend_plan = kernels::extend_plan<mma_m16n8k16_bf16>;

namespace {
/// The model: element (row, k) of a K-major operand whose k-step starts at `start`.
unsigned operand_byte(unsigned start, unsigned lbo, unsigned sbo, unsigned row, unsigned k) {
  return start + (k / 8) * lbo + (row / 8) * sbo + (row % 8) * 16 + (k % 8) * 2;
}
}  // namespace

/// The first head-dim element of chunk group c's chunk read by lane (g = 0, t = lane) in the plan of head dim D.
template <unsigned D> unsigned plan_chunk_element(unsigned lane, unsigned c) {
  if constexpr (D == 256) {
    const fragment_element e = pair_plan::k_read(lane, c);
    CHECK(e.row == 0);
    return 16 * e.col;
  } else {
    const fragment_element e = extend_plan::k_read(lane, c);  // read j = c of N-tile 0: a byte offset in the row
    CHECK(e.row == 0);
    return e.col;
  }
}

TEST_CASE_TEMPLATE("Q / K operand: every element owned once, in bounds, and k-step 4c + s holds the per-warp plan's k-step elements", H,
                   std::integral_constant<unsigned, 256>, std::integral_constant<unsigned, 128>) {
  constexpr unsigned D = H::value, group = L::k_major_group_bytes_of<D>;
  std::vector<int> owner(64 / 8 * group / 2, -1);  // 64 rows x D elements, 2 bytes each
  for (unsigned r = 0; r < 64; ++r)
    for (unsigned d = 0; d < D; ++d) {
      const unsigned at = L::k_major_element_offset<D>(r, d);
      REQUIRE(at % 2 == 0);
      REQUIRE(at / 2 < owner.size());
      CHECK(owner[at / 2] == -1);
      owner[at / 2] = static_cast<int>(r * D + d);
    }
  for (unsigned step = 0; step < D / 16; ++step) {
    std::set<unsigned> model, plan;
    for (unsigned k = 0; k < 16; ++k) {  // the model's k-step: the 16 elements of row 0 it reads
      const unsigned at = operand_byte(2 * step * L::core_bytes, L::core_bytes, group, 0, k);
      model.insert(static_cast<unsigned>(owner[at / 2]) % D);
    }
    const unsigned c = step / 4, s = step % 4;
    for (unsigned lane = 0; lane < 4; ++lane)  // the lanes of B column 0 (g = 0): chunk group c's chunk, word s
      for (unsigned i = 0; i < 4; ++i) plan.insert(plan_chunk_element<D>(lane, c) + 4 * s + i);
    CHECK(model == plan);
  }
}

TEST_CASE_TEMPLATE("S = Q K^T and O = P V through the descriptor model, exact on small integers", H, std::integral_constant<unsigned, 256>,
                   std::integral_constant<unsigned, 128>) {
  constexpr unsigned D = H::value, group = L::k_major_group_bytes_of<D>;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> v(-4, 4);
  std::vector<int> q(64 * D), k(64 * D), val(64 * D), p(64 * 64);
  for (auto* m : {&q, &k, &val}) for (int& x : *m) x = v(rng);
  for (int& x : p) x = v(rng);
  std::vector<int> qi(64 / 8 * group / 2), ki(qi.size()), vi(L::v_operand_bytes_of<D> / 2, 0);
  for (unsigned r = 0; r < 64; ++r)
    for (unsigned d = 0; d < D; ++d) {
      qi[L::k_major_element_offset<D>(r, d) / 2] = q[r * D + d];
      ki[L::k_major_element_offset<D>(r, d) / 2] = k[r * D + d];
      vi[L::v_offset(d, r) / 2] = val[r * D + d];  // r: position
    }
  unsigned bad_s = 0, bad_o = 0;
  for (unsigned m = 0; m < 64; ++m) {
    for (unsigned n = 0; n < 64; ++n) {
      long model = 0, want = 0;
      for (unsigned step = 0; step < D / 16; ++step)
        for (unsigned kk = 0; kk < 16; ++kk) {
          const unsigned start = 2 * step * L::core_bytes;
          model += static_cast<long>(qi[operand_byte(start, L::core_bytes, group, m, kk) / 2]) * ki[operand_byte(start, L::core_bytes, group, n, kk) / 2];
        }
      for (unsigned d = 0; d < D; ++d) want += static_cast<long>(q[m * D + d]) * k[n * D + d];
      bad_s += model != want;
    }
    for (unsigned d = 0; d < D; ++d) {
      long model = 0, want = 0;
      for (unsigned step = 0; step < 4; ++step)
        for (unsigned kk = 0; kk < 16; ++kk)  // A from registers: position 16 step + kk; B: the V operand
          model += static_cast<long>(p[m * 64 + 16 * step + kk]) * vi[operand_byte(2 * step * L::core_bytes, L::core_bytes, L::v_group_bytes, d, kk) / 2];
      for (unsigned pos = 0; pos < 64; ++pos) want += static_cast<long>(p[m * 64 + pos]) * val[pos * D + d];
      bad_o += model != want;
    }
  }
  CHECK(bad_s == 0);
  CHECK(bad_o == 0);
}

TEST_CASE("P V k-step kk: the A words pb[4 kk .. 4 kk + 3] of both plans hold positions 16 kk + k of the m16n8k16 A layout") {
  for (unsigned lane = 0; lane < 32; ++lane) {
    const unsigned g = lane >> 2, t = lane & 3;
    for (unsigned kk = 0; kk < 4; ++kk)
      for (unsigned w = 0; w < 4; ++w) {  // A word w: row g + 8 (w & 1), k 2t + 8 (w >> 1) (and + 1)
        const fragment_element e = pair_plan::score_of(lane, 2 * (4 * kk + w)), x = extend_plan::score_of(lane, 2 * (4 * kk + w));
        CHECK(e.row == g + 8 * (w & 1));
        CHECK(e.col == 16 * kk + 2 * t + 8 * (w >> 1));
        CHECK(pair_plan::score_of(lane, 2 * (4 * kk + w) + 1).col == e.col + 1);
        CHECK((x.row == e.row && x.col == e.col));
        CHECK(extend_plan::score_of(lane, 2 * (4 * kk + w) + 1).col == e.col + 1);
      }
  }
}

TEST_CASE_TEMPLATE("V operand: every (element, position) owned once, in bounds; eight consecutive element groups' rows in distinct 16-byte bank groups",
                   H, std::integral_constant<unsigned, 256>, std::integral_constant<unsigned, 128>) {
  constexpr unsigned D = H::value;
  std::vector<int> owner(L::v_operand_bytes_of<D> / 2, -1);
  CHECK(64 / 8 * L::k_major_group_bytes_of<D> <= L::v_operand_bytes_of<D>);  // a widened K block fits the operand bytes
  for (unsigned d = 0; d < D; ++d)
    for (unsigned pos = 0; pos < 64; ++pos) {
      const unsigned at = L::v_offset(d, pos);
      REQUIRE(at / 2 < owner.size());
      CHECK(owner[at / 2] == -1);
      owner[at / 2] = static_cast<int>(d * 64 + pos);
    }
  for (unsigned e = 0; e < 8; ++e) {
    std::set<unsigned> banks;
    for (unsigned dg = 0; dg < 8; ++dg) banks.insert((L::v_offset(8 * dg + e, 0) / 16) % 8);
    CHECK(banks.size() == 8);
  }
}
