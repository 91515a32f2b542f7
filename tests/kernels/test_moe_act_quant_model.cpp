// act_quant on the host, decomposed as the kernel decomposes it: the kernel's own lane maps
// (row_of, first_value, group_of, stores_scale), its per-group divider and magnitude helpers,
// shuffles modelled per wave, the device conversions by their reference. Equal to the oracle for
// every mapping of the catalog and for adversarial rows; every value and scale written exactly
// once. Also: the kernel's division-free quotient equals the IEEE division after E4M3 rounding
// for every pair of BF16 values (|y| <= amax), which is why the oracle may divide.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "netra/kernels/moe/act_quant.hpp"
#include "oracles/moe_routing.hpp"
#include "oracles/moe_routing_inputs.hpp"

using namespace netra;

namespace {

template <class Contract> struct act_quant_model {
  using kernel = kernels::moe_act_quant_kernel<Contract>;
  static constexpr u32 W = Contract::target::wave_size;

  /// Runs the whole grid; returns how many times each value / scale was written.
  static void run(const std::vector<std::uint16_t>& in, u32 rows, i64 stride, std::vector<std::uint8_t>& out,
                  std::vector<float>& scales, std::vector<int>& value_writes, std::vector<int>& scale_writes) {
    const launch_shape s = kernel::shape(rows);
    for (u32 wg = 0; wg < s.grid[0]; ++wg) {
      // per thread state
      const u32 n = s.workgroup_size;
      std::vector<std::array<u32, 16>> y(n);
      std::vector<std::array<u32, 4>> mag(n);
      for (u32 t = 0; t < n; ++t) {
        const u32 row = kernel::row_of(wg, t);
        const u32 r = row < rows ? row : rows - 1;
        for (u32 c = 0; c < Contract::vectors_per_lane; ++c) {
          mag[t][c] = 0;
          for (u32 e = 0; e < 8; e += 2) {
            const u32 v = kernel::first_value(t, c) + e;
            const float g0 = f32_from_bf16(in[r * stride + v]), g1 = f32_from_bf16(in[r * stride + v + 1]);
            const float u0 = f32_from_bf16(in[r * stride + 512 + v]), u1 = f32_from_bf16(in[r * stride + 512 + v + 1]);
            const u32 word = bf16_from_f32_reference(mul_rn(silu_f32(g0), u0)) |
                             (static_cast<u32>(bf16_from_f32_reference(mul_rn(silu_f32(g1), u1))) << 16);
            y[t][4 * c + e / 2] = word;
            mag[t][c] = std::max(mag[t][c], kernels::bf16x2_magnitude_max(word));
          }
        }
      }
      // butterfly over masks 1, 2, 4, 8 inside each wave (lanes of other waves never mix)
      for (u32 mask = 1; mask < Contract::lanes_per_group; mask <<= 1) {
        auto next = mag;
        for (u32 t = 0; t < n; ++t) {
          const u32 partner = (t / W) * W + ((t % W) ^ mask);
          for (u32 c = 0; c < Contract::vectors_per_lane; ++c) next[t][c] = std::max(mag[t][c], mag[partner][c]);
        }
        mag = next;
      }
      for (u32 t = 0; t < n; ++t) {
        const u32 row = kernel::row_of(wg, t);
        if (row >= rows) continue;
        for (u32 c = 0; c < Contract::vectors_per_lane; ++c) {
          const float scale = kernels::act_quant_scale_fast(mag[t][c]);  // the kernel's
          const auto divider = kernels::act_quant_divider::make(mag[t][c], kernels::act_quant_divisor(mag[t][c], scale));
          for (u32 e = 0; e < 8; ++e) {
            const u32 word = y[t][4 * c + e / 2];
            const float v = bit_cast<float>(e % 2 ? (word & 0xFFFF0000u) : (word << 16));
            const u32 idx = row * 512 + kernel::first_value(t, c) + e;
            out[idx] = e4m3_from_f32_reference(divider.quotient(v));
            ++value_writes[idx];
          }
          if (kernel::stores_scale(t)) {
            scales[row * 4 + kernel::group_of(t, c)] = scale;
            ++scale_writes[row * 4 + kernel::group_of(t, c)];
          }
        }
      }
    }
  }
};

template <class Contract> void check_mapping(u32 rows, i64 stride) {
  std::vector<std::uint16_t> in(static_cast<std::size_t>(rows) * stride, 0x7FC1);
  for (u32 r = 0; r < rows; ++r)
    oracles::fill_act_row(in.data() + r * stride, static_cast<oracles::act_row>(r % oracles::act_row_kinds), 1000 + r * 7 + stride);
  std::vector<std::uint8_t> want(rows * 512), got(rows * 512, 0xAB);
  std::vector<float> want_s(rows * 4), got_s(rows * 4, -1.0f);
  std::vector<int> vw(rows * 512), sw(rows * 4);
  oracles::act_quant(in.data(), rows, stride, want.data(), want_s.data());
  act_quant_model<Contract>::run(in, rows, stride, got, got_s, vw, sw);
  long value_mismatch = 0, scale_mismatch = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    value_mismatch += want[i] != got[i];
    CHECK(vw[i] == 1);
  }
  for (std::size_t i = 0; i < want_s.size(); ++i) {
    scale_mismatch += oracles::bits_of(want_s[i]) != oracles::bits_of(got_s[i]);
    CHECK(sw[i] == 1);
  }
  CHECK(value_mismatch == 0);
  CHECK(scale_mismatch == 0);
}
}  // namespace

