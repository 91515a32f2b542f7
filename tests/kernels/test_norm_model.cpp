// The normalization kernel on the host, decomposed as the kernel decomposes it: its own lane maps
// (row_of, chunk_of, row_offset, stores_scale), per-thread slice partials, shuffles modelled per
// wave (partner = lane ^ mask inside the wave), the two-warp LDS step as an array, the device
// conversions by their reference and dsl/block_quant.hpp's quantizer. Equal to the oracle bit for
// bit for every catalogued mapping of every kind, random and adversarial rows, several strides;
// every output, scale and r' written exactly once, rows past T untouched. Also: the oracle's
// adversarial rows give the results the contract states.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "netra/kernels/norm/rms_norm.hpp"
#include "netra/runtime/catalog/norm.hpp"
#include "netra/runtime/instance.hpp"
#include "oracles/norm.hpp"

using namespace netra;

namespace {

struct model_buffers {
  std::vector<std::uint16_t> x, residual, gate, weight, out_bf16;
  std::vector<std::uint8_t> out_e4m3;
  std::vector<float> scales;
  std::vector<int> writes, scale_writes, residual_writes;
};

template <class C> struct norm_model {
  using K = kernels::norm_kernel<C>;
  static constexpr u32 W = C::target::wave_size;

  static float lo(u32 w) { return f32_from_bf16(static_cast<u16>(w)); }
  static float hi(u32 w) { return f32_from_bf16(static_cast<u16>(w >> 16)); }
  static u32 word(const std::uint16_t* p, u32 e) { return p[2 * e] | (static_cast<u32>(p[2 * e + 1]) << 16); }
  static u32 pack(float a, float b) { return bf16_from_f32_reference(a) | (static_cast<u32>(bf16_from_f32_reference(b)) << 16); }

  /// y from n = v * rs.
  static float y_of(float n, float w, float z) {
    if constexpr (C::kind == norm_kind::gated) return mul_rn(mul_rn(n, w), silu_f32(z));
    else if constexpr (C::weight_form == norm_weight::zero_centred) return mul_rn(n, add_rn(1.0f, w));
    else return mul_rn(n, w);
  }

  static void run(model_buffers& b, u32 tokens, i64 x_stride, i64 r_stride, i64 z_stride, float eps) {
    const u32 rows = tokens * C::heads;
    const launch_shape s = K::shape(rows);
    constexpr u32 chunks = K::chunks;
    // A looping grid (Resident > 0): workgroup g's k-th iteration is the rows of workgroup
    // g + k * grid of the uncapped grid (step = grid * R), so the model walks the uncapped grid.
    // Split > 1: workgroup g is part g % Split of row g / Split and stores only what it owns.
    const u32 groups = ceil_div(rows, K::rows_per_workgroup) * C::split;
    CHECK(s.grid[0] == (C::grid_cap > 0 && groups > C::grid_cap ? C::grid_cap : groups));
    // add_rms r' writes wait for the workgroup's cluster (its Split parts) to have read r.
    std::vector<std::pair<std::size_t, u16>> pending;
    for (u32 wg = 0; wg < groups; ++wg) {
      const u32 piece = wg % C::split;
      const u32 T = s.workgroup_size;
      std::vector<std::array<std::array<u32, 4>, chunks>> v(T), w(T), z(T);
      std::vector<std::array<float, K::per_thread>> part(T);
      for (u32 t = 0; t < T; ++t) {
        const u32 row = std::min(K::row_of(wg, t), rows - 1);
        for (u32 i = 0; i < chunks; ++i) {
          const u32 c = K::chunk_of(t, i);
          for (u32 e = 0; e < 4; ++e) {
            w[t][i][e] = word(b.weight.data() + 8 * c, e);
            v[t][i][e] = word(b.x.data() + K::row_offset(row, x_stride) + 8 * c, e);
            if constexpr (C::kind == norm_kind::gated) z[t][i][e] = word(b.gate.data() + K::row_offset(row, z_stride) + 8 * c, e);
            if constexpr (C::kind == norm_kind::add_rms) {
              std::uint16_t* r = b.residual.data() + K::row_offset(row, r_stride) + 8 * c;
              const u32 rw = word(r, e);
              v[t][i][e] = pack(add_rn(lo(v[t][i][e]), lo(rw)), add_rn(hi(v[t][i][e]), hi(rw)));
            }
          }
        }
        for (u32 p = 0; p < K::per_thread; ++p) {
          float acc = 0.0f;
          for (u32 k = 0; k < K::per_slice; ++k)
            for (u32 e = 0; e < 4; ++e) {
              const u32 x = v[t][p * K::per_slice + k][e];
              acc = fma_rn(lo(x), lo(x), acc);
              acc = fma_rn(hi(x), hi(x), acc);
            }
          part[t][p] = acc;
        }
      }
      // add_rms writes r' after all threads read r (each thread reads and writes only its own chunks)
      if constexpr (C::kind == norm_kind::add_rms)
        for (u32 t = 0; t < T; ++t)
          if (K::row_of(wg, t) < rows)
            for (u32 i = 0; i < chunks; ++i) {
              if (!K::owns(piece, i)) continue;
              const u32 row = K::row_of(wg, t), c = K::chunk_of(t, i);
              const std::size_t at = static_cast<std::size_t>(K::row_offset(row, r_stride) + 8 * c);
              for (u32 e = 0; e < 4; ++e) {
                pending.emplace_back(at + 2 * e, static_cast<u16>(v[t][i][e]));
                pending.emplace_back(at + 2 * e + 1, static_cast<u16>(v[t][i][e] >> 16));
              }
            }
      if ((wg + 1) % C::split == 0) {
        for (const auto& [at, bits] : pending) b.residual[at] = bits, b.residual_writes[at] += 1;
        pending.clear();
      }
      auto partner = [&](u32 t, u32 mask) { return (t / W) * W + ((t % W) ^ mask); };
      // The butterfly over slice q = j + T_r p: partner q ^ mask is lane j ^ mask (mask < T_r) or
      // the thread's own slice p ^ (mask / T_r).
      for (u32 mask = 1; mask < C::half; mask <<= 1) {
        auto next = part;
        for (u32 t = 0; t < T; ++t)
          for (u32 p = 0; p < K::per_thread; ++p)
            next[t][p] = mask < C::threads_per_row ? add_rn(part[t][p], part[partner(t, mask)][p])
                                                   : add_rn(part[t][p], part[t][p ^ (mask / C::threads_per_row)]);
        part = next;
      }
      std::vector<float> sum(T);
      for (u32 t = 0; t < T; ++t) {
        if constexpr (C::slices == C::half) sum[t] = part[t][0];
        else if constexpr (C::threads_per_row <= C::half) sum[t] = add_rn(part[t][0], part[t][C::half / C::threads_per_row]);
        else if constexpr (W > C::half) sum[t] = add_rn(part[t][0], part[partner(t, C::half)][0]);
        else {
          static_assert(C::waves_per_row == 2);
          const u32 first = (t / C::threads_per_row) * C::threads_per_row;  // lane 0 of warp 0 and warp 1 of the row
          sum[t] = add_rn(part[first][0], part[first + W][0]);
        }
      }
      std::vector<std::array<std::array<u32, 4>, chunks>> y(T);
      for (u32 t = 0; t < T; ++t) {
        const float rs = rsqrt_f32(add_rn(mul_rn(sum[t], 1.0f / C::n), eps));
        for (u32 i = 0; i < chunks; ++i)
          for (u32 e = 0; e < 4; ++e)
            y[t][i][e] = pack(y_of(mul_rn(lo(v[t][i][e]), rs), lo(w[t][i][e]), lo(z[t][i][e])),
                              y_of(mul_rn(hi(v[t][i][e]), rs), hi(w[t][i][e]), hi(z[t][i][e])));
      }
      std::vector<std::array<u32, chunks>> mag(T);
      for (u32 t = 0; t < T; ++t)
        for (u32 i = 0; i < chunks; ++i) {
          mag[t][i] = 0;
          for (u32 e = 0; e < 4; ++e) mag[t][i] = std::max(mag[t][i], bf16x2_magnitude_max(y[t][i][e]));
        }
      // The group's 16 chunks: partner chunk c ^ mask is lane j ^ mask's chunk i (mask < T_r) or,
      // for a gated head over T_r < 16 threads (one slice per chunk), the thread's chunk i ^ (mask / T_r).
      for (u32 mask = 1; mask < 16; mask <<= 1) {
        auto next = mag;
        for (u32 t = 0; t < T; ++t)
          for (u32 i = 0; i < chunks; ++i)
            next[t][i] = std::max(mag[t][i], mask < C::threads_per_row ? mag[partner(t, mask)][i] : mag[t][i ^ (mask / C::threads_per_row)]);
        mag = next;
      }
      for (u32 t = 0; t < T; ++t) {
        const u32 row = K::row_of(wg, t);
        if (row >= rows) continue;
        for (u32 i = 0; i < chunks; ++i) {
          if (!K::owns(piece, i)) continue;
          const std::size_t at = static_cast<std::size_t>(row) * C::n + 8 * K::chunk_of(t, i);
          const e4m3_block_quantizer quant = e4m3_block_quantizer::of(mag[t][i]);
          for (u32 e = 0; e < 4; ++e)
            for (u32 h = 0; h < 2; ++h) {
              const u16 bits = static_cast<u16>(y[t][i][e] >> (16 * h));
              if constexpr (C::fp8_out) b.out_e4m3[at + 2 * e + h] = e4m3_from_f32_reference(quant.divider.quotient(f32_from_bf16(bits)));
              else b.out_bf16[at + 2 * e + h] = bits;
              b.writes[at + 2 * e + h] += 1;
            }
          if (C::fp8_out && K::stores_scale(t, i)) {
            const std::size_t g = static_cast<std::size_t>(row) * C::groups_per_row + K::chunk_of(t, i) / 16;
            b.scales[g] = quant.scale;
            b.scale_writes[g] += 1;
          }
        }
      }
    }
  }
};

/// Builds inputs for `tokens` tokens (row kinds cycling from `seed`), runs model and oracle, compares.
template <class C> void check(u32 tokens, i64 stride_pad, std::uint64_t seed) {
  const i64 cols = C::cols, xs = cols + stride_pad, rs = cols + 2 * stride_pad, zs = cols + 3 * stride_pad;
  model_buffers b;
  b.x.assign(static_cast<std::size_t>(tokens * xs), 0x7FC1);
  b.residual.assign(static_cast<std::size_t>(tokens * rs), 0x7FC1);
  b.gate.assign(static_cast<std::size_t>(tokens * zs), 0x7FC1);
  b.weight.resize(C::n);
  oracles::fill_norm_weight(b.weight.data(), C::n, C::weight_form, seed);
  for (u32 t = 0; t < tokens; ++t)
    for (u32 h = 0; h < C::heads; ++h) {
      const std::uint64_t s = seed + t * 37 + h;
      oracles::fill_norm_row(b.x.data() + t * xs + h * C::n, C::n, static_cast<oracles::norm_row>((t + h + seed) % oracles::norm_row_kinds), s);
      oracles::fill_norm_row(b.residual.data() + t * rs + h * C::n, C::n, static_cast<oracles::norm_row>((t * 3 + seed) % oracles::norm_row_kinds), s + 1);
      oracles::fill_norm_row(b.gate.data() + t * zs + h * C::n, C::n, h % 5 == 4 ? static_cast<oracles::norm_row>((t + h) % oracles::norm_row_kinds) : oracles::norm_row::random, s + 2);
    }
  std::vector<std::uint16_t> residual_in = b.residual;
  const std::size_t outs = static_cast<std::size_t>(tokens * cols);
  b.out_bf16.assign(outs + C::n, 0xABAB);
  b.out_e4m3.assign(outs + C::n, 0xAB);
  b.scales.assign(outs / 128 + 1, -1.0f);
  b.writes.assign(outs + C::n, 0);
  b.scale_writes.assign(outs / 128 + 1, 0);
  b.residual_writes.assign(b.residual.size(), 0);
  const float eps = 1e-6f;
  norm_model<C>::run(b, tokens, xs, rs, zs, eps);

  const oracles::norm_call call{.kind = C::kind, .weight_form = C::weight_form, .fp8_out = C::fp8_out, .eps = eps, .tokens = tokens,
                                .x = b.x.data(), .x_stride = xs, .residual = residual_in.data(), .residual_stride = rs,
                                .gate = b.gate.data(), .gate_stride = zs, .weight = b.weight.data()};
  const oracles::norm_outputs expected = oracles::norm_expected(call);
  const auto& want = expected.y;
  const auto& want_q = expected.q;
  const auto& want_s = expected.scales;

  long mismatches = 0, bad_writes = 0;
  for (std::size_t i = 0; i < outs; ++i) {
    mismatches += C::fp8_out ? b.out_e4m3[i] != want_q[i] : b.out_bf16[i] != want[i];
    bad_writes += b.writes[i] != 1;
  }
  for (std::size_t i = outs; i < outs + C::n; ++i) bad_writes += b.writes[i] != 0;
  if constexpr (C::fp8_out) {
    for (std::size_t g = 0; g < outs / 128; ++g) {
      mismatches += oracles::norm_bits(b.scales[g]) != oracles::norm_bits(want_s[g]);
      bad_writes += b.scale_writes[g] != 1;
    }
    bad_writes += b.scale_writes[outs / 128] != 0;
  }
  if constexpr (C::kind == norm_kind::add_rms) {
    for (std::size_t i = 0; i < b.residual.size(); ++i) {
      mismatches += b.residual[i] != residual_in[i];
      const bool inside = static_cast<i64>(i % static_cast<std::size_t>(rs)) < cols;
      bad_writes += b.residual_writes[i] != (inside ? 1 : 0);
    }
  }
  INFO(instance_name<C>(), " tokens ", tokens, " pad ", stride_pad);
  CHECK(mismatches == 0);
  CHECK(bad_writes == 0);
}

}  // namespace

