// netra/kernels/gdn/precompute.hpp — contracts::gdn_precompute.
//
// Grid (4, B T); workgroup 256 threads = 8 groups of 32 lanes (gfx950: two groups per wave64,
// the butterfly masks 1..16 stay inside each half; sm90a: one warp per group), no LDS.
// Group g of workgroup (x, r) owns head slot s = 8 x + g of row r: s < 16 is q head s, else k head
// s - 16 (their channels are adjacent: 128 s .. 128 s + 127). Lane l of the group holds elements
// 4l .. 4l + 3 (one 8-byte load, one 16-byte store). Threads 0..7 of workgroup (x, r) also compute
// decay and beta of v head 8 x + thread (a, b read at row r's own row stride). The reduction tree is the contract's and is the same on
// both targets (32-lane groups).
#pragma once
#include "netra/contracts/gdn/precompute.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/kernels/gdn/precompute_math.hpp"

namespace netra::kernels {

template <class Contract> struct gdn_precompute_kernel {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_gdn_precompute";
  static constexpr u32 workgroup_size = 256;
  static constexpr bool programmatic_dependent_launch = false;
  static constexpr u32 group_lanes = gdn_precompute_math::group_lanes;
  static constexpr u32 groups_per_workgroup = workgroup_size / group_lanes;
  static constexpr u32 head_slots = 2 * gdn::heads_qk;
  static_assert(head_slots % groups_per_workgroup == 0 && gdn::heads_v == head_slots, "netra::kernels::gdn_precompute_kernel: mapping");

  struct params {
    const u16* y;
    i64 y_row_stride;
    const u16* a;
    i64 a_row_stride;  // elements
    const u16* b;
    i64 b_row_stride;
    const float* a_log;
    const float* dt_bias;
    float* q;
    float* k;
    float* decay;
    float* beta;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 rows) { return {{head_slots / groups_per_workgroup, rows, 1}, workgroup_size, 0}; }
  /// Head slot (0..15 q, 16..31 k) of group g of workgroup x.
  NETRA_HOST_DEVICE static constexpr u32 head_slot(u32 workgroup_x, u32 group) { return workgroup_x * groups_per_workgroup + group; }

  static NETRA_DEVICE void run(const params& p) {
    const u32 x = workgroup_id<target, 0>();
    const u64 row = workgroup_id<target, 1>();
    const u32 thread = thread_id<target>();
    const u32 lane = thread % group_lanes;
    const u32 s = head_slot(x, thread / group_lanes);

    const bool is_q = s < gdn::heads_qk;
    float o[4];
    gdn_precompute_math::head_values<target>(gdn_precompute_math::head_load(p.y + row * p.y_row_stride + s * gdn::key_dim, lane), is_q, o);
    float* out = (is_q ? p.q + s * gdn::key_dim : p.k + (s - gdn::heads_qk) * gdn::key_dim) + row * (gdn::heads_qk * gdn::key_dim) + 4 * lane;
    store_16B<target>(out, u32x4{bit_cast<u32>(o[0]), bit_cast<u32>(o[1]), bit_cast<u32>(o[2]), bit_cast<u32>(o[3])});

    if (thread < groups_per_workgroup) {
      const u32 hv = x * groups_per_workgroup + thread;
      const u64 at = row * gdn::heads_v + hv;
      const gdn_precompute_math::gates g =
          gdn_precompute_math::gates_of(p.a[row * p.a_row_stride + hv], p.b[row * p.b_row_stride + hv], p.a_log[hv], p.dt_bias[hv]);
      p.decay[at] = g.decay;
      p.beta[at] = g.beta;
    }
  }
};

template <class Target, u32 MaxBatch, u32 Tokens, u32 WaveSize> struct kernels_of<contracts::gdn_precompute<Target, MaxBatch, Tokens, WaveSize>> {
  using type = type_list<gdn_precompute_kernel<contracts::gdn_precompute<Target, MaxBatch, Tokens, WaveSize>>>;
};

}  // namespace netra::kernels
