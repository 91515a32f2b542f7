// netra/kernels/attention/gqa8_wave.hpp — what one wave of contracts::attention_gqa8's stage one
// does with its state, shared by both stagings (gqa8_stage_one.hpp: K/V through an LDS ring;
// gqa8_stage_one_direct.hpp: K/V loaded into registers): the slice a workgroup owns, its queries
// into LDS, and, over the wave's plan (gqa8_wave_plan.hpp: 1 or 2 query tokens per wave),
//   block_step  the online-softmax step of one block's scores per score row slot (netra's order,
//               dsl/online_softmax.hpp): mask (keep(i) false -> -inf), x score_scale, block max
//               over the plan's two row butterflies, BF16 weights P (pair words, the P V operand),
//               l = l alpha + the block's weight sum (lane items in order, then the butterflies),
//               alpha per o row slot (block_weights: the same step up to alpha per score row slot,
//               for a kernel whose o rows are its score rows: gqa8_stage_one_warpgroup.hpp);
//   finish      every wave's (m, l, o) into LDS (plan rows x 256 FP32 per wave, then (m, l) per row);
//               thread e of the workgroup merges the BlockWarps states of its (row, d) elements in
//               wave order and writes BF16 out (slices = 1) or the slice's (m, l, o) to the workspace
//               (write_rows, after the stores and a barrier).
#pragma once
#include "netra/dsl/attention_fragment.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/online_softmax.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/attention/block_weights.hpp"
#include "netra/kernels/attention/gqa8_geometry.hpp"
#include "netra/kernels/attention/gqa8_wave_plan.hpp"

