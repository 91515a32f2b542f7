// netra/kernels/attention/gqa8_wave.hpp — what one wave of contracts::attention_gqa8's stage one
// does with its state, shared by both stagings (gqa8_stage_one.hpp: K/V through an LDS ring;
// gqa8_stage_one_direct.hpp: K/V loaded into registers): the slice a workgroup owns, its queries
// into LDS, and
//   block_step  the online-softmax step of one block's scores (netra's order, dsl/online_softmax.hpp):
//               mask (keep(i) false -> -inf), x score_scale, block max over the plan's two row
//               butterflies, BF16 weights P (pair words, the P V operand), l = l alpha + the block's
//               weight sum (lane items in order, then the butterflies), alpha per o row slot;
//   finish      every wave's (m, l, o) into LDS (rows x 256 FP32 per wave, then (m, l) per row);
//               thread e of the workgroup merges the BlockWarps states of its (row, d) elements in
//               wave order and writes BF16 out (slices = 1) or the slice's (m, l, o) to the workspace.
#pragma once
#include "netra/dsl/attention_fragment.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/online_softmax.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/attention/gqa8_geometry.hpp"

namespace netra::kernels {

template <class Contract> struct attention_gqa8_wave {
  using target = typename Contract::target;
  using plan = attention_plan_of<target>;

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
  /// The workgroup's queries into LDS q [Tq][8][256] BF16 (token t, head kv_head * 8 + r).
  static NETRA_DEVICE void load_queries(const attention_gqa8_args& p, const attention_gqa8_request<Contract>& r, u32 kv_head, u16* q) {
    for (u32 c = thread_id<target>(); c < Contract::q_bytes / 16; c += Contract::workgroup_size) {
      const u32 row = c / 32, t = row / plan::rows, rr = row % plan::rows;
      const u16* src = p.q + (static_cast<u64>(r.first_token + t) * Contract::q_heads + kv_head * Contract::group + rr) * Contract::head_dim + 8 * (c % 32);
      *reinterpret_cast<u32x4*>(q + 8 * c) = load_16B<target>(src);
    }
  }

  struct state {
    softmax_stats st = softmax_empty();
    float o[plan::o_items] = {};
    u32 pb[plan::scores / 2] = {};
    float alpha_rows[plan::o_row_slots] = {};
  };

  template <class Keep> static NETRA_DEVICE void block_step(state& w, float (&s)[plan::scores], float score_scale, Keep keep) {
    const u32 lane = lane_id<target>();
    float m_block = negative_infinity();
    NETRA_UNROLL
    for (u32 i = 0; i < plan::scores; ++i) {
      s[i] = keep(i, plan::score_of(lane, i)) ? mul_rn(s[i], score_scale) : negative_infinity();
      m_block = max_of(m_block, s[i]);
    }
    m_block = max_of(m_block, xor_shuffle_f32<target>(m_block, plan::row_mask(0)));
    m_block = max_of(m_block, xor_shuffle_f32<target>(m_block, plan::row_mask(1)));
    const float m_new = max_of(w.st.m, m_block);
    float l_block = 0.0f;
    NETRA_UNROLL
    for (u32 k = 0; k < plan::scores / 2; ++k) {
      w.pb[k] = pack_bf16x2<target>(softmax_weight(s[2 * k], m_new), softmax_weight(s[2 * k + 1], m_new));
      l_block = add_rn(l_block, f32_from_bf16(static_cast<u16>(w.pb[k])));
      l_block = add_rn(l_block, f32_from_bf16(static_cast<u16>(w.pb[k] >> 16)));
    }
    l_block = add_rn(l_block, xor_shuffle_f32<target>(l_block, plan::row_mask(0)));
    l_block = add_rn(l_block, xor_shuffle_f32<target>(l_block, plan::row_mask(1)));
    const softmax_merge_factors f = softmax_merge(w.st, {m_new, l_block});
    w.st = f.merged;
    NETRA_UNROLL
    for (u32 k = 0; k < plan::o_row_slots; ++k)
      w.alpha_rows[k] = plan::o_rows_are_score_rows ? f.alpha
                                                    : bit_cast<float>(wave_broadcast<target>(bit_cast<u32>(f.alpha), plan::stats_lane(plan::o_row(lane, k))));
  }
  /// o = o * alpha (before the block's P V).
  static NETRA_DEVICE void rescale(state& w) {
    NETRA_UNROLL
    for (u32 i = 0; i < plan::o_items; ++i) w.o[i] = mul_rn(w.o[i], w.alpha_rows[plan::o_row_slot(i)]);
  }

  /// After a workgroup barrier that ends every wave's use of `epilogue` (waves x rows x 256 FP32)
  /// and `stats` (waves x rows x 2). Wave `wave` holds query token wave / BlockWarps.
  static NETRA_DEVICE void finish(const attention_gqa8_args& p, const attention_gqa8_request<Contract>& r, u32 b, u32 slice, u32 kv_head,
                                  float* epilogue, float* stats, const state& w, float v_scale) {
    constexpr u32 BW = Contract::block_warps;
    const u32 wave = wave_id<target>(), lane = lane_id<target>();
    NETRA_UNROLL
    for (u32 i = 0; i < plan::o_items; ++i) {
      const fragment_element e = plan::o_of(lane, i);
      if (e.row < plan::rows) epilogue[(wave * plan::rows + e.row) * Contract::head_dim + e.col] = w.o[i];
    }
    const u32 my_row = plan::score_of(lane, 0).row;
    if (my_row < plan::rows && plan::stats_lane(my_row) == lane) {
      stats[(wave * plan::rows + my_row) * 2] = w.st.m;
      stats[(wave * plan::rows + my_row) * 2 + 1] = w.st.l;
    }
    workgroup_barrier<target>();
    for (u32 e = thread_id<target>(); e < Contract::rows * Contract::head_dim; e += Contract::workgroup_size) {
      const u32 row = e / Contract::head_dim, d = e % Contract::head_dim, t = row / plan::rows, rr = row % plan::rows;
      const u32 w0 = t * BW;
      softmax_stats m = {stats[(w0 * plan::rows + rr) * 2], stats[(w0 * plan::rows + rr) * 2 + 1]};
      float acc = epilogue[(w0 * plan::rows + rr) * Contract::head_dim + d];
      for (u32 k = w0 + 1; k < w0 + BW; ++k) {
        const softmax_merge_factors f = softmax_merge(m, {stats[(k * plan::rows + rr) * 2], stats[(k * plan::rows + rr) * 2 + 1]});
        acc = softmax_merge_value(acc, epilogue[(k * plan::rows + rr) * Contract::head_dim + d], f);
        m = f.merged;
      }
      if (p.slices == 1) {
        const u64 at = (static_cast<u64>(r.first_token + t) * Contract::q_heads + kv_head * Contract::group + rr) * Contract::head_dim + d;
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
