// kernels/norm/silu_bf16.hpp: silu_bf16(z) equals silu_f32(z) (dsl/math.hpp, one IEEE division)
// bit for bit for every BF16 input, a NaN for every NaN; and the specials the file comment states.
#include <doctest/doctest.h>

#include <cstdint>

#include "netra/kernels/norm/silu_bf16.hpp"

using namespace netra;

TEST_CASE("silu_bf16 gives silu_f32's bits for all 65,536 BF16 inputs") {
  long checked = 0, differ = 0, nans = 0;
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float z = bit_cast<float>(h << 16);
    const float want = silu_f32(z), got = kernels::silu_bf16(z);
    if (want != want) {
      ++nans;
      if (got == got) ++differ;  // a NaN must stay a NaN (payload unspecified, as silu_f32's)
    } else if (bit_cast<std::uint32_t>(want) != bit_cast<std::uint32_t>(got)) {
      if (differ < 8) MESSAGE("z = ", z, " (BF16 bits ", h, "): want ", want, " got ", got);
      ++differ;
    }
    ++checked;
  }
  CHECK(checked == 65536);
  CHECK(nans == 2 * 127 + 1);  // the 254 BF16 NaNs and silu(-Inf)
  CHECK(differ == 0);
}

TEST_CASE("silu_bf16 specials and the cases its selects take") {
  const float inf = bit_cast<float>(0x7F800000u);
  CHECK(bit_cast<std::uint32_t>(kernels::silu_bf16(inf)) == 0x7F800000u);
  CHECK(kernels::silu_bf16(-inf) != kernels::silu_bf16(-inf));                                   // -Inf / +Inf
  CHECK(bit_cast<std::uint32_t>(kernels::silu_bf16(-100.0f)) == 0x80000000u);                     // b = +Inf: -0
  CHECK(bit_cast<std::uint32_t>(kernels::silu_bf16(-0.0f)) == 0x80000000u);                       // b = 2
  CHECK(bit_cast<std::uint32_t>(kernels::silu_bf16(0x1p-133f)) == bit_cast<std::uint32_t>(0x1p-134f));  // a subnormal, halved
  CHECK(kernels::silu_bf16(0x1p-23f) == silu_f32(0x1p-23f));  // b = 2 - 2^-23, significand all ones
  CHECK(kernels::silu_bf16(-60.0f) == silu_f32(-60.0f));      // b >= 2^64: scaled
}

// Chain bit 16: the reciprocal from the target's reciprocal instruction (documented within 1 ulp)
// and one Newton step. No bit depends on the instruction's own: for every BF16 z, every seed within
// 16 ulp of RN(1 / ds) gives silu_f32's bits (ds = b, or b 2^-64 for b > 2^64, as newton_quotient
// scales it; b = +Inf never reaches the quotient's result).
TEST_CASE("silu_bf16 from any reciprocal seed within 16 ulp gives silu_f32's bits for all 65,536 BF16 inputs") {
  long checked = 0, differ = 0;
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float z = bit_cast<float>(h << 16);
    const float want = silu_f32(z);
    for (int k = -16; k <= 16; ++k) {
      const auto seeded = [k](float ds) {
        const float rn = div_rn(1.0f, ds);
        return seeded_reciprocal(ds, rn == rn ? bit_cast<float>(static_cast<std::uint32_t>(static_cast<int>(bit_cast<std::uint32_t>(rn)) + k)) : rn);
      };
      const float got = kernels::silu_bf16(z, seeded);
      const bool same = want != want ? got != got : bit_cast<std::uint32_t>(want) == bit_cast<std::uint32_t>(got);
      if (!same) {
        if (differ < 8) MESSAGE("z = ", z, " seed offset ", k, ": want ", want, " got ", got);
        ++differ;
      }
      ++checked;
    }
  }
  CHECK(checked == 65536L * 33);
  CHECK(differ == 0);
  // On the host the instruction's seed is RN(1 / d) itself: the form the kernel calls.
  for (std::uint32_t h = 0; h < 0x10000u; h += 7) {
    const float z = bit_cast<float>(h << 16);
    const float want = silu_f32(z), got = kernels::silu_bf16(z, instruction_seeded<1>{});
    CHECK((want != want ? got != got : bit_cast<std::uint32_t>(want) == bit_cast<std::uint32_t>(got)));
  }
}
