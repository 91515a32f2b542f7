// netra/kernels/attention/extend.hpp — the kernels of contracts::attention_gqa4_extend, in launch
// order: stage zero pads the queries into the pair view, the GQA8 stage one
// (gqa8_stage_one.hpp) computes every slice's prefix (m, l, o) over the view, stage two merges the
// slices and the causal BF16 extension block and writes out.
//
// Stage zero. Grid (12, batch), 256 threads; workgroup (t, b) writes the view's token 12 b + t:
// 32 heads x 256 BF16, head h's half (h % 8) / 4 its query (token qo_indptr[b] + t when t < E_b),
// everything else 0; thread 0 writes the view's qo_indptr entry b + 1 = 12 (b + 1) (and entry 0).
// Stage two. Grid (8 KV heads, 12, batch), 128 threads (the wide form 512: thread (j, d)); workgroup
// (kv, t, b) owns extension token t of request b for the 4 heads of KV head kv, thread d head-dim
// element d. The 4 (t + 1) scores q_h . kext_j are FP32 sums in d order (one thread each, operands
// from LDS); each thread merges its element's slices in slice order (the forms below differ only
// in how many loads are in flight), scales o by v_scale and takes the extension block as one
// online-softmax step (dsl/online_softmax.hpp): FP32 weights, l and o summed in j order.
#pragma once
#include "netra/contracts/attention/gqa4_extend.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/online_softmax.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/attention/gqa8.hpp"

namespace netra::kernels {

/// Arguments of the extend kernels: the view's call (stage one's arguments) and the real tensors.
struct attention_extend_args {
  attention_gqa8_args view;  // q, qo_indptr: the padded view in the workspace; out unused
  const u16* q;              // [q_tokens, 32, 128] BF16
  u16* out;                  // [q_tokens, 32, 128] BF16
  const u16* k_extend;       // [q_tokens, 8, 128] BF16
  const u16* v_extend;       // [q_tokens, 8, 128] BF16
  const i64* qo_indptr;      // [batch + 1]
  u16* q_pad;                // [batch * 12, 32, 256] BF16 (view.q)
  i64* qo_pad;               // [batch + 1] (view.qo_indptr)
  i64 q_tokens;
};

/// Request b's extension: its first token and length, and whether the call writes it.
struct extend_request {
  i64 first, count;
  bool writable;
  NETRA_HOST_DEVICE static extend_request read(const attention_extend_args& a, u32 b, u32 max_extend) {
    extend_request r;
    r.first = a.qo_indptr[b];
    r.count = a.qo_indptr[b + 1] - r.first;
    r.writable = r.count >= 1 && r.count <= max_extend && r.first >= 0 && r.first + r.count <= a.q_tokens;
    return r;
  }
};

template <class Contract> struct attention_extend_stage_zero {
  using target = typename Contract::target;
  using params = attention_extend_args;
  static constexpr const char* symbol = "netra_attention_extend_stage_zero";
  static constexpr u32 workgroup_size = 256;
  static constexpr bool programmatic_dependent_launch = false;
  static constexpr u32 chunks = Contract::q_heads * 256 / 8;  // 16-byte chunks of one view token

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) { return {{Contract::max_extend, batch, 1}, workgroup_size, 0}; }

  static NETRA_DEVICE void run(const params& p) {
    const u32 t = workgroup_id<target, 0>(), b = workgroup_id<target, 1>();
    const extend_request r = extend_request::read(p, b, Contract::max_extend);
    const bool has = r.writable && t < r.count;
    const u64 view_token = static_cast<u64>(b) * Contract::max_extend + t;
    for (u32 c = thread_id<target>(); c < chunks; c += workgroup_size) {
      const u32 h = c / 32, piece = c % 32;
      u32x4 v = {0, 0, 0, 0};
      if (has && piece / 16 == (h % 8) / 4)
        v = load_16B<target>(p.q + (static_cast<u64>(r.first + t) * Contract::q_heads + h) * Contract::head_dim + 8 * (piece % 16));
      *reinterpret_cast<u32x4*>(p.q_pad + (view_token * Contract::q_heads + h) * 256 + 8 * piece) = v;
    }
    if (thread_id<target>() == 0 && t == 0) {
      p.qo_pad[b + 1] = static_cast<i64>(b + 1) * Contract::max_extend;
      if (b == 0) p.qo_pad[0] = 0;
    }
  }
};

