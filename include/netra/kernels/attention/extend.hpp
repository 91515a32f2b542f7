// netra/kernels/attention/extend.hpp — the kernels of contracts::attention_gqa4_extend, in launch
// order: stage zero pads the queries into the pair view, the GQA8 stage one
// (gqa8_stage_one.hpp) computes every slice's prefix (m, l, o) over the view, stage two merges the
// slices and the causal BF16 extension block and writes out.
//
// Stage zero. Grid (12, batch), 256 threads; workgroup (t, b) writes the view's token 12 b + t:
// 32 heads x 256 BF16, head h's half (h % 8) / 4 its query (token qo_indptr[b] + t when t < E_b),
// everything else 0; thread 0 writes the view's qo_indptr entry b + 1 = 12 (b + 1) (and entry 0).
// Stage two. Grid (8 KV heads, 12, batch), Lanes x 128 threads (extend_stage_two_form); workgroup
// (kv, t, b) owns extension token t of request b for the 4 heads of KV head kv, thread (jw, d)
// head-dim element d of 4 / Lanes of them. It first reads the call's own inputs (Q and the
// extension's K into LDS, its V into registers) and takes the 4 (t + 1) scores q_h . kext_j as
// FP32 sums in d order (one thread each); then (a programmatic dependent of stage one: it may
// start while stage one drains) it waits for stage one, merges its rows' slices in slice order,
// scales o by v_scale and takes the extension block as one online-softmax step
// (dsl/online_softmax.hpp): FP32 weights, l and o summed in j order.
#pragma once
#include "netra/contracts/attention/gqa4_extend.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/online_softmax.hpp"
#include "netra/dsl/sync.hpp"
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

/// Stage two's forms: Lanes x 128 threads, thread (jw, d) owns element d of the Rows = 4 / Lanes rows
/// 4 kv + Rows jw .. + Rows - 1 and merges their slices side by side with the loads of Ahead slices
/// in flight, then takes their extension blocks one after another. RowScalars: each row's scalars
/// (its slice merges' factors, the extension weights, the last merge) are computed once — threads
/// (row, j) and one thread per row — and read from LDS, the element threads only multiplying and
/// adding; otherwise every thread of a row computes them for itself (merge_ahead). Every form keeps
/// each row's order, so all give the same bits; the launch path picks one by the call's slices
/// (runtime/ops/attention_gqa4_extend.hpp).
template <u32 Lanes, u32 Ahead, bool RowScalars = false> struct extend_stage_two_form {
  static_assert(Lanes == 1 || Lanes == 2 || Lanes == 4, "netra::kernels::extend_stage_two_form: Lanes must be 1, 2 or 4");
  static_assert(Ahead >= 1 && Ahead <= 8, "netra::kernels::extend_stage_two_form: Ahead must be in [1, 8]");
  static constexpr u32 lanes = Lanes, ahead = Ahead;
  static constexpr bool row_scalars = RowScalars;
};
using extend_stage_two_sequential = extend_stage_two_form<1, 1>;  // 128 threads, one slice ahead
using extend_stage_two_wide = extend_stage_two_form<4, 8>;        // 512 threads, 8 slices ahead
using extend_stage_two_rows = extend_stage_two_form<1, 2, true>;  // 128 threads, 2 slices ahead, row scalars once

