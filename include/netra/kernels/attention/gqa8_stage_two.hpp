// netra/kernels/attention/gqa8_stage_two.hpp — stage two of contracts::attention_gqa8 (split calls
// only, slices > 1): merges the slices' (m, l, o) of one (request, KV head, row) in slice order
// 0, 1, ..., slices - 1 (dsl/online_softmax.hpp; the causal verify block ends the last slice) and
// writes out = bf16(o / l * v_scale).
// The chain's scalars are taken apart from its values, with softmax_merge's operations (so the same
// bits as merging state by state): thread 0 forms the running maxima M_s = max_of(M_{s-1}, m_s),
// then thread s forms slice s's factors (alpha_s, beta_s) = softmax_merge's of (M_{s-1}, m_s), all
// slices at once; each thread then runs only the products and sums x = x alpha_s + x_s beta_s of
// its element's o (and of l), with the o of 32 slices in flight while 32 are merged.
// Grid (2 * rows, batch); 256 threads, thread d owns head-dim element d of its row; LDS: (m, l, M,
// alpha, beta) per slice (SplitCapacity of each). Requests whose query extent stage one refused are
// skipped here too. Its first workspace read follows wait_for_prerequisites (dsl/sync.hpp): with a
// programmatic launch (decode) it starts while stage one drains, else the wait is a no-op.
#pragma once
#include "netra/dsl/convert.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/online_softmax.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/attention/gqa8_geometry.hpp"

namespace netra::kernels {

/// The running maxima of a chain of merges in slice order: running[0] = m[0], running[s] =
/// max_of(running[s - 1], m[s]) (softmax_merge's maximum, the same left fold; max_of(x, x) is x),
/// reading 16 maxima at a time ahead of the fold.
NETRA_HOST_DEVICE void gqa8_running_max(const float* m, float* running, u32 slices) {
  constexpr u32 ahead = 16;
  float at = m[0];
  for (u32 s0 = 0; s0 < slices; s0 += ahead) {
    float x[ahead];
    NETRA_UNROLL
    for (u32 i = 0; i < ahead; ++i) x[i] = m[min_of(s0 + i, slices - 1)];
    NETRA_UNROLL
    for (u32 i = 0; i < ahead; ++i)
      if (s0 + i < slices) running[s0 + i] = at = max_of(at, x[i]);
  }
}
/// Slice s's factors (s >= 1) in that chain: what softmax_merge(state of slices 0..s-1, slice s)
/// applies to each side (the rescales depend on the maxima only).
NETRA_HOST_DEVICE void gqa8_slice_factors(const float* m, const float* running, float* alpha, float* beta, u32 s) {
  const softmax_merge_factors f = softmax_merge({running[s - 1], 0.0f}, {m[s], 0.0f});
  alpha[s] = f.alpha, beta[s] = f.beta;
}
/// One step of the chain on an l or an o: a alpha + b beta (softmax_merge's products and sum).
NETRA_HOST_DEVICE float gqa8_merge_step(float a, float b, float alpha, float beta) {
  return softmax_merge_value(a, b, {{0.0f, 0.0f}, alpha, beta});
}

template <class Contract> struct attention_gqa8_stage_two {
  using target = typename Contract::target;
  using params = attention_gqa8_args;
  static constexpr const char* symbol = "netra_attention_gqa8_stage_two";
  static constexpr u32 workgroup_size = Contract::head_dim;
  /// Decode's stage one releases it before its epilogue (gqa8_stage_one_direct.hpp); verify's
  /// waiting workgroups measured costly beside its stage one (docs/kernels/attention.md).
  static constexpr bool programmatic_dependent_launch = Contract::tq == 1;
  static constexpr u32 ahead = 32;  // slices whose o loads are in flight together
  static constexpr u32 max_slices = Contract::split_capacity;

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) { return {{Contract::kv_heads * Contract::rows, batch, 1}, workgroup_size, 0}; }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED float m[max_slices], l[max_slices], running[max_slices], alpha[max_slices], beta[max_slices];
    const u32 unit_row = workgroup_id<target, 0>(), b = workgroup_id<target, 1>(), d = thread_id<target>();
    const u32 kv_head = unit_row / Contract::rows, row = unit_row % Contract::rows, n = p.slices;
    const attention_gqa8_request<Contract> r = attention_gqa8_request<Contract>::read(p, b);
    if (!r.writable) return;  // uniform over the workgroup
    wait_for_prerequisites<target>();  // stage one has completed: its workspace is visible
    // The workspace is [batch][slices][kv_heads][rows] units (o: head_dim floats each, stats: 2), so
    // slice s of this row is `slice_units` units past slice 0: one base pointer and constant strides
    // (a batch's loads take immediate offsets; slices past the last are not loaded, never merged).
    constexpr u32 slice_units = Contract::kv_heads * Contract::rows;
    const u64 unit0 = (static_cast<u64>(b) * n * Contract::kv_heads + kv_head) * Contract::rows + row;
    const float* o_at = p.split_o + unit0 * Contract::head_dim + d;
    const float* stats_at = p.split_stats + unit0 * 2;
    auto load = [&](float (&o)[ahead], u32 s0) {
      const float* at = o_at + static_cast<u64>(s0) * slice_units * Contract::head_dim;
      NETRA_UNROLL
      for (u32 i = 0; i < ahead; ++i) o[i] = s0 + i < n ? at[i * slice_units * Contract::head_dim] : 0.0f;
    };
    float cur[ahead], next[ahead] = {};
    load(cur, 0);
    for (u32 s = d; s < n; s += workgroup_size) m[s] = stats_at[s * slice_units * 2], l[s] = stats_at[s * slice_units * 2 + 1];
    workgroup_barrier<target>();
    if (d == 0) gqa8_running_max(m, running, n);
    workgroup_barrier<target>();
    for (u32 s = d; s < n; s += workgroup_size)
      if (s > 0) gqa8_slice_factors(m, running, alpha, beta, s);
    workgroup_barrier<target>();
    float acc = cur[0], sum = l[0];
    for (u32 s0 = 0; s0 < n; s0 += ahead) {
      if (s0 + ahead < n) load(next, s0 + ahead);  // uniform
      NETRA_UNROLL
      for (u32 i = 0; i < ahead; ++i) {
        const u32 s = s0 + i;
        if (s > 0 && s < n) acc = gqa8_merge_step(acc, cur[i], alpha[s], beta[s]), sum = gqa8_merge_step(sum, l[s], alpha[s], beta[s]);
      }
      NETRA_UNROLL
      for (u32 i = 0; i < ahead; ++i) cur[i] = next[i];
    }
    const u32 t = row / Contract::group, h = kv_head * Contract::group + row % Contract::group;
    p.out[(static_cast<u64>(r.first_token + t) * Contract::q_heads + h) * Contract::head_dim + d] =
        static_cast<u16>(pack_bf16x2<target>(softmax_finish(acc, sum, *p.v_scale), 0.0f));
  }
};

}  // namespace netra::kernels
