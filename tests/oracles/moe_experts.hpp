// tests/oracles/moe_experts.hpp — the decode expert contracts written plainly: the gate_up
// hidden quantization (bitwise), FP64 references of the dequantized gate_up and down math, and
// the comparison policy of contracts/moe/expert_weights.hpp. No code is shared with the kernels
// (plain float comparisons where the kernels compare integer magnitudes; double sums).
// Weights are reached through accessors so that tests can back them with a full [257, ...]
// array (GPU tests) or with only the experts a test uses (host models).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "netra/contracts/moe/route_layout.hpp"
#include "netra/dsl/convert.hpp"
#include "oracles/argmax_rows.hpp"

namespace netra::oracles {

inline float bf16_to_float(std::uint16_t h) { return f32_from_bf16(h); }
inline float nan_f32() {
  const std::uint32_t u = 0x7FC00000u;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// The gate_up contract's per-128 hidden quantization of one block (moe::hidden_block_quant), in
/// the contract's FP8 format (E4M3FNUZ: 240 for 448, NaN byte 0x80).
template <class Format = fp8::e4m3fn> float hidden_quant_block(const std::uint16_t* x, std::uint8_t* q) {
  bool has_nan = false, has_inf = false;
  float amax = 0.0f;
  for (int k = 0; k < 128; ++k) {
    const float v = bf16_to_float(x[k]);
    if (std::isnan(v)) has_nan = true;
    else if (std::isinf(v)) has_inf = true;
    else amax = std::fmax(amax, std::fabs(v));
  }
  if (has_nan || has_inf) {
    for (int k = 0; k < 128; ++k) q[k] = Format::nan_code;
    return has_nan ? nan_f32() : INFINITY;
  }
  const float max = fp8_max_v<Format>;  // 448 (E4M3FN), 240 (E4M3FNUZ)
  const float scale = amax / max;
  const float r = max / amax;
  for (int k = 0; k < 128; ++k) q[k] = std::isinf(r) ? 0x00 : fp8_from_f32_reference<Format>(bf16_to_float(x[k]) * r);
  return scale;
}

/// Weights of the 257 experts through accessors: W13[e][n][k], S13[e][n/128][k/128], W2, S2.
struct expert_weight_view {
  std::function<std::uint8_t(int, int, int)> w13, w2;
  std::function<float(int, int, int)> s13, s2;
};

/// One reference element: the FP64 value and the magnitude E of the comparison policy.
struct reference {
  double value = 0, magnitude = 0;
};

inline bool valid_expert(std::int32_t e) { return e >= 0 && e < 257; }

inline bool every_row(int) { return true; }

/// One unit of a gate_up call: up to 16 routes of one key, in route order; `expert` is the id of
/// its first route.
struct expert_unit {
  std::int32_t expert = 0;
  std::vector<std::uint32_t> routes;
  bool operator==(const expert_unit&) const = default;
};

/// The unit list of a gate_up call (contracts/moe/expert_unit_list.hpp), written plainly: walk the
/// routes in order; a route's key is its id if valid, else one shared invalid key; the route at
/// occurrence 16 u of its key opens a new unit (appended to the list), every route joins its
/// key's open unit.
inline std::vector<expert_unit> unit_list(const std::vector<std::int32_t>& ids) {
  std::vector<expert_unit> units;
  std::vector<std::size_t> open(258, 0);
  std::vector<std::uint32_t> seen(258, 0);
  for (std::uint32_t r = 0; r < ids.size(); ++r) {
    const std::size_t key = valid_expert(ids[r]) ? static_cast<std::size_t>(ids[r]) : 257;
    if (seen[key]++ % 16 == 0) {
      open[key] = units.size();
      units.push_back({ids[r], {}});
    }
    units[open[key]].routes.push_back(r);
  }
  return units;
}

/// The unit list as the kernels store it (expert_unit_list.hpp layout) -> the oracle's form.
/// Throws nothing: a malformed list (bad count or columns) comes back as what it says, clipped.
inline std::vector<expert_unit> read_unit_list(const std::vector<std::uint32_t>& words, std::size_t max_units) {
  std::vector<expert_unit> units;
  const std::size_t count = std::min<std::size_t>(words[0], max_units);
  for (std::size_t j = 0; j < count; ++j) {
    const std::uint32_t* u = &words[32 + 32 * j];
    expert_unit e{static_cast<std::int32_t>(u[0]), {}};
    for (std::uint32_t c = 0; c < std::min<std::uint32_t>(u[1], 16); ++c) e.routes.push_back(u[2 + c]);
    units.push_back(e);
  }
  return units;
}

/// gate_up: ref[r * 1024 + n] for all routes r < 9M (rows of routes with an invalid id are 0);
/// only rows n with `rows(n)` are computed (the others stay 0). Format: the FP8 format of W13 and
/// of the hidden quantization.
template <class Format = fp8::e4m3fn, class Rows = bool (*)(int)>
std::vector<reference> gate_up_reference(int tokens, const std::uint16_t* hidden, const std::int32_t* ids, const expert_weight_view& w,
                                         Rows rows = every_row) {
  const int routes = tokens * 9;
  std::vector<reference> ref(static_cast<std::size_t>(routes) * 1024);
  std::vector<std::uint8_t> qx(2048);
  std::vector<double> sx(16);
  for (int t = 0; t < tokens; ++t) {
    for (int b = 0; b < 16; ++b) sx[b] = hidden_quant_block<Format>(hidden + t * 2048 + 128 * b, qx.data() + 128 * b);
    for (int s = 0; s < 9; ++s) {
      const int r = t * 9 + s, e = ids[r];
      if (!valid_expert(e)) continue;
      for (int n = 0; n < 1024; ++n) {
        if (!rows(n)) continue;
        double v = 0, mag = 0;
        for (int b = 0; b < 16; ++b) {
          double p = 0, a = 0;
          for (int k = 128 * b; k < 128 * b + 128; ++k) {
            const double prod = static_cast<double>(f32_from_fp8<Format>(qx[k])) * f32_from_fp8<Format>(w.w13(e, n, k));
            p += prod;
            a += std::fabs(prod);
          }
          const double scale = sx[b] * static_cast<double>(w.s13(e, n / 128, b));
          v += scale * p;
          mag += std::fabs(scale) * a;
        }
        ref[static_cast<std::size_t>(r) * 1024 + n] = {v, mag};
      }
    }
  }
  return ref;
}

/// down: ref[t * 2048 + n]; act: E4M3 [9M, 512] + scales [9M, 4] (act_quant's outputs); only
/// rows n with `rows(n)` are computed. Format: the FP8 format of act and W2.
template <class Format = fp8::e4m3fn, class Rows = bool (*)(int)>
std::vector<reference> down_reference(int tokens, const std::uint8_t* act, const float* act_scales, const std::int32_t* ids,
                                      const float* route_weights, const expert_weight_view& w, Rows rows = every_row) {
  std::vector<reference> ref(static_cast<std::size_t>(tokens) * 2048);
  for (int t = 0; t < tokens; ++t)
    for (int n = 0; n < 2048; ++n) {
      if (!rows(n)) continue;
      double v = 0, mag = 0;
      for (int s = 0; s < 9; ++s) {
        const int r = t * 9 + s, e = ids[r];
        double y = 0, ymag = 0;
        if (valid_expert(e)) {
          for (int b = 0; b < 4; ++b) {
            double p = 0, a = 0;
            for (int k = 128 * b; k < 128 * b + 128; ++k) {
              const double prod = static_cast<double>(f32_from_fp8<Format>(act[r * 512 + k])) * f32_from_fp8<Format>(w.w2(e, n, k));
              p += prod;
              a += std::fabs(prod);
            }
            const double scale = static_cast<double>(act_scales[r * 4 + b]) * w.s2(e, n / 128, b);
            y += scale * p;
            ymag += std::fabs(scale) * a;
          }
        }
        v += static_cast<double>(route_weights[r]) * y;
        mag += std::fabs(static_cast<double>(route_weights[r])) * ymag;
      }
      ref[static_cast<std::size_t>(t) * 2048 + n] = {v, mag};
    }
  return ref;
}

/// The comparison policy: NaN where the reference is NaN; otherwise
/// |got - ref| <= 2^-8 |ref| + 2^-15 E + 2^-120.
inline bool within_policy(const reference& ref, std::uint16_t got_bf16) {
  const double got = bf16_to_float(got_bf16);
  if (std::isnan(ref.value)) return std::isnan(got);
  if (std::isnan(got)) return false;
  const double bound = std::ldexp(std::fabs(ref.value), -8) + std::ldexp(ref.magnitude, -15) + std::ldexp(1.0, -120);
  return std::fabs(got - ref.value) <= bound;
}

struct policy_report {
  long checked = 0, failures = 0, nans = 0;
  long first_failure = -1;
  double worst = 0;  // largest |got - ref| / bound among non-NaN elements
  std::string describe() const {
    return "checked " + std::to_string(checked) + ", failures " + std::to_string(failures) + " (first at " + std::to_string(first_failure) +
           "), NaN " + std::to_string(nans) + ", worst error / bound " + std::to_string(worst);
  }
};

/// Checks got[i] for every i with `selected(i)`.
template <class Selected>
policy_report check_policy(const std::vector<reference>& ref, const std::vector<std::uint16_t>& got, Selected selected) {
  policy_report rep;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!selected(i)) continue;
    ++rep.checked;
    if (std::isnan(ref[i].value)) ++rep.nans;
    if (!within_policy(ref[i], got[i])) {
      if (rep.first_failure < 0) rep.first_failure = static_cast<long>(i);
      ++rep.failures;
    } else if (!std::isnan(ref[i].value)) {
      const double bound = std::ldexp(std::fabs(ref[i].value), -8) + std::ldexp(ref[i].magnitude, -15) + std::ldexp(1.0, -120);
      rep.worst = std::fmax(rep.worst, std::fabs(bf16_to_float(got[i]) - ref[i].value) / bound);
    }
  }
  return rep;
}
inline policy_report check_policy(const std::vector<reference>& ref, const std::vector<std::uint16_t>& got) {
  return check_policy(ref, got, [](std::size_t) { return true; });
}