template <class Contract, class Form = extend_stage_two_sequential> struct attention_extend_stage_two {
  using target = typename Contract::target;
  using view = typename Contract::pair_view;
  using params = attention_extend_args;
  static constexpr u32 G = Contract::group, D = Contract::head_dim, E = Contract::max_extend, Ahead = Form::ahead, Lanes = Form::lanes;
  static constexpr u32 workgroup_size = Lanes * D, rows = G / Lanes;  // rows: the thread's merge chains
  static constexpr bool row_scalars = Form::row_scalars;
  static constexpr const char* symbol = Lanes == 1 && Ahead == 1 && !row_scalars   ? "netra_attention_extend_stage_two"
                                        : Lanes == 4 && Ahead == 8 && !row_scalars ? "netra_attention_extend_stage_two_wide"
                                        : Lanes == 1 && Ahead == 2 && row_scalars  ? "netra_attention_extend_stage_two_rows"
                                        : Lanes == 4 && Ahead == 8 && row_scalars  ? "netra_attention_extend_stage_two_wide_rows"
                                                                                   : nullptr;
  static_assert(symbol != nullptr, "netra::kernels::attention_extend_stage_two: this (Lanes, Ahead, RowScalars) form has no symbol");
  static constexpr bool programmatic_dependent_launch = true;  // stage one releases it as it starts
  static constexpr u32 wide_slices = 16;
  /// RowScalars' LDS: alpha and beta of row j's merge with slice sl (sl >= 1), the weights w[j][e],
  /// and per row the last merge's alpha, beta and l.
  static constexpr u32 cap = Contract::split_capacity, scalar_floats = row_scalars ? 2 * G * cap + G * E + 3 * G : 1;

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) { return {{Contract::kv_heads, E, batch}, workgroup_size, 0}; }

  /// m[c], o[c]: the merged prefix state of row (t, 4 half + j0 + c), element 128 half + d, in slice order
  /// (RowScalars: o only, with row j's factors at alpha(j, sl), beta(j, sl)).
  template <class Unit, class Alpha, class Beta>
  static NETRA_DEVICE void merge_ahead(softmax_stats (&m)[rows], float (&o)[rows], const params& p, Unit unit, u32 half, u32 d, u32 j0, Alpha alpha,
                                       Beta beta) {
    NETRA_UNROLL
    for (u32 j = 0; j < rows; ++j) {
      const u64 at = unit(0, j0 + j);
      if constexpr (!row_scalars) m[j] = {p.view.split_stats[at * 2], p.view.split_stats[at * 2 + 1]};
      o[j] = p.view.split_o[at * view::head_dim + D * half + d];
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
            if constexpr (!row_scalars) sm[k][j] = {p.view.split_stats[at * 2], p.view.split_stats[at * 2 + 1]};
            so[k][j] = p.view.split_o[at * view::head_dim + D * half + d];
          }
      NETRA_UNROLL
      for (u32 k = 0; k < Ahead; ++k)
        NETRA_UNROLL
        for (u32 j = 0; j < rows; ++j)
          if (first + k < p.view.slices) {
            if constexpr (row_scalars) {
              o[j] = add_rn(mul_rn(o[j], alpha(j0 + j, first + k)), mul_rn(so[k][j], beta(j0 + j, first + k)));
            } else {
              const softmax_merge_factors f = softmax_merge(m[j], sm[k][j]);
              o[j] = softmax_merge_value(o[j], so[k][j], f);
              m[j] = f.merged;
            }
          }
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED float q[G][D + 1];  // + 1: the score lanes' reads fall in distinct banks
    NETRA_SHARED float k[E][D + 1];
    NETRA_SHARED float s[G][E];
    NETRA_SHARED float scalars[scalar_floats];
    const u32 kv = workgroup_id<target, 0>(), t = workgroup_id<target, 1>(), b = workgroup_id<target, 2>(), tid = thread_id<target>();
    const u32 d = tid % D, j0 = tid / D * rows;  // the thread's first row
    const extend_request r = extend_request::read(p, b, E);
    if (!r.writable || t >= r.count) return;  // uniform over the workgroup
    const i64 token = r.first + t;
    // The call's own inputs first (stage one does not write them): Q and the extension's K into
    // LDS, its V into registers, the scores q_h . kext_j.
    for (u32 i = tid; i < G * D; i += workgroup_size) q[i / D][i % D] = f32_from_bf16(p.q[(static_cast<u64>(token) * Contract::q_heads + G * kv) * D + i]);
    for (u32 i = tid; i < (t + 1) * D; i += workgroup_size)
      k[i / D][i % D] = f32_from_bf16(p.k_extend[(static_cast<u64>(r.first + i / D) * Contract::kv_heads + kv) * D + i % D]);
    float v[E];
    NETRA_UNROLL
    for (u32 e = 0; e < E; ++e) v[e] = e <= t ? f32_from_bf16(p.v_extend[(static_cast<u64>(r.first + e) * Contract::kv_heads + kv) * D + d]) : 0.0f;
    workgroup_barrier<target>();
    if (tid < G * (t + 1)) {
      const u32 j = tid / (t + 1), e = tid % (t + 1);
      float acc = 0.0f;
      for (u32 i = 0; i < D; ++i) acc = add_rn(acc, mul_rn(q[j][i], k[e][i]));
      s[j][e] = mul_rn(acc, Contract::softmax_scale);
    }
    // The prefix: the view's slices of row (t, 4 half + j) of pair `pair`, element 128 half + d,
    // written by stage one (a programmatic dependent waits for its completion here).
    wait_for_prerequisites<target>();
    const u32 pair = kv / 2, half = kv % 2;
    auto unit = [&](u32 sl, u32 j) {
      return ((static_cast<u64>(b) * p.view.slices + sl) * view::kv_heads + pair) * view::rows + t * view::group + G * half + j;
    };
    auto stats = [&](u32 sl, u32 j) { return softmax_stats{p.view.split_stats[unit(sl, j) * 2], p.view.split_stats[unit(sl, j) * 2 + 1]}; };
    auto alpha = [&](u32 j, u32 sl) -> float& { return scalars[j * cap + sl]; };
    auto beta = [&](u32 j, u32 sl) -> float& { return scalars[(G + j) * cap + sl]; };
    auto weight = [&](u32 j, u32 e) -> float& { return scalars[2 * G * cap + j * E + e]; };
    auto last = [&](u32 j, u32 i) -> float& { return scalars[2 * G * cap + G * E + 3 * j + i]; };  // alpha, beta, l
    auto block_max = [&](u32 j) {
      float m_block = negative_infinity();
      for (u32 e = 0; e <= t; ++e) m_block = max_of(m_block, s[j][e]);
      return m_block;
    };
    softmax_stats merged[rows];
    float merged_o[rows];
    if constexpr (row_scalars) {
      workgroup_barrier<target>();  // the scores
      softmax_stats chain{};
      if (tid < G * (t + 1)) {  // thread (j, e): the row's prefix maximum (the merge chain's, in slice order), its weight of e
        const u32 j = tid / (t + 1), e = tid % (t + 1);
        float m = p.view.split_stats[unit(0, j) * 2];
        for (u32 sl = 1; sl < p.view.slices; ++sl) m = max_of(m, p.view.split_stats[unit(sl, j) * 2]);
        weight(j, e) = softmax_weight(s[j][e], max_of(m, block_max(j)));
      }
      if (tid < G) {  // row tid's slice merges, in slice order
        chain = stats(0, tid);
        for (u32 sl = 1; sl < p.view.slices; ++sl) {
          const softmax_merge_factors f = softmax_merge(chain, stats(sl, tid));
          alpha(tid, sl) = f.alpha, beta(tid, sl) = f.beta, chain = f.merged;
        }
      }
      workgroup_barrier<target>();
      if (tid < G) {  // row tid's extension block as one online-softmax step
        float l_block = 0.0f;
        for (u32 e = 0; e <= t; ++e) l_block = add_rn(l_block, weight(tid, e));
        const softmax_merge_factors f = softmax_merge(chain, {max_of(chain.m, block_max(tid)), l_block});
        last(tid, 0) = f.alpha, last(tid, 1) = f.beta, last(tid, 2) = f.merged.l;
      }
    }
    merge_ahead(merged, merged_o, p, unit, half, d, j0, alpha, beta);
    workgroup_barrier<target>();
    const float v_scale = *p.view.v_scale;
    NETRA_UNROLL
    for (u32 c = 0; c < rows; ++c) {
      const u32 j = j0 + c;
      float o = mul_rn(merged_o[c], v_scale), result;
      // The extension block: positions 0..t, one online-softmax step.
      if constexpr (row_scalars) {
        float o_block = 0.0f;
        NETRA_UNROLL
        for (u32 e = 0; e < E; ++e)
          if (e <= t) o_block = add_rn(o_block, mul_rn(weight(j, e), v[e]));
        result = softmax_finish(add_rn(mul_rn(o, last(j, 0)), mul_rn(o_block, last(j, 1))), last(j, 2), 1.0f);
      } else {
        const softmax_stats m = merged[c];
        const float m_new = max_of(m.m, block_max(j));
        float l_block = 0.0f, o_block = 0.0f;
        NETRA_UNROLL
        for (u32 e = 0; e < E; ++e)
          if (e <= t) {
            const float w = softmax_weight(s[j][e], m_new);
            l_block = add_rn(l_block, w);
            o_block = add_rn(o_block, mul_rn(w, v[e]));
          }
        const softmax_merge_factors f = softmax_merge(m, {m_new, l_block});
        result = softmax_finish(softmax_merge_value(o, o_block, f), f.merged.l, 1.0f);
      }
      p.out[(static_cast<u64>(token) * Contract::q_heads + G * kv + j) * D + d] = static_cast<u16>(pack_bf16x2<target>(result, 0.0f));
    }
  }
};

/// A contract's kernels: `Lead` (its stage one, in launch order), then the stage-two forms: the
/// launch path serves extend_stage_two_rows below wide_slices slices and extend_stage_two_wide from
/// there; the sequential and wide RowScalars forms are the bench's compared forms (a caller can force
/// any of them through launch_attention_extend's Form).
template <class Contract, class... Lead>
using extend_kernel_list = type_list<Lead..., attention_extend_stage_two<Contract>, attention_extend_stage_two<Contract, extend_stage_two_wide>,
                                     attention_extend_stage_two<Contract, extend_stage_two_rows>,
                                     attention_extend_stage_two<Contract, extend_stage_two_form<4, 8, true>>>;

template <class Target, u32 PageSize, u32 BlockWarps, u32 Stages, u32 MaxBatch, u32 SplitCapacity>
struct kernels_of<contracts::attention_gqa4_extend<Target, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity>> {
  using contract = contracts::attention_gqa4_extend<Target, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity>;
  using type = extend_kernel_list<contract, attention_extend_stage_zero<contract>, attention_gqa8_stage_one<typename contract::pair_view>>;
};

}  // namespace netra::kernels
