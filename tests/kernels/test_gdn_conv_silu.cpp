// The conv update's branch-free SiLU division (kernels/gdn/conv_silu.hpp) against the IEEE
// division of silu_f32, bit for bit, over every input that reaches it: the divisor is
// 1 + exp_f32(-x), a function of x, so all 2^32 FP32 x (every NaN payload included: a NaN must
// give a NaN) are the whole domain. The operations are IEEE-exact on the host as on both targets.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "netra/kernels/gdn/conv_silu.hpp"

using namespace netra;

namespace {
bool same(float a, float b) { return a != a ? b != b : bit_cast<u32>(a) == bit_cast<u32>(b); }

/// Mismatches of quotient against div_rn for x with bits in [lo, hi); the first few printed.
[[gnu::always_inline]] inline u64 scan(u64 lo, u64 hi) {
  u64 bad = 0;
  for (u64 u = lo; u < hi; ++u) {
    const float x = bit_cast<float>(static_cast<u32>(u));
    const float d = add_rn(1.0f, exp_f32(-x));
    if (!same(kernels::gdn_conv_silu::quotient(x, d), div_rn(x, d)) && ++bad <= 4)
      std::printf("x %a d %a: %a, IEEE %a\n", static_cast<double>(x), static_cast<double>(d),
                  static_cast<double>(kernels::gdn_conv_silu::quotient(x, d)), static_cast<double>(div_rn(x, d)));
  }
  return bad;
}
// The same scan with the FMA instruction where the CPU has one (fmaf is the same IEEE operation
// either way; the library call is several times slower over 2^32 inputs).
[[gnu::target("fma")]] u64 scan_fma(u64 lo, u64 hi) { return scan(lo, hi); }
u64 scan_plain(u64 lo, u64 hi) { return scan(lo, hi); }
u64 mismatches(u64 lo, u64 hi) { return __builtin_cpu_supports("fma") ? scan_fma(lo, hi) : scan_plain(lo, hi); }
}  // namespace

TEST_CASE("the conv's branch-free SiLU division: the cases its steps exist for") {
  const float inf = bit_cast<float>(0x7F800000u);
  for (const float x : {0x1p-23f, 0x1.8f5c02p-19f, -0.0f, 0.0f, inf, -inf, -88.0f, -87.5f, -44.5f, -100.0f, 1e-45f, -1e-45f, 3.4e38f, -3.4e38f})
    CHECK_MESSAGE(same(kernels::gdn_conv_silu::silu(x), silu_f32(x)), x);
  CHECK(same(kernels::gdn_conv_silu::quotient(0x1p-23f, 0x1.fffffep+0f), 0x1.000002p-24f));  // all-ones divisor: RN(1/d) set, not Newton's
}

TEST_CASE("the conv's branch-free SiLU division equals the IEEE division for all 2^32 FP32 inputs") {
  const u64 n = u64{1} << 32, chunk = u64{1} << 24;
  std::atomic<u64> next{0}, bad{0};
  auto work = [&] {
    for (u64 lo; (lo = next.fetch_add(chunk)) < n;) bad += mismatches(lo, std::min(n, lo + chunk));
  };
  std::vector<std::thread> threads(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  for (auto& t : threads) t = std::thread(work);
  for (auto& t : threads) t.join();
  CHECK(bad.load() == 0);
}
