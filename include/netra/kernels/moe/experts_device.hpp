// netra/kernels/moe/experts_device.hpp — device steps the decode expert kernels share: the
// route scan (which routes share an expert, in route order) and the BF16 -> E4M3 helpers of the
// hidden quantization. (The block-scaled products are dsl/fragment/block_scaled.hpp's.)
#pragma once
#include "netra/dsl/convert.hpp"
#include "netra/dsl/fp8_pack.hpp"
#include "netra/dsl/strong_load.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/fragment/block_scaled.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/wave_vote.hpp"
#include "netra/kernels/moe/experts_fragment.hpp"

namespace netra::kernels::moe_experts {

/// Element `i` of a small register array with a run-time index, as selects (no local memory).
template <class T, u32 N> NETRA_DEVICE T select(const T (&a)[N], u32 i) {
  T r = a[0];
  NETRA_UNROLL
  for (u32 j = 1; j < N; ++j) r = i == j ? a[j] : r;
  return r;
}

template <u32 Wants> struct route_scan {
  i32 expert;        // ids[first]
  bool earlier;      // some route before `first` has the expert
  u32 earlier_count; // how many routes before `first` have it (the occurrence index of `first`)
  u32 count;         // routes >= first that have the expert
  u32 route[Wants];  // route of the want[i]-th of those (route order), or no_route
};

/// The route metadata of a call in registers: id[it] of lane l is ids[it * W + l] (-1 past
/// `routes`). Strong loads: they may run before wait_for_prerequisites() (dsl/sync.hpp).
template <class Target, u32 MaxRoutes> struct route_ids {
  static constexpr u32 iterations = ceil_div(MaxRoutes, Target::wave_size);
  i32 id[iterations];
};

/// Every lane of the wave loads the ids once (one round trip: all loads issued before any use).
template <class Target, u32 MaxRoutes> NETRA_DEVICE route_ids<Target, MaxRoutes> load_route_ids(const i32* ids, u32 routes) {
  constexpr u32 W = Target::wave_size;
  const u32 lane = lane_id<Target>();
  route_ids<Target, MaxRoutes> r;
  NETRA_UNROLL
  for (u32 it = 0; it < route_ids<Target, MaxRoutes>::iterations; ++it) {
    const u32 i = it * W + lane;
    r.id[it] = i < routes ? static_cast<i32>(load_u32_strong<Target>(ids + i)) : -1;
  }
  return r;
}

/// Answers from ids in registers (no memory access; every lane of the wave calls it), for
/// expert e = ids[first]: whether an earlier route has it and how many do, how many routes >=
/// first have it, and the route of each of the lane's wanted column indices (want[i]-th such
/// route in route order). Only the first ceil(routes / W) register rows are scanned: the rows
/// past them hold -1, which matches no valid expert (for an invalid e the answers are unused).
template <class Target, u32 MaxRoutes, u32 Wants>
NETRA_DEVICE route_scan<Wants> scan_loaded_routes(const route_ids<Target, MaxRoutes>& ids, u32 routes, u32 first, const u32 (&want)[Wants]) {
  constexpr u32 W = Target::wave_size;
  const u32 lane = lane_id<Target>();
  route_scan<Wants> r;
  r.expert = static_cast<i32>(target_ops<Target>::broadcast(static_cast<u32>(select(ids.id, first / W)), first % W));
  r.earlier = false;
  r.earlier_count = 0;
  r.count = 0;
  NETRA_UNROLL
  for (u32 w = 0; w < Wants; ++w) r.route[w] = no_route;
  NETRA_UNROLL
  for (u32 it = 0; it < route_ids<Target, MaxRoutes>::iterations; ++it) {
    if (it * W >= routes) break;  // uniform
    const u32 i = it * W + lane;
    const bool match = ids.id[it] == r.expert;
    const u64 before = wave_ballot<Target>(match && i < first);
    const u64 mine = wave_ballot<Target>(match && i >= first);
    r.earlier = r.earlier || before != 0;
    r.earlier_count += mask_popcount<Target>(before);
    const u32 n = mask_popcount<Target>(mine);
    NETRA_UNROLL
    for (u32 w = 0; w < Wants; ++w) {
      const u32 rel = want[w] - r.count;
      if (want[w] >= r.count && rel < n) r.route[w] = it * W + mask_nth_set<Target>(mine, rel);
    }
    r.count += n;
  }
  return r;
}

/// Reads ids[0 .. routes) once (load_route_ids) and scans them (scan_loaded_routes).
template <class Target, u32 MaxRoutes, u32 Wants>
NETRA_DEVICE route_scan<Wants> scan_routes(const i32* ids, u32 routes, u32 first, const u32 (&want)[Wants]) {
  return scan_loaded_routes<Target, MaxRoutes>(load_route_ids<Target, MaxRoutes>(ids, routes), routes, first, want);
}

/// Largest BF16 magnitude (bits & 0x7FFF, as integers: NaN > +Inf > finite) of the 8 values of a
/// 16-byte piece half.
NETRA_HOST_DEVICE constexpr u32 bf16x8_magnitude(const u32x4& v) {
  u32 m = 0;
  for (u32 i = 0; i < 4; ++i) {
    const u32 lo = v[static_cast<int>(i)] & 0x7FFFu, hi = (v[static_cast<int>(i)] >> 16) & 0x7FFFu;
    m = max_of(m, max_of(lo, hi));
  }
  return m;
}

/// Four FP8 bytes (memory order; Format: dsl/fp8_format.hpp) of BF16 values (lo0, hi0) of word w0
/// and (lo1, hi1) of w1, each multiplied by r (mul_rn) first.
template <class Target, class Format = fp8::e4m3fn> NETRA_DEVICE u32 e4m3x4_of_bf16_scaled(u32 w0, u32 w1, float r) {
  const u32 p0 = pack_fp8x2<Format, Target>(mul_rn(bit_cast<float>(w0 << 16), r), mul_rn(bit_cast<float>(w0 & 0xFFFF0000u), r));
  const u32 p1 = pack_fp8x2<Format, Target>(mul_rn(bit_cast<float>(w1 << 16), r), mul_rn(bit_cast<float>(w1 & 0xFFFF0000u), r));
  return p0 | (p1 << 16);
}

}  // namespace netra::kernels::moe_experts