// ---- inputs ------------------------------------------------------------------------------------

/// A deterministic hash of (seed, a, b, c): weights without storing 771 MB.
inline std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t x = seed ^ (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^ (c * 0x165667B19E3779F9ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 32;
  return x;
}

/// Finite E4M3 bytes (never 0x7F / 0xFF), roughly uniform over the encodings.
inline std::uint8_t finite_e4m3(std::uint64_t h) {
  std::uint8_t v = static_cast<std::uint8_t>(h);
  if ((v & 0x7F) == 0x7F) v ^= 0x01;
  return v;
}

/// How a test's expert weights are drawn (hashed_weights).
struct weight_params {
  std::uint64_t seed = 1;
  float scale_lo = 1e-4f, scale_hi = 4e-3f;  // block scales drawn from [lo, hi)
  bool saturate = false;                     // every weight ±448
  int zero_scale_expert = -1;                // this expert's block scales are all 0
  bool operator==(const weight_params&) const = default;
};

/// Weights as a deterministic function of (params, expert, row, k): nothing stored.
inline expert_weight_view hashed_weights(weight_params p) {
  auto scale = [p](int which, int e, int i, int j) {
    if (e == p.zero_scale_expert) return 0.0f;
    const double u = static_cast<double>(mix(p.seed + 77, static_cast<std::uint64_t>(which) * 1000 + static_cast<std::uint64_t>(e),
                                             static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j)) >> 11) /
                     9007199254740992.0;
    return static_cast<float>(p.scale_lo + (p.scale_hi - p.scale_lo) * u);
  };
  auto weight = [p](int which, int e, int n, int k) -> std::uint8_t {
    const std::uint64_t h =
        mix(p.seed, static_cast<std::uint64_t>(which) * 1000 + static_cast<std::uint64_t>(e), static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(k));
    if (p.saturate) return (h & 1) ? 0x7E : 0xFE;
    return finite_e4m3(h);
  };
  expert_weight_view v;
  v.w13 = [weight](int e, int n, int k) { return weight(13, e, n, k); };
  v.w2 = [weight](int e, int n, int k) { return weight(2, e, n, k); };
  v.s13 = [scale](int e, int i, int j) { return scale(13, e, i, j); };
  v.s2 = [scale](int e, int i, int j) { return scale(2, e, i, j); };
  return v;
}

