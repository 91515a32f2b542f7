// netra/kernels/attention/gqa8_stage_two.hpp — stage two of contracts::attention_gqa8 (split calls
// only, slices > 1): merges the slices' (m, l, o) of one (request, KV head, row) in slice order
// 0, 1, ..., slices - 1 (dsl/online_softmax.hpp; the causal verify block ends the last slice) and
// writes out = bf16(o / l * v_scale). The loads of 16 slices are issued before they are merged.
// Grid (2 * rows, batch); 256 threads, thread d owns head-dim element d of its row. Requests whose
// query extent stage one refused are skipped here too.
#pragma once
#include "netra/dsl/convert.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/online_softmax.hpp"
#include "netra/kernels/attention/gqa8_geometry.hpp"

namespace netra::kernels {

template <class Contract> struct attention_gqa8_stage_two {
  using target = typename Contract::target;
  using params = attention_gqa8_args;
  static constexpr const char* symbol = "netra_attention_gqa8_stage_two";
  static constexpr u32 workgroup_size = Contract::head_dim;
  static constexpr bool programmatic_dependent_launch = false;
  static constexpr u32 batch = 16;  // slices whose loads are in flight together

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) { return {{Contract::kv_heads * Contract::rows, batch, 1}, workgroup_size, 0}; }

  static NETRA_DEVICE void run(const params& p) {
    const u32 unit_row = workgroup_id<target, 0>(), b = workgroup_id<target, 1>(), d = thread_id<target>();
    const u32 kv_head = unit_row / Contract::rows, row = unit_row % Contract::rows;
    const attention_gqa8_request<Contract> r = attention_gqa8_request<Contract>::read(p, b);
    if (!r.writable) return;
    auto at = [&](u32 s) { return (static_cast<u64>(b) * p.slices + s) * Contract::kv_heads + kv_head; };
    softmax_stats m = {p.split_stats[(at(0) * Contract::rows + row) * 2], p.split_stats[(at(0) * Contract::rows + row) * 2 + 1]};
    float acc = p.split_o[(at(0) * Contract::rows + row) * Contract::head_dim + d];
    // Slices in batches: a batch's loads are issued together, then merged in slice order.
    for (u32 s0 = 1; s0 < p.slices; s0 += batch) {
      float sm[batch], sl[batch], so[batch];
      NETRA_UNROLL
      for (u32 i = 0; i < batch; ++i) {
        const u64 u = at(min_of(s0 + i, p.slices - 1)) * Contract::rows + row;
        sm[i] = p.split_stats[u * 2], sl[i] = p.split_stats[u * 2 + 1], so[i] = p.split_o[u * Contract::head_dim + d];
      }
      NETRA_UNROLL
      for (u32 i = 0; i < batch; ++i)
        if (s0 + i < p.slices) {
          const softmax_merge_factors f = softmax_merge(m, {sm[i], sl[i]});
          acc = softmax_merge_value(acc, so[i], f);
          m = f.merged;
        }
    }
    const u32 t = row / Contract::group, h = kv_head * Contract::group + row % Contract::group;
    p.out[(static_cast<u64>(r.first_token + t) * Contract::q_heads + h) * Contract::head_dim + d] =
        static_cast<u16>(pack_bf16x2<target>(softmax_finish(acc, m.l, *p.v_scale), 0.0f));
  }
};

}  // namespace netra::kernels
