// netra/kernels/gdn/dot_tree.hpp — the recurrent core's dot products in the contract's order
// (contracts/gdn/model.hpp): per row group of 32 rows a partial chain x[0] y[0], then fma in
// increasing row order; the four partials combined (p0 + p1) + (p2 + p3), in-lane where a lane
// holds both, else by xor shuffles at N and 2 N (N = ColumnLanes). `fused_pass` walks a row group
// once for the decay, the k dot of the decayed state and (optionally) the q dot of the state
// before the decay: the same operations on the same values as the separate passes.
#pragma once
#include "netra/dsl/math.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"

namespace netra::kernels {
template <class Target, u32 ColumnLanes, u32 GroupsPerLane> struct gdn_dot {
  static constexpr u32 rows = 32;
  /// x[0] y[0], then fma in increasing row order.
  static NETRA_DEVICE float chain(const float (&x)[rows], const float (&y)[rows]) {
    float p = mul_rn(x[0], y[0]);
    NETRA_UNROLL
    for (u32 i = 1; i < rows; ++i) p = fma_rn(x[i], y[i], p);
    return p;
  }
  /// s <- a s (mul); pk = chain(s, k) of the decayed state; WithQ: pq = chain(s, q) of the state before.
  template <bool WithQ> static NETRA_DEVICE void fused_pass(float (&s)[rows], float a, const float (&k)[rows], const float (&q)[rows], float& pk, float& pq) {
    if constexpr (WithQ) pq = mul_rn(s[0], q[0]);
    s[0] = mul_rn(a, s[0]);
    pk = mul_rn(s[0], k[0]);
    NETRA_UNROLL
    for (u32 i = 1; i < rows; ++i) {
      if constexpr (WithQ) pq = fma_rn(s[i], q[i], pq);
      s[i] = mul_rn(a, s[i]);
      pk = fma_rn(s[i], k[i], pk);
    }
  }
  /// (p0 + p1) + (p2 + p3) from this lane's partials and its partners' (xor N, xor 2 N).
  static NETRA_DEVICE float tree(const float (&p)[GroupsPerLane]) {
    if constexpr (GroupsPerLane == 4) return add_rn(add_rn(p[0], p[1]), add_rn(p[2], p[3]));
    else if constexpr (GroupsPerLane == 2) {
      const float pair = add_rn(p[0], p[1]);
      return add_rn(pair, xor_shuffle_f32<Target>(pair, ColumnLanes));
    } else {
      const float pair = add_rn(p[0], xor_shuffle_f32<Target>(p[0], ColumnLanes));
      return add_rn(pair, xor_shuffle_f32<Target>(pair, 2 * ColumnLanes));
    }
  }
  static NETRA_DEVICE void load_rows(const float* base, float (&x)[rows]) {
    NETRA_UNROLL
    for (u32 v = 0; v < rows / 4; ++v) {
      const u32x4 w = load_16B<Target>(base + 4 * v);
      x[4 * v] = bit_cast<float>(w.x), x[4 * v + 1] = bit_cast<float>(w.y);
      x[4 * v + 2] = bit_cast<float>(w.z), x[4 * v + 3] = bit_cast<float>(w.w);
    }
  }
};
}  // namespace netra::kernels