/// Route ids like the router + shared append: 8 distinct routed experts per token (drawn from
/// `pool` experts), slot 8 = 256.
inline std::vector<std::int32_t> routed_ids(int tokens, std::uint64_t seed, int pool = 256) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(tokens) * 9);
  xorshift r{seed * 2654435761ull + 1};
  for (int t = 0; t < tokens; ++t) {
    for (int s = 0; s < 8; ++s) {
      std::int32_t e;
      bool dup;
      do {
        e = static_cast<std::int32_t>(r.next() % static_cast<std::uint64_t>(pool));
        dup = false;
        for (int j = 0; j < s; ++j) dup = dup || ids[t * 9 + j] == e;
      } while (dup);
      ids[t * 9 + s] = e;
    }
    ids[t * 9 + 8] = 256;
  }
  return ids;
}

/// BF16 hidden values ~ N(0, sigma) (sum of uniforms), finite.
inline std::vector<std::uint16_t> hidden_rows(int tokens, std::uint64_t seed, float sigma = 1.0f) {
  std::vector<std::uint16_t> h(static_cast<std::size_t>(tokens) * 2048);
  xorshift r{seed * 97 + 13};
  for (auto& v : h) {
    const float x = (r.uniform() + r.uniform() + r.uniform()) * sigma;
    v = bf16_from_f32_reference(x);
  }
  return h;
}