TEST_CASE("the norm kernel's decomposition equals the oracle bitwise for every catalogued instance") {
  long instances = 0;
  boost::hana::for_each(catalog::norm, [&](auto type) {
    using C = typename decltype(type)::type;
    for (u32 tokens : {1u, 3u, 11u, C::grid_cap > 0 ? 1100u : 1u}) check<C>(std::min<u32>(tokens, C::max_tokens), tokens == 3 ? 8 : 0, tokens * 5 + 1);
    ++instances;
  });
  MESSAGE(instances, " instances");
  CHECK(instances == static_cast<long>(boost::hana::length(catalog::norm)));
}

TEST_CASE("the gated mappings over 8 and 4 threads per head (SlicesPerThread 2, 4) equal the oracle bitwise") {
  boost::hana::for_each(boost::hana::tuple_t<contracts::gated_rms_norm<sm90a, 0, 64, 4, 0, 2>, contracts::gated_rms_norm<sm90a, 1, 64, 4, 0, 2>,
                                             contracts::gated_rms_norm<sm90a, 0, 64, 8, 0, 4>, contracts::gated_rms_norm<sm90a, 1, 64, 8, 0, 4>,
                                             contracts::gated_rms_norm<gfx950, 1, 64, 8, 0, 2>>,
                        [](auto type) {
                          using C = typename decltype(type)::type;
                          for (u32 tokens : {1u, 3u, 11u}) check<C>(tokens, tokens == 3 ? 8 : 0, tokens * 7 + 2);
                        });
}