TEST_CASE("act_quant model equals the oracle for every mapping (wave64 and warp32)") {
  check_mapping<contracts::moe_act_quant_decode<gfx950>>(9, 1024);
  check_mapping<contracts::moe_act_quant_decode<sm90a>>(9, 1024);
  check_mapping<contracts::moe_act_quant_decode<sm90a>>(7, 1032);
  check_mapping<contracts::moe_act_quant_batch<gfx950>>(45, 1024);
  check_mapping<contracts::moe_act_quant_batch<sm90a>>(45, 1536);
  check_mapping<contracts::moe_act_quant_batch<sm90a>>(13, 1024);  // partial last workgroup
  check_mapping<contracts::moe_act_quant<sm90a, 4608, 2, 4>>(37, 1024);  // host model only (not built)
  check_mapping<contracts::moe_act_quant<sm90a, 4608, 4, 16>>(37, 1024);  // host model only (not built)
  check_mapping<contracts::moe_act_quant<gfx950, 4608, 2, 2>>(9, 1024);
}

TEST_CASE("the kernel's division-free scale equals amax / 448 (IEEE) for every BF16 magnitude") {
  long checked = 0, mismatches = 0;
  for (u32 m = 0; m <= 0x7FFFu; ++m) {
    ++checked;
    mismatches += oracles::bits_of(kernels::act_quant_scale_fast(m)) != oracles::bits_of(kernels::act_quant_scale(m));
    if (m > 0 && m < 0x7F80u) mismatches += oracles::bits_of(kernels::act_quant_scale_fast(m)) != oracles::bits_of(f32_from_bf16(static_cast<u16>(m)) / 448.0f);
  }
  CHECK(checked == 32768);
  CHECK(mismatches == 0);
  CHECK(kernels::act_quant_scale_fast(0x7F80u) == INFINITY);
  CHECK(oracles::bits_of(kernels::act_quant_scale_fast(0x7FFFu)) == 0x7FC00000u);
  CHECK(oracles::bits_of(kernels::act_quant_scale_fast(0u)) == 0u);
}

TEST_CASE("the oracle's special groups: amax = 0, NaN, Inf, saturation") {
  std::vector<std::uint16_t> row(1024);
  std::uint8_t q[512];
  float s[4];
  oracles::fill_act_row(row.data(), oracles::act_row::nan_group, 5);
  oracles::act_quant_row(row.data(), q, s);
  CHECK(oracles::bits_of(s[0]) == 0x7FC00000u);  // SiLU(-Inf) = NaN
  CHECK(oracles::bits_of(s[1]) == 0x7FC00000u);
  for (int i = 0; i < 256; ++i) CHECK(q[i] == 0x7F);
  CHECK(std::isfinite(s[2]));
  oracles::fill_act_row(row.data(), oracles::act_row::inf_group, 6);
  oracles::act_quant_row(row.data(), q, s);
  CHECK(s[2] == INFINITY);
  CHECK(s[3] == INFINITY);
  for (int i = 256; i < 512; ++i) CHECK(q[i] == 0x7F);
  oracles::fill_act_row(row.data(), oracles::act_row::zero_groups, 7);
  oracles::act_quant_row(row.data(), q, s);
  CHECK(oracles::bits_of(s[0]) == 0u);
  CHECK(oracles::bits_of(s[2]) == 0u);
  int negative_zeros = 0;
  for (int i = 0; i < 128; ++i) {
    CHECK((q[i] == 0x00 || q[i] == 0x80));
    negative_zeros += q[i] == 0x80;
  }
  CHECK(negative_zeros > 0);
  oracles::fill_act_row(row.data(), oracles::act_row::exact_ties, 8);
  oracles::act_quant_row(row.data(), q, s);
  for (int g = 0; g < 4; ++g) CHECK(s[g] == 1.0f);
  for (int i = 0; i < 512; ++i) {
    const float y = f32_from_bf16(bf16_from_f32_reference(32.0f * f32_from_bf16(row[512 + i])));
    CHECK(q[i] == e4m3_from_f32_reference(y));
  }
}