/// BF16 hidden rows whose every 128-block sits on E4M3 ties of the gate_up quantization: amax
/// A = a / 128 * 2^e with a in {184, 192, 240, 252} (the mantissas where r = 448 / A, one
/// rounding, and (1 / A) * 448, two roundings, differ by an ulp) and values ±(3/4) A 2^-j, j =
/// 0..5, for which x * 448 / A is an E4M3 midpoint (336 2^-j): the contract's r rounds them one
/// way, a reciprocal-then-multiply r the other (torch's `448.0 / amax` is amax.reciprocal() * 448).
/// The other values are random, below A / 2.
inline std::vector<std::uint16_t> tie_hidden_rows(int tokens, std::uint64_t seed) {
  static constexpr int mantissas[4] = {184, 192, 240, 252};
  std::vector<std::uint16_t> h(static_cast<std::size_t>(tokens) * 2048);
  xorshift r{seed * 131 + 5};
  for (int blk = 0; blk < tokens * 16; ++blk) {
    const float amax = std::ldexp(static_cast<float>(mantissas[r.next() % 4]), static_cast<int>(r.next() % 5) - 2 - 7);
    std::uint16_t* x = h.data() + static_cast<std::size_t>(blk) * 128;
    for (int k = 0; k < 128; ++k) x[k] = bf16_from_f32_reference(0.5f * amax * r.uniform());
    const int at = static_cast<int>(r.next() % 64);
    x[at] = bf16_from_f32_reference((r.next() & 1) ? amax : -amax);
    for (int j = 0; j < 6; ++j) {
      const float tie = std::ldexp(0.75f * amax, -j);
      x[at + 1 + 2 * j] = bf16_from_f32_reference((r.next() & 1) ? tie : -tie);  // exact in BF16 (3a / 4 is an integer < 256)
    }
  }
  return h;
}

}  // namespace netra::oracles