namespace netra::kernels {

template <class Contract> struct attention_gqa8_wave {
  using target = typename Contract::target;
  using plan = gqa8_wave_plan_of<target, gqa8_tokens_per_wave<Contract>()>;
  static constexpr u32 R = plan::score_row_slots;

  /// The positions [start, end) of workgroup (slice, request b): chunk_for's slice of L_b.
  struct slice {
    attention_gqa8_request<Contract> r;
    i64 start, end;
    u32 blocks;  // of 64 positions
  };
  static NETRA_DEVICE slice slice_of(const attention_gqa8_args& p, u32 b, u32 index) {
    slice v;
    v.r = attention_gqa8_request<Contract>::read(p, b);
    const u32 chunk = Contract::chunk_for(static_cast<u32>(min_of(v.r.length, i64{1} << 30)), p.slices);
    v.start = static_cast<i64>(index) * chunk;
    v.end = min_of(v.start + chunk, v.r.length);
    v.blocks = v.start < v.end ? static_cast<u32>(ceil_div(v.end - v.start, i64{64})) : 0u;
    return v;
  }
  /// The workgroup's query chunk c: 16 bytes of row c / 32 (8 token + head of the KV group),
  /// head-dim elements 8 (c % 32) ...
  static NETRA_DEVICE const u16* query_chunk(const attention_gqa8_args& p, const attention_gqa8_request<Contract>& r, u32 kv_head, u32 c) {
    const u32 row = c / 32, t = row / Contract::group, rr = row % Contract::group;
    return p.q + (static_cast<u64>(r.first_token + t) * Contract::q_heads + kv_head * Contract::group + rr) * Contract::head_dim + 8 * (c % 32);
  }
  /// The workgroup's queries into LDS q [Tq][8][256] BF16 (token t, head kv_head * 8 + r).
  static NETRA_DEVICE void load_queries(const attention_gqa8_args& p, const attention_gqa8_request<Contract>& r, u32 kv_head, u16* q) {
    for (u32 c = thread_id<target>(); c < Contract::q_bytes / 16; c += Contract::workgroup_size)
      *reinterpret_cast<u32x4*>(q + 8 * c) = load_16B<target>(query_chunk(p, r, kv_head, c));
  }

  struct state {
    softmax_stats st[R];
    float o[plan::o_items] = {};
    u32 pb[plan::scores / 2] = {};
    float alpha_rows[plan::o_row_slots] = {};
    NETRA_DEVICE state() {
      NETRA_UNROLL
      for (u32 k = 0; k < R; ++k) st[k] = softmax_empty();
    }
  };

  /// The block step on the statistics and P words alone: alpha per score row slot (what a kernel
  /// whose o rows are its score rows applies as it is).
  template <class Keep, class Weight = weight_by_branch>
  static NETRA_DEVICE void block_weights(softmax_stats (&st)[R], u32 (&pb)[plan::scores / 2], float (&alpha)[R], float (&s)[plan::scores],
                                         float score_scale, Keep keep, Weight = {}) {
    attention_block_weights<target, plan, Weight>(st, pb, alpha, s, score_scale, lane_id<target>(), keep);
  }
  template <class Keep, class Weight = weight_by_branch>
  static NETRA_DEVICE void block_step(state& w, float (&s)[plan::scores], float score_scale, Keep keep, Weight weight = {}) {
    const u32 lane = lane_id<target>();
    float alpha[R];
    block_weights(w.st, w.pb, alpha, s, score_scale, keep, weight);
    NETRA_UNROLL
    for (u32 k = 0; k < plan::o_row_slots; ++k)
      w.alpha_rows[k] = plan::o_rows_are_score_rows
                            ? alpha[0]
                            : bit_cast<float>(wave_broadcast<target>(bit_cast<u32>(alpha[plan::o_row_score_slot(k)]), plan::stats_lane(plan::o_row(lane, k))));
  }
  /// o = o * alpha (before the block's P V) on the o items owns(i) (a BlockSplit warp's own).
  template <class Owns> static NETRA_DEVICE void rescale(state& w, Owns owns) {
    NETRA_UNROLL
    for (u32 i = 0; i < plan::o_items; ++i)
      if (owns(i)) w.o[i] = mul_rn(w.o[i], w.alpha_rows[plan::o_row_slot(i)]);
  }
  static NETRA_DEVICE void rescale(state& w) { rescale(w, [](u32) { return true; }); }

  /// After a workgroup barrier that ends every wave's use of `epilogue` (waves x plan rows x 256
  /// FP32) and `stats` (waves x plan rows x 2). Wave `wave` holds the plan::tokens query tokens
  /// from plan::tokens * (wave / BlockWarps).
  static NETRA_DEVICE void finish(const attention_gqa8_args& p, const attention_gqa8_request<Contract>& r, u32 b, u32 slice, u32 kv_head,
                                  float* epilogue, float* stats, const state& w, float v_scale) {
    finish(p, r, b, slice, kv_head, epilogue, stats, w, v_scale, wave_id<target>(), [](u32) { return true; }, true);
  }
  /// The same with the wave of the order given: its BlockSplit warps store the o items each owns
  /// (owns(i)) and one of them (writes_stats) the (m, l) all of them hold.
  template <class Owns>
  static NETRA_DEVICE void finish(const attention_gqa8_args& p, const attention_gqa8_request<Contract>& r, u32 b, u32 slice, u32 kv_head,
                                  float* epilogue, float* stats, const state& w, float v_scale, u32 wave, Owns owns, bool writes_stats) {
    const u32 lane = lane_id<target>();
    NETRA_UNROLL
    for (u32 i = 0; i < plan::o_items; ++i) {
      const fragment_element e = plan::o_of(lane, i);
      if (owns(i) && e.row < plan::rows) epilogue[(wave * plan::rows + e.row) * Contract::head_dim + e.col] = w.o[i];
    }
    NETRA_UNROLL
    for (u32 k = 0; k < R; ++k) {  // the first item of each score row slot names the slot's row
      if (!writes_stats) break;
      u32 first = 0;
      while (plan::score_row_slot(first) != k) ++first;
      const u32 my_row = plan::score_of(lane, first).row;
      if (my_row < plan::rows && plan::stats_lane(my_row) == lane) {
        stats[(wave * plan::rows + my_row) * 2] = w.st[k].m;
        stats[(wave * plan::rows + my_row) * 2 + 1] = w.st[k].l;
      }
    }
    workgroup_barrier<target>();
    write_rows(p, r, b, slice, kv_head, epilogue, stats, v_scale);
  }
  /// After the barrier that follows every wave's store of its (m, l, o) into `stats` / `epilogue`:
  /// thread e of the workgroup merges the BlockWarps states of its (row, d) elements in wave order
  /// and writes BF16 out (slices = 1) or the slice's (m, l, o) to the workspace.
  static NETRA_DEVICE void write_rows(const attention_gqa8_args& p, const attention_gqa8_request<Contract>& r, u32 b, u32 slice, u32 kv_head,
                                      const float* epilogue, const float* stats, float v_scale) {
    constexpr u32 BW = Contract::block_warps;
    // Workgroup row 8 t + h (token t, head h of the KV group) is row rr of wave group row / plan::rows.
    for (u32 e = thread_id<target>(); e < Contract::rows * Contract::head_dim; e += Contract::workgroup_size) {
      const u32 row = e / Contract::head_dim, d = e % Contract::head_dim, rr = row % plan::rows;
      const u32 t = row / Contract::group, hr = row % Contract::group, w0 = row / plan::rows * BW;
      softmax_stats m = {stats[(w0 * plan::rows + rr) * 2], stats[(w0 * plan::rows + rr) * 2 + 1]};
      float acc = epilogue[(w0 * plan::rows + rr) * Contract::head_dim + d];
      for (u32 k = w0 + 1; k < w0 + BW; ++k) {
        const softmax_merge_factors f = softmax_merge(m, {stats[(k * plan::rows + rr) * 2], stats[(k * plan::rows + rr) * 2 + 1]});
        acc = softmax_merge_value(acc, epilogue[(k * plan::rows + rr) * Contract::head_dim + d], f);
        m = f.merged;
      }
      if (p.slices == 1) {
        const u64 at = (static_cast<u64>(r.first_token + t) * Contract::q_heads + kv_head * Contract::group + hr) * Contract::head_dim + d;
        p.out[at] = static_cast<u16>(pack_bf16x2<target>(softmax_finish(acc, m.l, v_scale), 0.0f));
      } else {
        const u64 unit = (static_cast<u64>(b) * p.slices + slice) * Contract::kv_heads + kv_head;
        p.split_o[(unit * Contract::rows + row) * Contract::head_dim + d] = acc;
        if (d == 0) p.split_stats[(unit * Contract::rows + row) * 2] = m.m, p.split_stats[(unit * Contract::rows + row) * 2 + 1] = m.l;
      }
    }
  }
};

}  // namespace netra::kernels