/// Stage two's forms (the same order and bits in each): sequential, 128 threads, thread d merges
/// its 4 rows one after another, one slice's (m, l, o) load at a time (31 registers on sm90a);
/// batched, 128 threads, the 4 rows side by side, the loads of Ahead slices issued before they
/// merge (127 registers; not launched by dispatch: timed by bench/attention_extend.py); wide, 512
/// threads, thread (j, d) owns row j's element d, Ahead slices' loads ahead and the extension's V
/// loads issued before its sums (launched from wide_slices slices on: B = 1's call is the merge
/// chain's latency, while where the batch sets the time the sequential form's occupancy wins).
enum class extend_stage_two_form : u32 { sequential, batched, wide };

template <class Contract, extend_stage_two_form Form = extend_stage_two_form::sequential> struct attention_extend_stage_two {
  using target = typename Contract::target;
  using view = typename Contract::pair_view;
  using params = attention_extend_args;
  static constexpr bool batched = Form == extend_stage_two_form::batched, wide = Form == extend_stage_two_form::wide;
  static constexpr const char* symbol =
      batched ? "netra_attention_extend_stage_two_batched" : wide ? "netra_attention_extend_stage_two_wide" : "netra_attention_extend_stage_two";
  static constexpr u32 G = Contract::group, D = Contract::head_dim, E = Contract::max_extend, Ahead = 8;
  static constexpr u32 workgroup_size = wide ? G * D : D, rows = wide ? 1 : G;  // rows: the thread's merge chains
  static constexpr bool programmatic_dependent_launch = false;
  static constexpr u32 wide_slices = 16;

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) { return {{Contract::kv_heads, E, batch}, workgroup_size, 0}; }

  /// m[c], o[c]: the merged prefix state of row (t, 4 half + j0 + c), element 128 half + d, in slice order.
  template <class Unit>
  static NETRA_DEVICE void merge_ahead(softmax_stats (&m)[rows], float (&o)[rows], const params& p, Unit unit, u32 half, u32 d, u32 j0) {
    NETRA_UNROLL
    for (u32 j = 0; j < rows; ++j) {
      const u64 at = unit(0, j0 + j);
      m[j] = {p.view.split_stats[at * 2], p.view.split_stats[at * 2 + 1]}, o[j] = p.view.split_o[at * view::head_dim + D * half + d];
    }
    for (u32 first = 1; first < p.view.slices; first += Ahead) {
      softmax_stats sm[Ahead][rows] = {};
      float so[Ahead][rows] = {};
      NETRA_UNROLL
      for (u32 k = 0; k < Ahead; ++k)
        NETRA_UNROLL
        for (u32 j = 0; j < rows; ++j)
          if (first + k < p.view.slices) {
            const u64 at = unit(first + k, j0 + j);
            sm[k][j] = {p.view.split_stats[at * 2], p.view.split_stats[at * 2 + 1]}, so[k][j] = p.view.split_o[at * view::head_dim + D * half + d];
          }
      NETRA_UNROLL
      for (u32 k = 0; k < Ahead; ++k)
        NETRA_UNROLL
        for (u32 j = 0; j < rows; ++j)
          if (first + k < p.view.slices) {
            const softmax_merge_factors f = softmax_merge(m[j], sm[k][j]);
            o[j] = softmax_merge_value(o[j], so[k][j], f);
            m[j] = f.merged;
          }
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED float q[G][D];
    NETRA_SHARED float k[E][D];
    NETRA_SHARED float s[G][E];
    const u32 kv = workgroup_id<target, 0>(), t = workgroup_id<target, 1>(), b = workgroup_id<target, 2>(), tid = thread_id<target>();
    const u32 d = wide ? tid % D : tid, jw = wide ? tid / D : 0;  // wide: the thread's row jw
    const extend_request r = extend_request::read(p, b, E);
    if (!r.writable || t >= r.count) return;  // uniform over the workgroup
    const i64 token = r.first + t;
    auto v_ext = [&](u32 e) { return f32_from_bf16(p.v_extend[(static_cast<u64>(r.first + e) * Contract::kv_heads + kv) * D + d]); };
    if constexpr (wide) {
      q[jw][d] = f32_from_bf16(p.q[(static_cast<u64>(token) * Contract::q_heads + G * kv + jw) * D + d]);
      for (u32 i = tid; i < (t + 1) * D; i += workgroup_size)
        k[i / D][i % D] = f32_from_bf16(p.k_extend[(static_cast<u64>(r.first + i / D) * Contract::kv_heads + kv) * D + i % D]);
    } else {
      for (u32 j = 0; j < G; ++j) q[j][d] = f32_from_bf16(p.q[(static_cast<u64>(token) * Contract::q_heads + G * kv + j) * D + d]);
      for (u32 j = 0; j <= t; ++j) k[j][d] = f32_from_bf16(p.k_extend[(static_cast<u64>(r.first + j) * Contract::kv_heads + kv) * D + d]);
    }
    workgroup_barrier<target>();
    if (tid < G * (t + 1)) {
      const u32 j = tid / (t + 1), e = tid % (t + 1);
      float acc = 0.0f;
      for (u32 i = 0; i < D; ++i) acc = add_rn(acc, mul_rn(q[j][i], k[e][i]));
      s[j][e] = mul_rn(acc, Contract::softmax_scale);
    }
    workgroup_barrier<target>();
    const float v_scale = *p.view.v_scale;
    const u32 pair = kv / 2, half = kv % 2;
    // The prefix: the view's slices of row (t, 4 half + j) of pair `pair`, element 128 half + d.
    auto unit = [&](u32 sl, u32 j) {
      return ((static_cast<u64>(b) * p.view.slices + sl) * view::kv_heads + pair) * view::rows + t * view::group + G * half + j;
    };
    [[maybe_unused]] softmax_stats merged[rows];
    [[maybe_unused]] float merged_o[rows], v[E];
    if constexpr (batched || wide) merge_ahead(merged, merged_o, p, unit, half, d, jw);
    if constexpr (wide) {
      NETRA_UNROLL
      for (u32 e = 0; e < E; ++e)
        if (e <= t) v[e] = v_ext(e);
    }
    for (u32 j = jw; j < jw + rows; ++j) {
      softmax_stats m;
      float o;
      if constexpr (batched || wide) {
        m = merged[j - jw], o = merged_o[j - jw];
      } else {
        m = {p.view.split_stats[unit(0, j) * 2], p.view.split_stats[unit(0, j) * 2 + 1]};
        o = p.view.split_o[unit(0, j) * view::head_dim + D * half + d];
        for (u32 sl = 1; sl < p.view.slices; ++sl) {
          const softmax_merge_factors f = softmax_merge(m, {p.view.split_stats[unit(sl, j) * 2], p.view.split_stats[unit(sl, j) * 2 + 1]});
          o = softmax_merge_value(o, p.view.split_o[unit(sl, j) * view::head_dim + D * half + d], f);
          m = f.merged;
        }
      }
      o = mul_rn(o, v_scale);
      // The extension block: positions 0..t.
      float m_block = negative_infinity();
      for (u32 e = 0; e <= t; ++e) m_block = max_of(m_block, s[j][e]);
      const float m_new = max_of(m.m, m_block);
      float l_block = 0.0f, o_block = 0.0f;
      auto weigh = [&](u32 e, float value) {
        const float w = softmax_weight(s[j][e], m_new);
        l_block = add_rn(l_block, w);
        o_block = add_rn(o_block, mul_rn(w, value));
      };
      if constexpr (wide) {
        NETRA_UNROLL
        for (u32 e = 0; e < E; ++e)
          if (e <= t) weigh(e, v[e]);
      } else {
        for (u32 e = 0; e <= t; ++e) weigh(e, v_ext(e));
      }
      const softmax_merge_factors f = softmax_merge(m, {m_new, l_block});
      o = softmax_merge_value(o, o_block, f);
      p.out[(static_cast<u64>(token) * Contract::q_heads + G * kv + j) * D + d] =
          static_cast<u16>(pack_bf16x2<target>(softmax_finish(o, f.merged.l, 1.0f), 0.0f));
    }
  }
};

template <class Target, u32 PageSize, u32 BlockWarps, u32 Stages, u32 MaxBatch, u32 SplitCapacity>
struct kernels_of<contracts::attention_gqa4_extend<Target, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity>> {
  using contract = contracts::attention_gqa4_extend<Target, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity>;
  using type = type_list<attention_extend_stage_zero<contract>, attention_gqa8_stage_one<typename contract::pair_view>,
                         attention_extend_stage_two<contract>, attention_extend_stage_two<contract, extend_stage_two_form::batched>,
                         attention_extend_stage_two<contract, extend_stage_two_form::wide>>;
};

}  // namespace netra::kernels
