// netra/kernels/gdn/recurrent.hpp — the recurrent core of contracts::gdn_recurrent (K0 verify,
// M16 and replay are its Commit values; the replay adds kernels/gdn/conv_commit.hpp).
//
// Grid (V / (Vb P), 32, B), P = WavesPerWorkgroup; workgroup = P waves. Workgroup (x, hv, b)
// owns value columns Vb P x .. Vb P x + Vb P - 1 of v head hv of request b for the whole token
// block; wave w owns the Vb of them starting at Vb (P x + w), and its state block (128 x Vb)
// stays in registers from the first token to the last (128 Vb / wave FP32 registers per lane).
// Token inputs (field Staging): per_token: in the token loop each lane loads k and q of its rows
// (16-byte loads; the Vb lanes of a row group read the same addresses), decay, beta and its v;
// block: the workgroup first copies the head's whole token block (k, q (not for the replay) of
// head hv / 2 for all T tokens, its columns' v, decay, beta) into LDS, one workgroup barrier, and the
// token loop reads only LDS — no global latency between tokens, one staging for P waves.
// With N = Vb / C column lanes (C = ColumnsPerLane), lane l owns the C adjacent columns
// Vb (P x + w) + C (l % N) + c, c < C, and the row groups r = G (l / N) .. G (l / N) + G - 1
// (rows [32 r, 32 r + 32)), L = wave / N lanes per column, G = 4 / L groups per lane
// (gfx950, Vb 16, C 1: L 4, G 1, 32 state registers; sm90a, Vb 8, C 1: the same geometry on
// warp32; sm90a, Vb 16, C 2: L 4, G 1, 64 state registers, each k / q value serving 2 columns).
// Dot products (contracts/gdn/model.hpp): each lane runs the fma chain of each of its groups and
// columns, then the tree (p0 + p1) + (p2 + p3): in-lane adds for pairs inside a lane, one xor
// shuffle at distance N (pairs across lanes) and one at 2 N (L = 4): the same tree for every map.
// Lanes with l / N == 0 store the BF16 outputs of their columns. Commit none: the kernel has no
// other global store (the audit test checks the code objects). Commit final / accepted_prefix:
// the state block is stored once, after the last token. FusedDots: token t - 1's q dot runs in
// token t's decay pass over the state (kernels/gdn/dot_tree.hpp), its outputs stored then, the
// last token's after the loop. PrefetchAhead P: first, thread 0 asks for the L2 prefetch of the
// state block of workgroup n + P of the launch order (kernels/gdn/prefetch_ahead.hpp) and threads
// 1..T for its token rows, where that workgroup reads anything. Contract::state_through_lds
// (gdn_state_io::wave_block): the wave copies its block with consecutive 16-byte vectors instead
// of each lane's 128-byte runs (a warp access over 32 lines), the store likewise.
#pragma once
#include "netra/contracts/gdn/recurrent.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/prefetch.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/gdn/conv_commit.hpp"
#include "netra/kernels/gdn/dot_tree.hpp"
#include "netra/kernels/gdn/prefetch_ahead.hpp"
#include "netra/kernels/gdn/state_io.hpp"
#include "netra/kernels/gdn/token_loop.hpp"

