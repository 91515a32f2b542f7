// kernels/norm/group_reciprocal.hpp: group_quantizer_without_division(m) equals
// dsl/block_quant.hpp's e4m3_block_quantizer::of(m) bit for bit (scale, m, d, rcp) for every
// 16-bit magnitude (the BF16 magnitudes are 0 .. 0x7FFF; the rest are checked too), rcp a NaN
// exactly where the quantizer's is.
#include <doctest/doctest.h>

#include <cstdint>

#include "netra/kernels/norm/group_reciprocal.hpp"

using namespace netra;

namespace {
std::uint32_t bits(float f) { return bit_cast<std::uint32_t>(f); }
}  // namespace

TEST_CASE("group_quantizer_without_division gives the quantizer's bits for every magnitude") {
  long checked = 0, differ = 0, nans = 0;
  for (std::uint32_t magnitude = 0; magnitude <= 0x7FFFu; ++magnitude) {
    const e4m3_block_quantizer want = e4m3_block_quantizer::of(magnitude);
    const e4m3_block_quantizer got = kernels::group_quantizer_without_division(magnitude);
    const bool rcp_nan = want.divider.rcp != want.divider.rcp;
    if (rcp_nan) ++nans;
    const bool same = bits(want.scale) == bits(got.scale) && bits(want.divider.m) == bits(got.divider.m) &&
                      (bits(want.divider.d) == bits(got.divider.d) || (want.divider.d != want.divider.d && got.divider.d != got.divider.d)) &&
                      (rcp_nan ? got.divider.rcp != got.divider.rcp : bits(want.divider.rcp) == bits(got.divider.rcp));
    if (!same) {
      if (differ < 8) MESSAGE("magnitude ", magnitude, ": rcp want ", bits(want.divider.rcp), " got ", bits(got.divider.rcp));
      ++differ;
    }
    ++checked;
  }
  CHECK(checked == 32768);
  CHECK(nans == 0x7FFF - 0x7F80 + 1);  // +Inf and the NaN magnitudes
  CHECK(differ == 0);
}

TEST_CASE("group_quantizer_without_division: the zero group and the 2^64 scaling") {
  CHECK(bits(kernels::group_quantizer_without_division(0).divider.rcp) == bits(0x1p-64f));  // d = 1 * 2^64
  CHECK(bits(kernels::group_quantizer_without_division(0x217Fu).divider.m) == bits(0x1p64f));
  CHECK(bits(kernels::group_quantizer_without_division(0x2180u).divider.m) == bits(1.0f));
}

// Chain bit 16: rcp from the target's reciprocal instruction (documented within 1 ulp) and the one
// step. No bit depends on the instruction's own: every seed within 16 ulp of RN(1 / d) gives the
// quantizer's bits for every magnitude (a NaN d: the instruction's NaN, then the step's).
TEST_CASE("group_quantizer_without_division from any reciprocal seed within 16 ulp gives the quantizer's bits") {
  long checked = 0, differ = 0;
  for (std::uint32_t magnitude = 0; magnitude <= 0x7FFFu; ++magnitude) {
    const e4m3_block_quantizer want = e4m3_block_quantizer::of(magnitude);
    for (int k = -16; k <= 16; ++k) {
      const auto seed = [k](float d) {
        const float rn = div_rn(1.0f, d);
        return rn == rn ? bit_cast<float>(static_cast<std::uint32_t>(static_cast<int>(bit_cast<std::uint32_t>(rn)) + k)) : rn;
      };
      const e4m3_block_quantizer got = kernels::group_quantizer_without_division(magnitude, seed);
      const bool rcp_nan = want.divider.rcp != want.divider.rcp;
      const bool same = bits(want.scale) == bits(got.scale) && bits(want.divider.m) == bits(got.divider.m) &&
                        (rcp_nan ? got.divider.rcp != got.divider.rcp : bits(want.divider.rcp) == bits(got.divider.rcp));
      if (!same) {
        if (differ < 8) MESSAGE("magnitude ", magnitude, " seed offset ", k, ": rcp want ", bits(want.divider.rcp), " got ", bits(got.divider.rcp));
        ++differ;
      }
      ++checked;
    }
  }
  CHECK(checked == 32768L * 33);
  CHECK(differ == 0);
  CHECK(bits(kernels::group_quantizer<18>(0x3F80u).divider.rcp) == bits(e4m3_block_quantizer::of(0x3F80u).divider.rcp));  // the kernel's form
}
