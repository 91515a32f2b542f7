// netra/kernels/gdn/recurrent.hpp — the recurrent core of contracts::gdn_recurrent (K0 verify,
// M16 and replay are its Commit values; the replay adds kernels/gdn/conv_commit.hpp).
//
// Grid (V / (Vb P), 32, B), P = WavesPerWorkgroup; workgroup = P waves. Workgroup (x, hv, b)
// owns value columns Vb P x .. Vb P x + Vb P - 1 of v head hv of request b for the whole token
// block (an item); wave w owns the Vb of them starting at Vb (P x + w), and its state block
// (128 x Vb) stays in registers from the first token to the last (128 Vb / wave FP32 registers
// per lane). Persistent W: a grid of min(W, items) workgroups, workgroup g taking items g, g + W,
// ... in the plain grid's order, the next item's state copied into LDS by each thread while this
// item's tokens run (kernels/gdn/state_pipeline.hpp), its token rows asked into L2.
// Token inputs (field Staging, kernels/gdn/recurrent_inputs.hpp): per token from global memory, or
// the head's token block staged in LDS first (one staging for P waves).
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
// 1..T for its token rows, where that workgroup reads anything.
#pragma once
#include "netra/contracts/gdn/recurrent.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/gdn/conv_commit.hpp"
#include "netra/kernels/gdn/dot_tree.hpp"
#include "netra/kernels/gdn/prefetch_ahead.hpp"
#include "netra/kernels/gdn/recurrent_inputs.hpp"
#include "netra/kernels/gdn/state_io.hpp"
#include "netra/kernels/gdn/state_pipeline.hpp"
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
  /// C > 1 (sm90a): enough resident workgroups that the register allocator keeps the contract's
  /// cap; C 1: 0, no minimum (CUDA then emits no .minnctapersm: the plain launch bound).
  static constexpr u32 min_workgroups_per_processor = cpl == 1 ? 0u : 65536u / (workgroup_size * Contract::register_cap);
  static constexpr u32 groups_per_lane = 4 / lanes_per_column;
  static constexpr u32 rows = gdn_state_io::rows;
  using dot = gdn_dot<target, column_lanes, groups_per_lane>;
  static constexpr bool fused = Contract::fused_dots;
  static constexpr u32 commit = Contract::commit;
  static constexpr u32 tokens = Contract::tokens;
  static constexpr u32 columns = vb * waves;  // per workgroup
  static constexpr bool staged = Contract::staging == gdn::token_staging::block;
  using params = gdn_recurrent_params;
  using inputs = gdn_token_inputs<Contract, dot>;
  using stage = typename inputs::stage;
  using tokens_in = typename inputs::reader;

  /// Persistent: the state buffer (dynamic LDS, above 48 KiB allowed at load).
  static constexpr u32 dynamic_lds_bytes = Contract::state_buffer_bytes;
  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) {
    if constexpr (Contract::persistent > 0) return {{gdn_pipeline::workgroups(Contract::persistent, gdn::value_dim / columns * gdn::heads_v * batch), 1, 1}, workgroup_size, dynamic_lds_bytes};
    else return {{gdn::value_dim / columns, gdn::heads_v, batch}, workgroup_size, 0};
  }
  /// Value column c (0 .. C-1) that lane `lane` of wave `w` of workgroup x owns.
  NETRA_HOST_DEVICE static constexpr u32 column(u32 workgroup_x, u32 w, u32 lane, u32 c = 0) {
    return (workgroup_x * waves + w) * vb + (lane % column_lanes) * cpl + c;
  }
  /// Row group m (0 .. G-1) of lane `lane`: rows [32 r, 32 r + 32).
  NETRA_HOST_DEVICE static constexpr u32 row_group(u32 lane, u32 m) { return (lane / column_lanes) * groups_per_lane + m; }

  /// The L2 prefetch of what workgroup n + P of the launch order reads (nothing for a workgroup that commits nothing).
  static NETRA_DEVICE void prefetch_later(const params& p, u32 x, u32 hv, u32 b) {
    const auto n = gdn_prefetch::ahead(x, hv, b, blocks_x, gdn::heads_v, p.batch, Contract::prefetch_ahead);
    if (n.valid) inputs::prefetch(p, n.x, n.y, n.z, state_of(p, slot_of(p, n.z), n.y, n.x * columns), columns * column_bytes);
  }
  static NETRA_DEVICE void run(const params& p) {
    if constexpr (Contract::persistent == 0) {
      const gdn_pipeline::item3 n{workgroup_id<target, 0>(), workgroup_id<target, 1>(), workgroup_id<target, 2>()};
      if constexpr (Contract::prefetch_ahead > 0) prefetch_later(p, n.x, n.hv, n.b);
      item(p, n, {});
    } else {
      NETRA_DYNAMIC_SHARED_BYTES(lds);
      const u32 items = blocks_x * gdn::heads_v * p.batch, step = gdn_pipeline::workgroups(Contract::persistent, items);
      const pipe buf{lds, thread_id<target>()};
      u32 n = workgroup_id<target, 0>();
      copy_state(p, buf, gdn_pipeline::item(n, blocks_x));
      for (; n < items; n += step) item(p, gdn_pipeline::item(n, blocks_x), buf, n + step < items, gdn_pipeline::item(n + step, blocks_x));
    }
  }

 private:
  using pipe = gdn_pipeline::buffer<target, workgroup_size>;
  static constexpr u32 blocks_x = gdn::value_dim / columns;
  static constexpr u64 column_bytes = u64{gdn::key_dim} * gdn::state_bytes_per_element(Contract::state_storage);
  static constexpr u32 vectors = gdn_state_io::vectors<Contract::state_storage>;
  /// The resolved slot of request b: the requested one, or the sentinel (the pool's last).
  static NETRA_DEVICE u64 slot_of(const params& p, u32 b) {
    const i32 requested = p.slots[b];
    return static_cast<u32>(requested) < static_cast<u32>(p.state_slots - 1) ? static_cast<u32>(requested) : static_cast<u32>(p.state_slots - 1);
  }
  /// Column j of v head hv in slot `slot` of the pool.
  static NETRA_DEVICE char* state_of(const params& p, u64 slot, u32 hv, u32 j) {
    return static_cast<char*>(p.state) + ((slot * gdn::heads_v + hv) * gdn::value_dim + j) * column_bytes;
  }
  /// Row group m of the lane's column c, from column j's base.
  static NETRA_DEVICE u64 group_offset(u32 lane, u32 c, u32 m) { return c * column_bytes + row_group(lane, m) * rows * gdn::state_bytes_per_element(Contract::state_storage); }
  /// Persistent: this thread's state vectors of item n into its LDS slots.
  static NETRA_DEVICE void copy_state(const params& p, const pipe& buf, gdn_pipeline::item3 n) {
    const u32 lane = lane_id<target>();
    const char* base = state_of(p, slot_of(p, n.b), n.hv, column(n.x, waves == 1 ? 0u : wave_id<target>(), lane));
    NETRA_UNROLL
    for (u32 c = 0; c < cpl; ++c)
      NETRA_UNROLL
      for (u32 m = 0; m < groups_per_lane; ++m)
        NETRA_UNROLL
        for (u32 e = 0; e < vectors; ++e) buf.copy((c * groups_per_lane + m) * vectors + e, base + group_offset(lane, c, m) + 16 * e);
    buf.commit();
  }

  /// One workgroup's work: the tokens of columns x of v head hv of request b. Persistent: the
  /// state from `buf`, and the copy of item `next` (if `more`) once the token block is staged.
  static NETRA_DEVICE void item(const params& p, gdn_pipeline::item3 n, [[maybe_unused]] const pipe& buf, [[maybe_unused]] bool more = false,
                                [[maybe_unused]] gdn_pipeline::item3 next = {}) {
    constexpr bool persistent = Contract::persistent > 0;
    const u32 lane = lane_id<target>();
    const u32 x = n.x, hv = n.hv, b = n.b;
    const u32 j = column(x, waves == 1 ? 0u : wave_id<target>(), lane);  // the lane's first column
    const bool real = static_cast<u32>(p.slots[b]) < static_cast<u32>(p.state_slots - 1);
    char* const column_base = state_of(p, slot_of(p, b), hv, j);
    u32 count = tokens;
    if constexpr (persistent) buf.wait();
    if constexpr (commit == gdn::state_commit::accepted_prefix) {
      count = static_cast<u32>(p.accepted[b]);
      if (!real || count == 0 || count > tokens) {  // nothing to commit (uniform over the workgroup)
        if constexpr (persistent)
          if (more) copy_state(p, buf, next);
        return;
      }
    }

    float s[cpl][groups_per_lane][rows];
    NETRA_UNROLL
    for (u32 c = 0; c < cpl; ++c)
      NETRA_UNROLL
      for (u32 m = 0; m < groups_per_lane; ++m) {
        if constexpr (persistent) gdn_state_io::unpack<Contract::state_storage>([&](u32 e) { return buf.read((c * groups_per_lane + m) * vectors + e); }, s[c][m]);
        else gdn_state_io::load<target, Contract::state_storage>(column_base + group_offset(lane, c, m), s[c][m]);
      }

    const u32 head = hv / (gdn::heads_v / gdn::heads_qk);
    const u64 row0 = u64{b} * tokens;
    const stage* sh = nullptr;
    if constexpr (staged) {
      NETRA_SHARED stage block;
      if constexpr (persistent) workgroup_barrier<target>();  // the previous item's token loop is done with the block
      inputs::stage_block(p, block, row0, x, hv, head);
      sh = &block;
    }
    if constexpr (persistent)
      if (more) copy_state(p, buf, next), inputs::prefetch(p, next.x, next.hv, next.b, nullptr);  // after the barrier that follows every thread's reads
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
        for (u32 m = 0; m < groups_per_lane; ++m) gdn_state_io::store<target, Contract::state_storage>(column_base + group_offset(lane, c, m), s[c][m]);
    }
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
          u32 Fused, u32 Persistent, u32 WaveSize>
struct kernels_of<contracts::gdn_recurrent<Target, Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused, Persistent, WaveSize>> {
  using contract = contracts::gdn_recurrent<Target, Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused, Persistent, WaveSize>;
  using type = conditional_t<Commit == gdn::state_commit::accepted_prefix, type_list<gdn_recurrent_core<contract>, gdn_conv_commit<contract>>,
                             type_list<gdn_recurrent_core<contract>>>;
};

}  // namespace netra::kernels