namespace netra::kernels {

template <class Contract> struct gdn_recurrent_core {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_gdn_recurrent";
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 waves = Contract::waves_per_workgroup;
  static constexpr u32 workgroup_size = wave * waves;
  static constexpr bool programmatic_dependent_launch = false;
  static constexpr u32 vb = Contract::value_block;
  static constexpr u32 cpl = Contract::columns_per_lane;
  static constexpr u32 column_lanes = vb / cpl;
  static constexpr u32 lanes_per_column = wave / column_lanes;
  /// C > 1 (sm90a): enough resident workgroups to keep the contract's register cap; C 1: none.
  static constexpr u32 min_workgroups_per_processor = cpl == 1 ? 0u : 65536u / (workgroup_size * Contract::register_cap);
  static constexpr u32 groups_per_lane = 4 / lanes_per_column;
  static constexpr u32 rows = gdn_state_io::rows;
  using dot = gdn_dot<target, column_lanes, groups_per_lane>;
  static constexpr bool fused = Contract::fused_dots;
  static constexpr u32 commit = Contract::commit;
  static constexpr u32 tokens = Contract::tokens;
  static constexpr u32 columns = vb * waves;  // per workgroup
  static constexpr bool staged = Contract::staging == gdn::token_staging::block;
  using state_block = gdn_state_io::wave_block<target, Contract::state_storage, vb, wave>;
  static constexpr bool stage_state = Contract::state_through_lds;

  /// The token block of one workgroup in LDS.
  struct stage {
    alignas(16) float kq[2][tokens][gdn::key_dim];  // [0]: k, [1]: q of head hv / 2
    float v[tokens][columns];
    float decay[tokens];
    float beta[tokens];
  };

  struct params {
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

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) { return {{gdn::value_dim / columns, gdn::heads_v, batch}, workgroup_size, 0}; }
  /// Value column c (0 .. C-1) that lane `lane` of wave `w` of workgroup x owns.
  NETRA_HOST_DEVICE static constexpr u32 column(u32 workgroup_x, u32 w, u32 lane, u32 c = 0) {
    return (workgroup_x * waves + w) * vb + (lane % column_lanes) * cpl + c;
  }
  /// Row group m (0 .. G-1) of lane `lane`: rows [32 r, 32 r + 32).
  NETRA_HOST_DEVICE static constexpr u32 row_group(u32 lane, u32 m) { return (lane / column_lanes) * groups_per_lane + m; }

  /// Where the token loop reads token t's inputs: global memory (per_token) or the staged block.
  struct tokens_in {
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
        const float* src = &sh->kq[Which][t][r * gdn_recurrent_core::rows];
        NETRA_UNROLL
        for (u32 v = 0; v < gdn_recurrent_core::rows / 4; ++v) {
          const u32x4 w = *reinterpret_cast<const u32x4*>(src + 4 * v);  // 16-byte LDS reads
          x[4 * v] = bit_cast<float>(w.x), x[4 * v + 1] = bit_cast<float>(w.y);
          x[4 * v + 2] = bit_cast<float>(w.z), x[4 * v + 3] = bit_cast<float>(w.w);
        }
      } else {
        dot::load_rows((Which ? p.q : p.k) + ((row0 + t) * gdn::heads_qk + head) * gdn::key_dim + r * gdn_recurrent_core::rows, x);
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

  /// The L2 prefetch of what workgroup n + P of the launch order reads (nothing for a workgroup that commits nothing).
  static NETRA_DEVICE void prefetch_later(const params& p, u32 x, u32 hv, u32 b) {
    const auto n = gdn_prefetch::ahead(x, hv, b, gdn::value_dim / columns, gdn::heads_v, p.batch, Contract::prefetch_ahead);
    if (!n.valid) return;
    const i32 s = p.slots[n.z];
    if (static_cast<u32>(s) >= static_cast<u32>(p.state_slots - 1)) return;
    if constexpr (commit == gdn::state_commit::accepted_prefix)
      if (const u32 c = static_cast<u32>(p.accepted[n.z]); c == 0 || c > tokens) return;
    constexpr u32 bytes = gdn::state_bytes_per_element(Contract::state_storage);
    const u32 thread = thread_id<target>();
    if (thread == 0) {
      const u64 column0 = (u64{static_cast<u32>(s)} * gdn::heads_v + n.y) * gdn::value_dim + n.x * columns;
      prefetch_l2<target>(static_cast<const char*>(p.state) + column0 * gdn::key_dim * bytes, columns * gdn::key_dim * bytes);
    } else if (thread <= tokens) {
      const u64 row = u64{n.z} * tokens + thread - 1, kq = (row * gdn::heads_qk + n.y / 2) * gdn::key_dim;
      prefetch_l2<target>(p.k + kq, gdn::key_dim * 4);
      if constexpr (Contract::writes_outputs) prefetch_l2<target>(p.q + kq, gdn::key_dim * 4);
      prefetch_l2<target>(p.v + row * p.v_row_stride + gdn::v_offset + n.y * gdn::value_dim + n.x * columns, columns * 2);
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    const u32 lane = lane_id<target>();
    const u32 x = workgroup_id<target, 0>();
    const u32 hv = workgroup_id<target, 1>();
    const u32 b = workgroup_id<target, 2>();
    if constexpr (Contract::prefetch_ahead > 0) prefetch_later(p, x, hv, b);
    const u32 j = column(x, waves == 1 ? 0u : wave_id<target>(), lane);  // the lane's first column
    const i32 requested = p.slots[b];
    const bool real = static_cast<u32>(requested) < static_cast<u32>(p.state_slots - 1);
    const u64 slot = real ? static_cast<u32>(requested) : static_cast<u32>(p.state_slots - 1);
    u32 count = tokens;
    if constexpr (commit == gdn::state_commit::accepted_prefix) {
      count = static_cast<u32>(p.accepted[b]);
      if (!real || count == 0 || count > tokens) return;  // nothing to commit (uniform over the workgroup)
    }

    constexpr u32 bytes = gdn::state_bytes_per_element(Contract::state_storage);
    char* const column_base = static_cast<char*>(p.state) + ((slot * gdn::heads_v + hv) * gdn::value_dim + j) * gdn::key_dim * bytes;
    constexpr u64 column_bytes = u64{gdn::key_dim} * bytes;
    float s[cpl][groups_per_lane][rows];
    const u32 lane_column = (lane % column_lanes) * cpl;
    char* const wave_base = column_base - lane_column * column_bytes;  // the wave's first column
    [[maybe_unused]] u32x4* wave_lds = nullptr;
    if constexpr (stage_state) {
      NETRA_SHARED u32x4 state_lds[waves][state_block::vectors];
      state_block::fetch(wave_base, wave_lds = state_lds[waves == 1 ? 0u : wave_id<target>()], lane);
    }
    NETRA_UNROLL
    for (u32 c = 0; c < cpl; ++c)
      NETRA_UNROLL
      for (u32 m = 0; m < groups_per_lane; ++m) {
        if constexpr (stage_state) state_block::take(wave_lds, lane_column + c, row_group(lane, m), s[c][m]);
        else gdn_state_io::load<target, Contract::state_storage>(column_base + c * column_bytes + row_group(lane, m) * rows * bytes, s[c][m]);
      }

    const u32 head = hv / (gdn::heads_v / gdn::heads_qk);
    const u64 row0 = u64{b} * tokens;
    const stage* sh = nullptr;
    if constexpr (staged) {
      NETRA_SHARED stage block;
      stage_block(p, block, row0, x, hv, head);
      sh = &block;
    }
    const tokens_in in{p, sh, row0, hv, head, j, j - x * columns};

    [[maybe_unused]] float pq[cpl][groups_per_lane];  // FusedDots: the q-dot partials of the previous token
    NETRA_GDN_TOKEN_LOOP
    for (u32 t = 0; t < count; ++t) {
      const float a = in.decay(t), beta = in.beta(t);
      float partial[cpl][groups_per_lane];
      float kk[groups_per_lane][rows];
      NETRA_UNROLL
      for (u32 m = 0; m < groups_per_lane; ++m) {
        in.template rows_of<0>(t, row_group(lane, m), kk[m]);
        if constexpr (fused) {  // token t - 1's q dot in the pass that decays the state for token t
          float qq[rows];
          in.template rows_of<1>(t == 0 ? 0 : t - 1, row_group(lane, m), qq);
          NETRA_UNROLL
          for (u32 c = 0; c < cpl; ++c) dot::template fused_pass<true>(s[c][m], a, kk[m], qq, partial[c][m], pq[c][m]);
        } else {
          NETRA_UNROLL
          for (u32 c = 0; c < cpl; ++c) dot::template fused_pass<false>(s[c][m], a, kk[m], kk[m], partial[c][m], partial[c][m]);
        }
      }
      if constexpr (fused)
        if (t > 0) output(p, pq, row0 + t - 1, hv, j, lane);
      NETRA_UNROLL
      for (u32 c = 0; c < cpl; ++c) {
        const float u = mul_rn(beta, sub_rn(in.v(t, c), dot::tree(partial[c])));
        NETRA_UNROLL
        for (u32 m = 0; m < groups_per_lane; ++m)
          NETRA_UNROLL
          for (u32 i = 0; i < rows; ++i) s[c][m][i] = fma_rn(kk[m][i], u, s[c][m][i]);
      }
      if constexpr (Contract::writes_outputs && !fused) q_dot_and_output(p, in, s, t, row0, hv, j, lane);
    }
    if constexpr (fused) q_dot_and_output(p, in, s, count - 1, row0, hv, j, lane);  // the last token's outputs
    if constexpr (commit != gdn::state_commit::none) {
      if (!real) return;
      NETRA_UNROLL
      for (u32 c = 0; c < cpl; ++c)
        NETRA_UNROLL
        for (u32 m = 0; m < groups_per_lane; ++m) {
          if constexpr (stage_state) state_block::put(wave_lds, lane_column + c, row_group(lane, m), s[c][m]);
          else gdn_state_io::store<target, Contract::state_storage>(column_base + c * column_bytes + row_group(lane, m) * rows * bytes, s[c][m]);
        }
      if constexpr (stage_state) state_block::flush(wave_base, wave_lds, lane);
    }
  }

 private:
  /// Token t's q dot over the state after its update, then its outputs.
  static NETRA_DEVICE void q_dot_and_output(const params& p, const tokens_in& in, const float (&s)[cpl][groups_per_lane][rows], u32 t, u64 row0, u32 hv,
                                            u32 j, u32 lane) {
    float partial[cpl][groups_per_lane];
    NETRA_UNROLL
    for (u32 m = 0; m < groups_per_lane; ++m) {
      float qq[rows];
      in.template rows_of<1>(t, row_group(lane, m), qq);
      NETRA_UNROLL
      for (u32 c = 0; c < cpl; ++c) partial[c][m] = dot::chain(s[c][m], qq);
    }
    output(p, partial, row0 + t, hv, j, lane);
  }
  /// The trees of the q-dot partials and the BF16 outputs of row `row` (lanes of the first row group).
  static NETRA_DEVICE void output(const params& p, const float (&partial)[cpl][groups_per_lane], u64 row, u32 hv, u32 j, u32 lane) {
    float o[cpl];
    NETRA_UNROLL
    for (u32 c = 0; c < cpl; ++c) o[c] = dot::tree(partial[c]);
    if (lane < column_lanes) store_outputs(p.out + (row * gdn::heads_v + hv) * gdn::value_dim + j, o);
  }
  /// The BF16 outputs of the lane's C adjacent columns: one 2-byte store (C 1), or 4-byte stores of pairs.
  static NETRA_DEVICE void store_outputs(u16* dst, const float (&o)[cpl]) {
    if constexpr (cpl == 1) *dst = static_cast<u16>(pack_bf16x2<target>(o[0], 0.0f));
    else {
      NETRA_UNROLL
      for (u32 c = 0; c < cpl; c += 2) reinterpret_cast<u32*>(dst)[c / 2] = pack_bf16x2<target>(o[c], o[c + 1]);
    }
  }
};

template <class Target, u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock, u32 Staging, u32 Waves, u32 Columns, u32 Prefetch,
          u32 Fused, u32 WaveSize>
struct kernels_of<contracts::gdn_recurrent<Target, Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused, WaveSize>> {
  using contract = contracts::gdn_recurrent<Target, Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused, WaveSize>;
  using type = conditional_t<Commit == gdn::state_commit::accepted_prefix, type_list<gdn_recurrent_core<contract>, gdn_conv_commit<contract>>,
                             type_list<gdn_recurrent_core<contract>>>;
};

}  // namespace netra::kernels
