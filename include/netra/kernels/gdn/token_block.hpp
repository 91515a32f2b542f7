// netra/kernels/gdn/token_block.hpp — the recurrent core's parameters and token inputs
// (kernels/gdn/recurrent.hpp): where the token loop reads token t's k, q, v, decay and beta.
// Staging per_token: global memory in the loop (16-byte loads of k / q rows; the lanes of a row
// group read the same addresses). Staging block / block_and_state: the workgroup first copies the
// head's whole token block (k, q — not for the replay, which has no outputs — of head hv / 2 for
// all T tokens, the workgroup's columns of v, decay, beta) into LDS, every global load first; the caller's workgroup
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

  /// The thread's share of the head's token block in registers: `load` issues every global load of
  /// the staging (one load latency; the caller issues the state copy after it, so the slot index's
  /// load is not in series with them), `store` puts it into LDS (Inputs raw: after the precompute's
  /// arithmetic); every thread of the workgroup calls both, the caller's barrier follows.
  /// Vector e of the block (Inputs precomputed): which = e / (T K / 4) (0 k, 1 q), token
  /// (e / (K / 4)) % T, values 4 (e % (K / 4)) ..: kq's order. Inputs raw: head e = group + G i
  /// (G groups of 32 lanes; which = e / T; token e % T), uniform per group, so the butterfly's
  /// shuffles see every lane; threads 0..T-1 read the gates. v value e = thread + WorkgroupSize i:
  /// token e / Columns, column e % Columns.
  static constexpr u32 kq_vectors = kq_rows * tokens * gdn::key_dim / 4, kq_per_thread = (kq_vectors + WorkgroupSize - 1) / WorkgroupSize;
  static constexpr u32 groups = WorkgroupSize / gdn_precompute_math::group_lanes, heads = kq_rows * tokens, heads_per_group = (heads + groups - 1) / groups;
  static constexpr u32 v_values = tokens * Columns, v_per_thread = (v_values + WorkgroupSize - 1) / WorkgroupSize;
  static_assert(!Contract::raw_inputs || (WorkgroupSize % gdn_precompute_math::group_lanes == 0 && tokens <= WorkgroupSize),
                "netra::kernels::gdn_token_block: raw-input staging mapping");
  struct held_block {
    u32x4 w[kq_per_thread];
    u16 v[v_per_thread];
    float decay = 0.0f, beta = 0.0f;
  };
  struct held_raw {
    u32x2 raw[heads_per_group];
    u16 v[v_per_thread];
    u16 a = 0, b = 0;
    float a_log = 0.0f, dt_bias = 0.0f;
  };
  using held = conditional_t<Contract::raw_inputs, held_raw, held_block>;

  static NETRA_DEVICE held load(const params& p, u64 row0, u32 x, u32 hv, u32 head) {
    const u32 thread = thread_id<target>();
    held h;
    if constexpr (Contract::raw_inputs) {
      const u32 group = thread / gdn_precompute_math::group_lanes, lane = thread % gdn_precompute_math::group_lanes;
      NETRA_UNROLL
      for (u32 i = 0; i < heads_per_group; ++i)
        if (const u32 e = group + groups * i; e < heads)
          h.raw[i] = gdn_precompute_math::head_load(p.v + (row0 + e % tokens) * p.v_row_stride + raw_channel(e / tokens, head), lane);
    } else {
      NETRA_UNROLL
      for (u32 i = 0; i < kq_per_thread; ++i)
        if (const u32 e = thread + WorkgroupSize * i; e < kq_vectors) {
          const u32 which = e / (tokens * gdn::key_dim / 4), t = (e / (gdn::key_dim / 4)) % tokens, c = e % (gdn::key_dim / 4);
          h.w[i] = load_16B<target>((which ? p.q : p.k) + ((row0 + t) * gdn::heads_qk + head) * gdn::key_dim + 4 * c);
        }
    }
    NETRA_UNROLL
    for (u32 i = 0; i < v_per_thread; ++i)
      if (const u32 e = thread + WorkgroupSize * i; e < v_values)
        h.v[i] = p.v[(row0 + e / Columns) * p.v_row_stride + gdn::v_offset + hv * gdn::value_dim + x * Columns + e % Columns];
    if (thread < tokens) {
      const u64 at = (row0 + thread) * gdn::heads_v + hv;
      if constexpr (Contract::raw_inputs) h.a = p.a[at], h.b = p.b[at], h.a_log = p.a_log[hv], h.dt_bias = p.dt_bias[hv];
      else h.decay = p.decay[at], h.beta = p.beta[at];
    }
    return h;
  }

  static NETRA_DEVICE void store(const held& h, stage& sh) {
    const u32 thread = thread_id<target>();
    if constexpr (Contract::raw_inputs) {
      namespace pm = gdn_precompute_math;
      const u32 group = thread / pm::group_lanes, lane = thread % pm::group_lanes;
      NETRA_UNROLL
      for (u32 i = 0; i < heads_per_group; ++i)
        if (const u32 e = group + groups * i; e < heads) {
          float o[4];
          pm::head_values<target>(h.raw[i], e / tokens == 1, o);
          float* dst = &sh.kq[e / tokens][e % tokens][4 * lane];
          dst[0] = o[0], dst[1] = o[1], dst[2] = o[2], dst[3] = o[3];
        }
    } else {
      NETRA_UNROLL
      for (u32 i = 0; i < kq_per_thread; ++i)
        if (const u32 e = thread + WorkgroupSize * i; e < kq_vectors) reinterpret_cast<u32x4*>(&sh.kq[0][0][0])[e] = h.w[i];
    }
    NETRA_UNROLL
    for (u32 i = 0; i < v_per_thread; ++i)
      if (const u32 e = thread + WorkgroupSize * i; e < v_values) sh.v[e / Columns][e % Columns] = f32_from_bf16(h.v[i]);
    if (thread < tokens) {
      if constexpr (Contract::raw_inputs) {
        const gdn_precompute_math::gates g = gdn_precompute_math::gates_of(h.a, h.b, h.a_log, h.dt_bias);
        sh.decay[thread] = g.decay, sh.beta[thread] = g.beta;
      } else {
        sh.decay[thread] = h.decay, sh.beta[thread] = h.beta;
      }
    }
  }
};

}  // namespace netra::kernels
