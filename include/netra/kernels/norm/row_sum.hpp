// netra/kernels/norm/row_sum.hpp — a norm row's sum of squares in the contract's order
// (contracts/norm/norm.hpp "sum") from each thread's slice partials, for every mapping of
// kernels/norm/rms_norm.hpp: the butterfly stages of masks 1 .. G / 2 over slice q = j + T_r p
// (lane bits by shuffles, the thread's own bits, masks >= T_r, by adds), then for S = 64 the stage
// of mask G (R_0 + R_1): in the thread (warp32, one warp per row), across the wave's halves
// (wave64) or through LDS [R][2] and one barrier (two warps per row).
#pragma once
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/workgroup_barrier.hpp"

namespace netra::kernels {

template <class Contract> struct norm_row_sum {
  using target = typename Contract::target;
  static constexpr u32 per_thread = Contract::slices_per_thread, threads_per_row = Contract::threads_per_row, wave = target::wave_size;

  static NETRA_DEVICE float of(float (&part)[per_thread], u32 thread) {
NETRA_UNROLL
    for (u32 mask = 1; mask < Contract::half; mask <<= 1) {
      const u32 d = mask / threads_per_row;  // 0: a lane stage
NETRA_UNROLL
      for (u32 p = 0; p < per_thread; ++p) {
        if (d == 0) part[p] = add_rn(part[p], xor_shuffle_f32<target>(part[p], mask));
        else if ((p & d) == 0 && p + d < per_thread) part[p] = add_rn(part[p], part[p + d]);
      }
    }
    if constexpr (Contract::slices == Contract::half) return part[0];
    else if constexpr (threads_per_row <= Contract::half) {  // R_1 in the thread (warp32, one warp per row)
      return add_rn(part[0], part[Contract::half / threads_per_row]);
    } else if constexpr (wave > Contract::half) {  // wave64: the last stage across the wave's halves
      return add_rn(part[0], xor_shuffle_f32<target>(part[0], Contract::half));
    } else {  // two warps per row: each warp's R through LDS
      NETRA_SHARED float halves[Contract::rows_per_workgroup][2];
      const u32 r = thread / threads_per_row, w = (thread % threads_per_row) / wave;
      if (lane_id<target>() == 0) halves[r][w] = part[0];
      workgroup_barrier<target>();
      return add_rn(halves[r][0], halves[r][1]);
    }
  }
};

}  // namespace netra::kernels
