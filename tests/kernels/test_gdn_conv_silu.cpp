// The conv update's branch-free SiLU division (kernels/gdn/conv_silu.hpp) against the IEEE
// division of silu_f32, bit for bit, over every input that reaches it: the divisor is
// 1 + exp_f32(-x), a function of x, so all 2^32 FP32 x (every NaN payload included: a NaN must
// give a NaN) are the whole domain. The operations are IEEE-exact on the host as on both targets.
// The reciprocal seeded by the target's instruction (Division 1): on the host the seed is
// RN(1 / ds), and a sweep shows two steps from every seed within 16 ulp of it give the integer
// path's reciprocal, so the device's quotient (whatever seed its instruction returns, within 1 ulp)
// is the proven one. The lean SiLU (contract field Silu lean: exp's argument clamped, the
// remainder's sign flipped) against silu_f32 over the same 2^32 x, with both reciprocals.
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
    if (!same(kernels::gdn_conv_silu::quotient(x, d, kernels::gdn_conv_silu::two_steps_from_instruction{}), div_rn(x, d)) && ++bad <= 4)
      std::printf("instruction-seeded: x %a d %a\n", static_cast<double>(x), static_cast<double>(d));
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

/// Mismatches of silu_lean (both reciprocals) against silu_f32 for x with bits in [lo, hi).
[[gnu::always_inline]] inline u64 lean_scan(u64 lo, u64 hi) {
  u64 bad = 0;
  for (u64 u = lo; u < hi; ++u) {
    const float x = bit_cast<float>(static_cast<u32>(u)), want = silu_f32(x);
    const float seeded = kernels::gdn_conv_silu::silu_lean(x, kernels::gdn_conv_silu::two_steps_from_instruction{});
    const float integer = kernels::gdn_conv_silu::silu_lean(x);
    if (!same(seeded, want) && ++bad <= 4)
      std::printf("lean, instruction-seeded: x %a: %a, silu_f32 %a\n", static_cast<double>(x), static_cast<double>(seeded), static_cast<double>(want));
    if (!same(integer, want) && ++bad <= 4)
      std::printf("lean: x %a: %a, silu_f32 %a\n", static_cast<double>(x), static_cast<double>(integer), static_cast<double>(want));
  }
  return bad;
}
[[gnu::target("fma")]] u64 lean_scan_fma(u64 lo, u64 hi) { return lean_scan(lo, hi); }
u64 lean_scan_plain(u64 lo, u64 hi) { return lean_scan(lo, hi); }
u64 lean_mismatches(u64 lo, u64 hi) { return __builtin_cpu_supports("fma") ? lean_scan_fma(lo, hi) : lean_scan_plain(lo, hi); }

/// Scaled divisors ds (FP32 bits in [lo, hi)) with a significand not all ones, and seeds k ulp off
/// RN(1 / ds) (|k| <= 16), where two seeded steps miss the integer path's reciprocal.
[[gnu::always_inline]] inline u64 seed_sweep(u32 lo, u32 hi) {
  u64 bad = 0;
  for (u32 b = lo; b < hi; ++b) {
    if ((b & 0x007FFFFFu) == 0x007FFFFFu) continue;  // newton_quotient sets r from the exponent there
    const float ds = bit_cast<float>(b), r = newton_reciprocal(ds);
    const u32 rn = bit_cast<u32>(div_rn(1.0f, ds));
    for (int k = -16; k <= 16; ++k)
      if (bit_cast<u32>(seeded_reciprocal(ds, seeded_reciprocal(ds, bit_cast<float>(rn + static_cast<u32>(k))))) != bit_cast<u32>(r) && ++bad <= 4)
        std::printf("ds %a seed %+d ulp: %a, integer path %a\n", static_cast<double>(ds), k,
                    static_cast<double>(seeded_reciprocal(ds, seeded_reciprocal(ds, bit_cast<float>(rn + static_cast<u32>(k))))), static_cast<double>(r));
  }
  return bad;
}
[[gnu::target("fma")]] u64 seed_sweep_fma(u32 lo, u32 hi) { return seed_sweep(lo, hi); }
u64 seed_sweep_plain(u32 lo, u32 hi) { return seed_sweep(lo, hi); }
u64 seed_misses(u64 lo, u64 hi) {
  return __builtin_cpu_supports("fma") ? seed_sweep_fma(static_cast<u32>(lo), static_cast<u32>(hi)) : seed_sweep_plain(static_cast<u32>(lo), static_cast<u32>(hi));
}

