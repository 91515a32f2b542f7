// netra/kernels/gdn/recurrent_inputs.hpp — the recurrent core's kernel arguments and token inputs
// (kernels/gdn/recurrent.hpp): field Staging per_token reads each token's k, q (16-byte loads),
// decay, beta and v from global memory in the token loop; block copies the head's whole token
// block (k, q — not for the replay —, the workgroup's v columns, decay, beta of all T tokens)
// into LDS first, every thread of the workgroup, then one workgroup barrier. `prefetch` asks for
// the L2 prefetch of another workgroup's token rows (and state block): thread 0 the state, threads
// 1..T one token row each, only where that workgroup commits (a real slot; for the replay an
// accepted length in [1, T]).
#pragma once
#include "netra/contracts/gdn/model.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/prefetch.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/workgroup_barrier.hpp"

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

template <class Contract, class Dot> struct gdn_token_inputs {
  using target = typename Contract::target;
  using params = gdn_recurrent_params;
  static constexpr u32 tokens = Contract::tokens;
  static constexpr u32 columns = Contract::value_block * Contract::waves_per_workgroup;  // per workgroup
  static constexpr u32 workgroup_size = target::wave_size * Contract::waves_per_workgroup;
  static constexpr bool staged = Contract::staging == gdn::token_staging::block;
  static constexpr u32 rows = Dot::rows;

  /// The token block of one workgroup in LDS.
  struct stage {
    alignas(16) float kq[2][tokens][gdn::key_dim];  // [0]: k, [1]: q of head hv / 2
    float v[tokens][columns];
    float decay[tokens];
    float beta[tokens];
  };

  /// Where the token loop reads token t's inputs: global memory (per_token) or the staged block.
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

  /// Copies the head's token block into `sh` (every thread of the workgroup), then the barrier.
  static NETRA_DEVICE void stage_block(const params& p, stage& sh, u64 row0, u32 x, u32 hv, u32 head) {
    const u32 thread = thread_id<target>();
    constexpr u32 kq_vectors = (Contract::writes_outputs ? 2 : 1) * tokens * gdn::key_dim / 4;  // the replay reads no q
    for (u32 e = thread; e < kq_vectors; e += workgroup_size) {
      const u32 which = e / (tokens * gdn::key_dim / 4), t = (e / (gdn::key_dim / 4)) % tokens, c = e % (gdn::key_dim / 4);
      const u32x4 w = load_16B<target>((which ? p.q : p.k) + ((row0 + t) * gdn::heads_qk + head) * gdn::key_dim + 4 * c);
      float* dst = &sh.kq[which][t][4 * c];
      dst[0] = bit_cast<float>(w.x), dst[1] = bit_cast<float>(w.y), dst[2] = bit_cast<float>(w.z), dst[3] = bit_cast<float>(w.w);
    }
    for (u32 e = thread; e < tokens * columns; e += workgroup_size) {
      const u32 t = e / columns, c = e % columns;
      sh.v[t][c] = f32_from_bf16(p.v[(row0 + t) * p.v_row_stride + gdn::v_offset + hv * gdn::value_dim + x * columns + c]);
    }
    if (thread < tokens) {
      sh.decay[thread] = p.decay[(row0 + thread) * gdn::heads_v + hv];
      sh.beta[thread] = p.beta[(row0 + thread) * gdn::heads_v + hv];
    }
    workgroup_barrier<target>();
  }

  /// The L2 prefetch of workgroup (x, hv, b)'s token rows and, where `state` is not null, its state block.
  static NETRA_DEVICE void prefetch(const params& p, u32 x, u32 hv, u32 b, const void* state, u32 state_bytes = 0) {
    const i32 s = p.slots[b];
    if (static_cast<u32>(s) >= static_cast<u32>(p.state_slots - 1)) return;
    if constexpr (Contract::commit == gdn::state_commit::accepted_prefix)
      if (const u32 c = static_cast<u32>(p.accepted[b]); c == 0 || c > tokens) return;
    const u32 thread = thread_id<target>();
    if (thread == 0) {
      if (state != nullptr) prefetch_l2<target>(state, state_bytes);
    } else if (thread <= tokens) {
      const u64 row = u64{b} * tokens + thread - 1, kq = (row * gdn::heads_qk + hv / 2) * gdn::key_dim;
      prefetch_l2<target>(p.k + kq, gdn::key_dim * 4);
      if constexpr (Contract::writes_outputs) prefetch_l2<target>(p.q + kq, gdn::key_dim * 4);
      prefetch_l2<target>(p.v + row * p.v_row_stride + gdn::v_offset + hv * gdn::value_dim + x * columns, columns * 2);
    }
  }
};

}  // namespace netra::kernels
