// kernels/attention/gqa8_warpgroup_layout.hpp: the WarpgroupMma verify's LDS operands composed with
// a host model of the warpgroup matrix unit's no-swizzle descriptor reads (PTX ISA "Matrix
// Descriptor Format": core matrix (8 rows x 16 bytes) at start + k-column * LBO + row-group * SBO;
// the reading checked on the H200 by tests/gpu/test_moe_fragments_gpu.cpp) give S = Q K^T and
// O = P V exactly; each k-step of Q K^T sums the head-dim elements of the pair plan's k-step
// (gqa8_wave_plan.hpp: lane reads of chunk k_read(lane, c), word s), each k-step of P V the
// positions of the plan's P words pb[4 kk .. 4 kk + 3] in the A layout; every offset is in bounds
// and owned by one element.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "netra/kernels/attention/gqa8_warpgroup_layout.hpp"
#include "netra/kernels/attention/gqa8_wave_plan.hpp"

using namespace netra;
namespace L = netra::kernels::gqa8_warpgroup_layout;
using pair_plan = kernels::gqa8_pair_plan<mma_m16n8k16_bf16>;

namespace {
/// The model: element (row, k) of a K-major operand whose k-step starts at `start`.
unsigned operand_byte(unsigned start, unsigned lbo, unsigned sbo, unsigned row, unsigned k) {
  return start + (k / 8) * lbo + (row / 8) * sbo + (row % 8) * 16 + (k % 8) * 2;
}
}  // namespace

TEST_CASE("Q / K operand: every element owned once, in bounds, and k-step 4c + s holds the pair plan's k-step elements") {
  std::vector<int> owner(64 / 8 * L::k_major_group_bytes / 2, -1);  // 64 rows x 256 elements, 2 bytes each
  for (unsigned r = 0; r < 64; ++r)
    for (unsigned d = 0; d < 256; ++d) {
      const unsigned at = L::k_major_element_offset(r, d);
      REQUIRE(at % 2 == 0);
      REQUIRE(at / 2 < owner.size());
      CHECK(owner[at / 2] == -1);
      owner[at / 2] = static_cast<int>(r * 256 + d);
    }
  for (unsigned step = 0; step < 16; ++step) {
    std::set<unsigned> model, plan;
    for (unsigned k = 0; k < 16; ++k) {  // the model's k-step: the 16 elements of row 0 it reads
      const unsigned at = operand_byte(2 * step * L::core_bytes, L::core_bytes, L::k_major_group_bytes, 0, k);
      model.insert(static_cast<unsigned>(owner[at / 2]) % 256);
    }
    const unsigned c = step / 4, s = step % 4;
    for (unsigned lane = 0; lane < 4; ++lane) {  // the lanes of B column 0 (g = 0): chunk k_read(lane, c), word s
      const fragment_element e = pair_plan::k_read(lane, c);
      CHECK(e.row == 0);
      for (unsigned i = 0; i < 4; ++i) plan.insert(16 * e.col + 4 * s + i);
    }
    CHECK(model == plan);
  }
}

TEST_CASE("S = Q K^T and O = P V through the descriptor model, exact on small integers") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> v(-4, 4);
  std::vector<int> q(64 * 256), k(64 * 256), val(64 * 256), p(64 * 64);
  for (auto* m : {&q, &k, &val}) for (int& x : *m) x = v(rng);
  for (int& x : p) x = v(rng);
  std::vector<int> qi(64 / 8 * L::k_major_group_bytes / 2), ki(qi.size()), vi(L::v_operand_bytes / 2, 0);
  for (unsigned r = 0; r < 64; ++r)
    for (unsigned d = 0; d < 256; ++d) {
      qi[L::k_major_element_offset(r, d) / 2] = q[r * 256 + d];
      ki[L::k_major_element_offset(r, d) / 2] = k[r * 256 + d];
      vi[L::v_offset(d, r) / 2] = val[r * 256 + d];  // r: position
    }
  unsigned bad_s = 0, bad_o = 0;
  for (unsigned m = 0; m < 64; ++m) {
    for (unsigned n = 0; n < 64; ++n) {
      long model = 0, want = 0;
      for (unsigned step = 0; step < 16; ++step)
        for (unsigned kk = 0; kk < 16; ++kk) {
          const unsigned start = 2 * step * L::core_bytes;
          model += static_cast<long>(qi[operand_byte(start, L::core_bytes, L::k_major_group_bytes, m, kk) / 2]) *
                   ki[operand_byte(start, L::core_bytes, L::k_major_group_bytes, n, kk) / 2];
        }
      for (unsigned d = 0; d < 256; ++d) want += static_cast<long>(q[m * 256 + d]) * k[n * 256 + d];
      bad_s += model != want;
    }
    for (unsigned d = 0; d < 256; ++d) {
      long model = 0, want = 0;
      for (unsigned step = 0; step < 4; ++step)
        for (unsigned kk = 0; kk < 16; ++kk)  // A from registers: position 16 step + kk; B: the V operand
          model += static_cast<long>(p[m * 64 + 16 * step + kk]) * vi[operand_byte(2 * step * L::core_bytes, L::core_bytes, L::v_group_bytes, d, kk) / 2];
      for (unsigned pos = 0; pos < 64; ++pos) want += static_cast<long>(p[m * 64 + pos]) * val[pos * 256 + d];
      bad_o += model != want;
    }
  }
  CHECK(bad_s == 0);
  CHECK(bad_o == 0);
}

TEST_CASE("P V k-step kk: the A words pb[4 kk .. 4 kk + 3] hold positions 16 kk + k of the m16n8k16 A layout") {
  for (unsigned lane = 0; lane < 32; ++lane) {
    const unsigned g = lane >> 2, t = lane & 3;
    for (unsigned kk = 0; kk < 4; ++kk)
      for (unsigned w = 0; w < 4; ++w) {  // A word w: row g + 8 (w & 1), k 2t + 8 (w >> 1) (and + 1)
        const fragment_element e = pair_plan::score_of(lane, 2 * (4 * kk + w));
        CHECK(e.row == g + 8 * (w & 1));
        CHECK(e.col == 16 * kk + 2 * t + 8 * (w >> 1));
        CHECK(pair_plan::score_of(lane, 2 * (4 * kk + w) + 1).col == e.col + 1);
      }
  }
}

TEST_CASE("V operand: every (element, position) owned once, in bounds; eight consecutive element groups' rows in distinct 16-byte bank groups") {
  std::vector<int> owner(L::v_operand_bytes / 2, -1);
  for (unsigned d = 0; d < 256; ++d)
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
