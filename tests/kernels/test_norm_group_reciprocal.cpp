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