namespace {
struct divider_sweep {
  long pairs = 0, e4m3_mismatches = 0, fp32_differences = 0;
};
// Every finite nonzero BF16 amax, every BF16 magnitude y <= amax, both signs.
#define NETRA_DIVIDER_SWEEP_BODY                                                                          \
  divider_sweep r;                                                                                        \
  for (u32 a = 1; a < 0x7F80u; ++a) {                                                                     \
    const float scale = kernels::act_quant_scale(a);                                                      \
    const auto divider = kernels::act_quant_divider::make(a, kernels::act_quant_divisor(a, scale));        \
    for (u32 y = 0; y <= a; ++y) {                                                                        \
      for (u32 sign : {0u, 0x8000u}) {                                                                    \
        const float v = f32_from_bf16(static_cast<u16>(y | sign));                                        \
        const float want = v / scale;                                                                     \
        const float got = divider.quotient(v);                                                            \
        ++r.pairs;                                                                                        \
        if (oracles::bits_of(want) != oracles::bits_of(got)) { /* equal bits give equal E4M3 */          \
          ++r.fp32_differences;                                                                           \
          r.e4m3_mismatches += e4m3_from_f32_reference(want) != e4m3_from_f32_reference(got);             \
        }                                                                                                 \
      }                                                                                                   \
    }                                                                                                     \
  }                                                                                                       \
  return r;
divider_sweep sweep_divider() { NETRA_DIVIDER_SWEEP_BODY }
// The same loop with the host's FMA instruction when it has one (fmaf through libm is several
// times slower; both are correctly rounded, so the results are the same bits).
[[gnu::target("fma")]] divider_sweep sweep_divider_fma() { NETRA_DIVIDER_SWEEP_BODY }
#undef NETRA_DIVIDER_SWEEP_BODY
}  // namespace

TEST_CASE("the division-free quotient equals the IEEE division after E4M3 rounding, for all BF16 pairs") {
  const divider_sweep r = __builtin_cpu_supports("fma") ? sweep_divider_fma() : sweep_divider();
  MESSAGE(r.pairs, " pairs; FP32 quotients differing in the last bit (all below E4M3's range): ", r.fp32_differences);
  CHECK(r.pairs > 1000000000L);
  CHECK(r.e4m3_mismatches == 0);
}

TEST_CASE("the quotient without the scaling by m equals the scaled one for every group scales_values leaves out") {
  long groups = 0, mismatches = 0;
  for (u32 a = 0; a <= 0x7FFFu; ++a) {
    const bool tiny = a > 0 && a < 0x2180u;  // m = 2^64 with a nonzero value
    CHECK(kernels::act_quant_divider::scales_values(a) == tiny);
    if (tiny) continue;
    ++groups;
    const float scale = kernels::act_quant_scale_fast(a);
    const auto divider = kernels::act_quant_divider::make(a, kernels::act_quant_divisor(a, scale));
    const u32 top = a < 0x7F80u ? a : 0x7F80u;
    for (u32 y : {0u, top / 3, top / 2, top}) {
      for (u32 sign : {0u, 0x8000u}) {
        const float v = f32_from_bf16(static_cast<u16>(y | sign));
        const float scaled = divider.quotient<true>(v), unscaled = divider.quotient<false>(v);
        mismatches += !(std::isnan(scaled) && std::isnan(unscaled)) && oracles::bits_of(scaled) != oracles::bits_of(unscaled);
      }
    }
  }
  CHECK(groups == 32768 - 0x217F);
  CHECK(mismatches == 0);
}
