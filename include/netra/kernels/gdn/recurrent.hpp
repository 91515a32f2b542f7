// netra/kernels/gdn/recurrent.hpp — the recurrent core of contracts::gdn_recurrent (K0 verify,
// M16 and replay are its Commit values; the replay adds kernels/gdn/conv_commit.hpp).
//
// Grid (V / (Vb P), 32, B), P = WavesPerWorkgroup; workgroup = P waves. Workgroup (x, hv, b)
// owns value columns Vb P x .. Vb P x + Vb P - 1 of v head hv of request b for the whole token
// block; wave w owns the Vb of them starting at Vb (P x + w), and its state block (128 x Vb)
// stays in registers from the first token to the last (128 Vb / wave FP32 registers per lane).
// Token inputs (field Staging, kernels/gdn/token_block.hpp): per_token: loaded in the token loop;
// block / block_and_state: the head's token block staged in LDS first (its global loads issued
// before the state block's, then its LDS stores), one workgroup barrier, P waves sharing it.
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
// (gdn_state_io::wave_block, one block a wave): the wave copies its block with consecutive 16-byte
// vectors instead of each lane's 128-byte runs (a warp access over 32 lines), the store likewise;
// with Staging block_and_state asynchronously into dynamic LDS, issued before the token staging
// (both in flight together). Inputs raw: the staging forms k, q, decay, beta from the conv output
// and the gates itself (kernels/gdn/token_block.hpp), in the precompute's order.
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
#include "netra/kernels/gdn/token_block.hpp"
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
  using inputs = gdn_token_block<Contract, dot, columns, workgroup_size>;
  static constexpr bool staged = inputs::staged;
  using state_block = gdn_state_io::wave_block<target, Contract::state_storage, vb, wave, cpl, Contract::state_copy_async>;
  static constexpr bool stage_state = Contract::state_through_lds;
  static constexpr u32 dynamic_lds_bytes = stage_state && state_block::async ? waves * state_block::bytes : 0;
  using params = typename inputs::params;
  using stage = typename inputs::stage;
  using tokens_in = typename inputs::reader;

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) {
    return {{gdn::value_dim / columns, gdn::heads_v, batch}, workgroup_size, dynamic_lds_bytes};
  }
  /// Value column c (0 .. C-1) that lane `lane` of wave `w` of workgroup x owns.
  NETRA_HOST_DEVICE static constexpr u32 column(u32 workgroup_x, u32 w, u32 lane, u32 c = 0) {
    return (workgroup_x * waves + w) * vb + (lane % column_lanes) * cpl + c;
  }
  /// Row group m (0 .. G-1) of lane `lane`: rows [32 r, 32 r + 32).
  NETRA_HOST_DEVICE static constexpr u32 row_group(u32 lane, u32 m) { return (lane / column_lanes) * groups_per_lane + m; }

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
    const u32 head = hv / (gdn::heads_v / gdn::heads_qk);
    const u64 row0 = u64{b} * tokens;
    [[maybe_unused]] typename inputs::held held;  // the token block's global loads, issued before the state copy
    if constexpr (staged) held = inputs::load(p, row0, x, hv, head);
    const u32 lane_column = (lane % column_lanes) * cpl;
    char* const wave_base = column_base - lane_column * column_bytes;  // the wave's first column
    [[maybe_unused]] u32x4* wave_lds = nullptr;
    if constexpr (stage_state) {
      const u32 w = waves == 1 ? 0u : wave_id<target>();
      if constexpr (state_block::async) {
        NETRA_DYNAMIC_SHARED_BYTES(state_lds);
        wave_lds = reinterpret_cast<u32x4*>(state_lds) + w * state_block::units;
      } else {
        NETRA_SHARED u32x4 state_lds[waves][state_block::units];
        wave_lds = state_lds[w];
      }
      state_block::fetch(wave_base, wave_lds, lane);
    } else {
      each_run([&](u32 c, u32 m) { gdn_state_io::load<target, Contract::state_storage>(column_base + c * column_bytes + row_group(lane, m) * rows * bytes, s[c][m]); });
    }

    const stage* sh = nullptr;
    if constexpr (staged) {
      NETRA_SHARED stage block;
      inputs::store(held, block);
      sh = &block;
    }
    if constexpr (stage_state && state_block::async) wait_lds_copies<target, 0>();
    if constexpr (staged) workgroup_barrier<target>();
    else if constexpr (stage_state) wave_barrier<target>();
    if constexpr (stage_state) each_run([&](u32 c, u32 m) { state_block::take(wave_lds, lane_column + c, row_group(lane, m), s[c][m]); });
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
      each_run([&](u32 c, u32 m) {
        if constexpr (stage_state) state_block::put(wave_lds, lane_column + c, row_group(lane, m), s[c][m]);
        else gdn_state_io::store<target, Contract::state_storage>(column_base + c * column_bytes + row_group(lane, m) * rows * bytes, s[c][m]);
      });
      if constexpr (stage_state) state_block::flush(wave_base, wave_lds, lane);
    }
  }

 private:
  /// f(c, m) for each of the lane's C columns and G row groups (its state runs).
  template <class F> static NETRA_DEVICE void each_run(F&& f) {
    NETRA_UNROLL
    for (u32 c = 0; c < cpl; ++c)
      NETRA_UNROLL
      for (u32 m = 0; m < groups_per_lane; ++m) f(c, m);
  }
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
          u32 Fused, u32 Inputs, u32 WaveSize>
struct kernels_of<contracts::gdn_recurrent<Target, Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused, Inputs, WaveSize>> {
  using contract = contracts::gdn_recurrent<Target, Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused, Inputs, WaveSize>;
  using type = conditional_t<Commit == gdn::state_commit::accepted_prefix, type_list<gdn_recurrent_core<contract>, gdn_conv_commit<contract>>,
                             type_list<gdn_recurrent_core<contract>>>;
};

}  // namespace netra::kernels
