// tests/oracles/moe_grouped.hpp — host references of the grouped expert contracts, written plainly
// (no code shared with the kernels): the plan (stable counting order of the route keys, tiles), the
// split-K down's FP64 reference with its bound (contracts/moe/grouped_reduce.hpp), and readers of
// the plan buffer. gate_up / down / act_quant references are tests/oracles/moe_experts.hpp's and
// moe_routing.hpp's.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "oracles/moe_experts.hpp"

namespace netra::oracles {

struct grouped_tile {
  std::uint32_t key, first, routes;
  bool operator==(const grouped_tile&) const = default;
};
struct grouped_plan {
  std::vector<grouped_tile> tiles;
  std::vector<std::uint32_t> routes;  // position -> route
};

/// Keys: a valid id is its own, any other 257. Positions: keys ascending, routes in route order
/// inside a key. Tiles: per key, consecutive runs of at most `tile` positions.
inline grouped_plan make_grouped_plan(const std::vector<std::int32_t>& ids, std::uint32_t tile) {
  grouped_plan p;
  for (std::uint32_t key = 0; key <= 257; ++key) {
    const std::uint32_t first = static_cast<std::uint32_t>(p.routes.size());
    for (std::size_t r = 0; r < ids.size(); ++r)
      if ((valid_expert(ids[r]) ? static_cast<std::uint32_t>(ids[r]) : 257u) == key) p.routes.push_back(static_cast<std::uint32_t>(r));
    const std::uint32_t count = static_cast<std::uint32_t>(p.routes.size()) - first;
    for (std::uint32_t j = 0; j * tile < count; ++j) p.tiles.push_back({key, first + j * tile, std::min(tile, count - j * tile)});
  }
  return p;
}

/// The plan as the kernel stored it (grouped_plan_layout offsets given by the caller).
inline grouped_plan read_grouped_plan(const std::vector<std::uint8_t>& bytes, std::size_t tiles_offset, std::size_t routes_offset, std::size_t routes) {
  grouped_plan p;
  std::uint32_t count = 0;
  std::memcpy(&count, bytes.data(), 4);
  for (std::uint32_t j = 0; j < count && tiles_offset + 16ull * (j + 1) <= routes_offset; ++j) {
    std::uint32_t w[4];
    std::memcpy(w, bytes.data() + tiles_offset + 16ull * j, 16);
    p.tiles.push_back({w[0], w[1], w[2]});
  }
  p.routes.resize(routes);
  std::memcpy(p.routes.data(), bytes.data() + routes_offset, 4 * routes);
  return p;
}

/// One element of the split-K reference: FP64 value, E, W (sum of |weights| of valid routes), and
/// whether some partial's FP64 value is beyond FP16's range (overflow: definite, |p| >= 65520 (1 +
/// 2^-9); ambiguous: within 2^-9 of 65520, where the device partial's rounding decides).
struct split_k_reference {
  double value = 0, magnitude = 0, weight_sum = 0;
  bool overflow = false, ambiguous = false;
};

/// out[t * 2048 + n] of the M768 split-K pair from act_quant's outputs; rows n with rows(n) only.
template <class Rows = bool (*)(int)>
std::vector<split_k_reference> split_k_down_reference(int tokens, const std::uint8_t* act, const float* act_scales, const std::int32_t* ids,
                                                      const float* route_weights, const expert_weight_view& w, Rows rows = every_row) {
  std::vector<split_k_reference> ref(static_cast<std::size_t>(tokens) * 2048);
  const double limit = 65520.0;
  for (int t = 0; t < tokens; ++t)
    for (int n = 0; n < 2048; ++n) {
      if (!rows(n)) continue;
      split_k_reference& o = ref[static_cast<std::size_t>(t) * 2048 + n];
      for (int s = 0; s < 9; ++s) {
        const int r = t * 9 + s, e = ids[r];
        double y = 0, ymag = 0;
        if (valid_expert(e)) {
          o.weight_sum += std::fabs(static_cast<double>(route_weights[r]));
          for (int part = 0; part < 2; ++part) {
            double h = 0;
            for (int b = 2 * part; b < 2 * part + 2; ++b) {
              double p = 0, a = 0;
              for (int k = 128 * b; k < 128 * b + 128; ++k) {
                const double prod = static_cast<double>(f32_from_e4m3(act[r * 512 + k])) * f32_from_e4m3(w.w2(e, n, k));
                p += prod;
                a += std::fabs(prod);
              }
              const double scale = static_cast<double>(act_scales[r * 4 + b]) * w.s2(e, n / 128, b);
              h += scale * p;
              ymag += std::fabs(scale) * a;
            }
            if (std::fabs(h) >= limit * (1 + std::ldexp(1.0, -9))) o.overflow = true;
            else if (std::fabs(h) >= limit * (1 - std::ldexp(1.0, -9))) o.ambiguous = true;
            y += h;
          }
        }
        o.value += static_cast<double>(route_weights[r]) * y;
        o.magnitude += std::fabs(static_cast<double>(route_weights[r])) * ymag;
      }
    }
  return ref;
}

/// The KParts 2 policy: NaN where the reference is NaN; non-finite where a partial overflows;
/// else |got - ref| <= 2^-8 |ref| + 2^-10 E + 2^-23 W + 2^-120. Ambiguous elements pass.
inline bool within_split_k_policy(const split_k_reference& ref, std::uint16_t got_bf16) {
  const double got = bf16_to_float(got_bf16);
  if (ref.ambiguous) return true;
  if (std::isnan(ref.value)) return std::isnan(got);
  if (ref.overflow) return !std::isfinite(got);
  if (!std::isfinite(got)) return false;
  const double bound = std::ldexp(std::fabs(ref.value), -8) + std::ldexp(ref.magnitude, -10) + std::ldexp(ref.weight_sum, -23) + std::ldexp(1.0, -120);
  return std::fabs(got - ref.value) <= bound;
}

}  // namespace netra::oracles
