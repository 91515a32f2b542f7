// netra/kernels/gdn/token_block.hpp — the recurrent core's parameters and token inputs
// (kernels/gdn/recurrent.hpp): where the token loop reads token t's k, q, v, decay and beta.
// Staging per_token: global memory in the loop (16-byte loads of k / q rows; the lanes of a row
// group read the same addresses). Staging block / block_and_state: the workgroup first copies the
// head's whole token block (k, q — not for the replay, which has no outputs — of head hv / 2 for
// all T tokens, the workgroup's columns of v, decay, beta) into LDS; the caller's workgroup
// barrier follows, and the loop reads only LDS. Inputs raw (staged only): the workgroup forms the
// block's k and q rows from the conv output itself, one 32-lane group a row and head
// (kernels/gdn/precompute_math.hpp: the precompute's operations), and threads 0..T-1 its decay and
// beta; v as above.
#pragma once
#include "netra/contracts/gdn/recurrent.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/kernels/gdn/precompute_math.hpp"

namespace netra::kernels {

struct gdn_recurrent_params {
  const float* q;
  const float* k;
  const u16* v;
  i64 v_row_stride;
  const float* decay;
  const float* beta;
  void* state;
  const i32* slots;
  u16* out;
  const i32* accepted;
  i32 state_slots;
  u32 batch;
};
/// Inputs raw: the precompute's gates and parameters besides (q, k, decay, beta unused).
struct gdn_recurrent_raw_params : gdn_recurrent_params {
  const u16* a;
  const u16* b;
  const float* a_log;
  const float* dt_bias;
};

/// `Dot`: the core's gdn_dot (its per-token row loads); `Columns`: value columns per workgroup.
template <class Contract, class Dot, u32 Columns, u32 WorkgroupSize> struct gdn_token_block {
  using target = typename Contract::target;
  using params = conditional_t<Contract::raw_inputs, gdn_recurrent_raw_params, gdn_recurrent_params>;
  static constexpr u32 tokens = Contract::tokens;
  static constexpr u32 rows = Dot::rows;
  static constexpr bool staged = Contract::staging != gdn::token_staging::per_token;
  static constexpr u32 kq_rows = Contract::writes_outputs ? 2 : 1;

  struct stage {
    alignas(16) float kq[kq_rows][tokens][gdn::key_dim];  // [0]: k, [1]: q of head hv / 2
    float v[tokens][Columns];
    float decay[tokens];
    float beta[tokens];
  };

  /// Token t's inputs for the lane whose first column is j (`local`: j within the workgroup).
  struct reader {
    const params& p;
    const stage* sh;
    u64 row0;
    u32 hv, head, j, local;
    NETRA_DEVICE float decay(u32 t) const { return staged ? sh->decay[t] : p.decay[(row0 + t) * gdn::heads_v + hv]; }
    NETRA_DEVICE float beta(u32 t) const { return staged ? sh->beta[t] : p.beta[(row0 + t) * gdn::heads_v + hv]; }
    /// v of this lane's column c at token t.
    NETRA_DEVICE float v(u32 t, u32 c) const {
      if constexpr (staged) return sh->v[t][local + c];
      else return f32_from_bf16(p.v[(row0 + t) * p.v_row_stride + gdn::v_offset + hv * gdn::value_dim + j + c]);
    }
    /// Rows [32 r, 32 r + 32) of k (Which 0) or q (Which 1) of token t.
    template <u32 Which> NETRA_DEVICE void rows_of(u32 t, u32 r, float (&x)[rows]) const {
      if constexpr (staged) {
        const float* src = &sh->kq[Which][t][r * rows];
        NETRA_UNROLL
        for (u32 v = 0; v < rows / 4; ++v) {
          const u32x4 w = *reinterpret_cast<const u32x4*>(src + 4 * v);  // 16-byte LDS reads
          x[4 * v] = bit_cast<float>(w.x), x[4 * v + 1] = bit_cast<float>(w.y);
          x[4 * v + 2] = bit_cast<float>(w.z), x[4 * v + 3] = bit_cast<float>(w.w);
        }
      } else {
        Dot::load_rows((Which ? p.q : p.k) + ((row0 + t) * gdn::heads_qk + head) * gdn::key_dim + r * rows, x);
      }
    }
  };

  /// Inputs raw: the first conv-output channel of k (which 0) or q (which 1) of q/k head `head`
  /// (the precompute's head slots 16 + head and head).
  NETRA_HOST_DEVICE static constexpr u32 raw_channel(u32 which, u32 head) { return (which ? head : gdn::heads_qk + head) * gdn::key_dim; }

  /// Copies the head's token block into `sh` (every thread of the workgroup; the caller's barrier follows).
  static NETRA_DEVICE void fill(const params& p, stage& sh, u64 row0, u32 x, u32 hv, u32 head) {
    const u32 thread = thread_id<target>();
    if constexpr (Contract::raw_inputs) {
      fill_raw(p, sh, row0, x, hv, head, thread);
      return;
    }
    constexpr u32 kq_vectors = kq_rows * tokens * gdn::key_dim / 4;
    for (u32 e = thread; e < kq_vectors; e += WorkgroupSize) {
      const u32 which = e / (tokens * gdn::key_dim / 4), t = (e / (gdn::key_dim / 4)) % tokens, c = e % (gdn::key_dim / 4);
      const u32x4 w = load_16B<target>((which ? p.q : p.k) + ((row0 + t) * gdn::heads_qk + head) * gdn::key_dim + 4 * c);
      float* dst = &sh.kq[which][t][4 * c];
      dst[0] = bit_cast<float>(w.x), dst[1] = bit_cast<float>(w.y), dst[2] = bit_cast<float>(w.z), dst[3] = bit_cast<float>(w.w);
    }
    for (u32 e = thread; e < tokens * Columns; e += WorkgroupSize) {
      const u32 t = e / Columns, c = e % Columns;
      sh.v[t][c] = f32_from_bf16(p.v[(row0 + t) * p.v_row_stride + gdn::v_offset + hv * gdn::value_dim + x * Columns + c]);
    }
    if (thread < tokens) {
      sh.decay[thread] = p.decay[(row0 + thread) * gdn::heads_v + hv];
      sh.beta[thread] = p.beta[(row0 + thread) * gdn::heads_v + hv];
    }
  }

 private:
  /// Inputs raw: every global load first (the group's k / q heads, the thread's v values, a gate
  /// thread's a, b, A_log, dt_bias), then the precompute's arithmetic. Head e = group + G i
  /// (G groups of 32 lanes; which = e / T: 0 k, 1 q; token e % T), uniform per group, so the
  /// butterfly's shuffles see every lane.
  static NETRA_DEVICE void fill_raw(const params& p, stage& sh, u64 row0, u32 x, u32 hv, u32 head, u32 thread) {
    namespace pm = gdn_precompute_math;
    static_assert(WorkgroupSize % pm::group_lanes == 0 && tokens <= WorkgroupSize, "netra::kernels::gdn_token_block: raw-input staging mapping");
    constexpr u32 groups = WorkgroupSize / pm::group_lanes, heads = kq_rows * tokens, per_group = (heads + groups - 1) / groups;
    constexpr u32 values = tokens * Columns, per_thread = (values + WorkgroupSize - 1) / WorkgroupSize;
    const u32 group = thread / pm::group_lanes, lane = thread % pm::group_lanes;
    u32x2 raw[per_group];
    NETRA_UNROLL
    for (u32 i = 0; i < per_group; ++i)
      if (const u32 e = group + groups * i; e < heads) raw[i] = pm::head_load(p.v + (row0 + e % tokens) * p.v_row_stride + raw_channel(e / tokens, head), lane);
    u16 vv[per_thread];
    NETRA_UNROLL
    for (u32 i = 0; i < per_thread; ++i)
      if (const u32 e = thread + WorkgroupSize * i; e < values)
        vv[i] = p.v[(row0 + e / Columns) * p.v_row_stride + gdn::v_offset + hv * gdn::value_dim + x * Columns + e % Columns];
    const bool gate_thread = thread < tokens;
    const u64 at = (row0 + thread) * gdn::heads_v + hv;
    u16 a = 0, b = 0;
    float a_log = 0.0f, dt_bias = 0.0f;
    if (gate_thread) a = p.a[at], b = p.b[at], a_log = p.a_log[hv], dt_bias = p.dt_bias[hv];
    NETRA_UNROLL
    for (u32 i = 0; i < per_group; ++i)
      if (const u32 e = group + groups * i; e < heads) {
        float o[4];
        pm::head_values<target>(raw[i], e / tokens == 1, o);
        float* dst = &sh.kq[e / tokens][e % tokens][4 * lane];
        dst[0] = o[0], dst[1] = o[1], dst[2] = o[2], dst[3] = o[3];
      }
    NETRA_UNROLL
    for (u32 i = 0; i < per_thread; ++i)
      if (const u32 e = thread + WorkgroupSize * i; e < values) sh.v[e / Columns][e % Columns] = f32_from_bf16(vv[i]);
    if (gate_thread) {
      const pm::gates g = pm::gates_of(a, b, a_log, dt_bias);
      sh.decay[thread] = g.decay, sh.beta[thread] = g.beta;
    }
  }
};

}  // namespace netra::kernels