/// The sum of count(lo, hi) over [first, end) in pieces of `chunk`, on up to 4 threads.
template <class Count> u64 parallel_count(u64 first, u64 end, u64 chunk, Count count) {
  std::atomic<u64> next{first}, total{0};
  auto work = [&] {
    for (u64 lo; (lo = next.fetch_add(chunk)) < end;) total += count(lo, std::min(end, lo + chunk));
  };
  std::vector<std::thread> threads(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  for (auto& t : threads) t = std::thread(work);
  for (auto& t : threads) t.join();
  return total.load();
}
}  // namespace

TEST_CASE("the conv's branch-free SiLU division: the cases its steps exist for") {
  const float inf = bit_cast<float>(0x7F800000u);
  for (const float x : {0x1p-23f, 0x1.8f5c02p-19f, -0.0f, 0.0f, inf, -inf, -88.0f, -87.5f, -44.5f, -100.0f, 1e-45f, -1e-45f, 3.4e38f, -3.4e38f})
    CHECK_MESSAGE(same(kernels::gdn_conv_silu::silu(x), silu_f32(x)), x);
  CHECK(same(kernels::gdn_conv_silu::quotient(0x1p-23f, 0x1.fffffep+0f), 0x1.000002p-24f));  // all-ones divisor: RN(1/d) set, not Newton's
}

TEST_CASE("the conv's branch-free SiLU division equals the IEEE division for all 2^32 FP32 inputs") {
  CHECK(parallel_count(0, u64{1} << 32, u64{1} << 24, mismatches) == 0);
}

TEST_CASE("the instruction-seeded reciprocal: two steps from every seed within 16 ulp give the integer path's, every ds in [1, 2^64]") {
  CHECK(parallel_count(0x3F800000u, 0x5F800001u, 1u << 20, seed_misses) == 0);  // ds = 1 .. 2^64 (the scaled divisor's range)
}

TEST_CASE("the lean SiLU: the cases its clamp and its remaining selects exist for") {
  const float inf = bit_cast<float>(0x7F800000u), nan = bit_cast<float>(0x7FC00000u);
  for (const float x : {0.0f, -0.0f, inf, -inf, nan, -nan, 20.0f, 20.000002f, 19.999998f, -20.0f, -44.5f, -88.0f, -88.72283f, -88.72284f,
                        -100.0f, 1e-45f, -1e-45f, 3.4e38f, -3.4e38f, 0x1p-23f}) {
    CHECK_MESSAGE(same(kernels::gdn_conv_silu::silu_lean(x), silu_f32(x)), x);
    CHECK_MESSAGE(same(kernels::gdn_conv_silu::silu_lean(x, kernels::gdn_conv_silu::two_steps_from_instruction{}), silu_f32(x)), x);
  }
  CHECK(bit_cast<u32>(kernels::gdn_conv_silu::silu_lean(-0.0f)) == 0x80000000u);  // -0 by the flipped remainder, no select
  CHECK(exp_f32_in_range(math_constants::exp_high) == exp_f32(math_constants::exp_high));
}

TEST_CASE("the lean SiLU equals silu_f32 for all 2^32 FP32 inputs (both reciprocals)") {
  CHECK(parallel_count(0, u64{1} << 32, u64{1} << 24, lean_mismatches) == 0);
}
