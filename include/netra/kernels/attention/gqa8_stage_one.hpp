// netra/kernels/attention/gqa8_stage_one.hpp — stage one of contracts::attention_gqa8: one
// workgroup per (slice, KV head, request) computes the slice's online softmax for the 8 * Tq query
// rows that share the KV head (the KV group, not the query head, is the unit of reuse: every K/V
// byte the workgroup loads serves 8 heads, and in verify 8 heads x Tq tokens).
//
// Grid (slices, 2, batch); Tq * BlockWarps waves; wave (tg, bw) = (wave / BlockWarps, wave %
// BlockWarps) owns query token tg (its 8 heads are the plan's 8 rows) and the slice's blocks bw,
// bw + BlockWarps, ... (blocks of 64 positions). The slice streams through an LDS ring of Stages
// pieces; piece n is the K (n even) or V (n odd) of round n / 2, i.e. the blocks round *
// BlockWarps + 0 .. BlockWarps - 1, every thread copying 16-byte chunks (dsl/async_copy.hpp,
// masked positions zero-filled and never read) at the slot ids of an LDS table that the threads
// fill a round ahead (their index loads issued two iterations before the table is written). Iteration n waits
// for its piece, passes one workgroup barrier, issues piece n + Stages - 1 into the slot freed by
// iteration n - 1, then its wave computes: K piece: scores (plan qk, x k_scale / 16), masked to
// -inf (invalid, causal), block max and the online-softmax step (dsl/online_softmax.hpp); V piece:
// o = o * alpha + P V (plan pv). The epilogue writes every wave's (m, l, o) to LDS, then each
// thread merges the BlockWarps states of its (row, d) elements in wave order and writes BF16 out
// (slices = 1) or the slice's (m, l, o) to the workspace for stage two. No atomics.
#pragma once
#include "netra/dsl/async_copy.hpp"
#include "netra/dsl/attention_fragment.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/online_softmax.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/attention/gqa8_geometry.hpp"

namespace netra::kernels {

template <class Contract> struct attention_gqa8_stage_one {
  using target = typename Contract::target;
  using plan = attention_plan_of<target>;
  using request = attention_gqa8_request<Contract>;
  using params = attention_gqa8_args;
  static constexpr const char* symbol = "netra_attention_gqa8_stage_one";
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr u32 dynamic_lds_bytes = Contract::lds_bytes;
  static constexpr bool programmatic_dependent_launch = false;
  static constexpr bool prefers_max_lds = true;
  static constexpr u32 min_workgroups_per_processor = 1;  // one workgroup per SM / CU: its LDS ring
  static constexpr u32 BW = Contract::block_warps, S = Contract::stages, block_bytes = 64 * 256;
  static constexpr u32 chunks_per_piece = BW * block_bytes / 16;
  static constexpr u32 copies_per_thread = ceil_div(chunks_per_piece, workgroup_size);
  static_assert(plan::rows == Contract::group && plan::head_dim == Contract::head_dim && plan::block == Contract::block,
                "netra::kernels::attention_gqa8_stage_one: the plan's tile is not the contract's");

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch, u32 slices) {
    return {{slices, Contract::kv_heads, batch}, workgroup_size, dynamic_lds_bytes};
  }

  struct slice_view {
    request r;
    i64 start, end;  // positions [start, end) of this slice
    u32 blocks, pieces, rounds;
  };
  struct lds_layout {
    u8* ring;       // [Stages][BlockWarps][64 x 256] E4M3, reused by the epilogue
    u16* q;         // [Tq][8][256] BF16
    i64* table;     // [table_rounds][BlockWarps * 64] slot ids (-1: masked)
    float* stats;   // [waves][8][2]
  };

  /// The thread's look-ups of one round: its positions i = thread + k * workgroup_size of the
  /// round's BlockWarps * 64, their page-table entries loaded by start() and turned into slot
  /// ids in the round's table slot by finish() (read after the next barrier). start() runs two
  /// iterations before finish(), so no wave waits on an index load (a loaded-memory latency).
  struct look_up {
    static constexpr u32 per_thread = ceil_div(BW * 64, workgroup_size);
    i64 page[per_thread];
    u32 round;
    NETRA_DEVICE i64 position(const slice_view& v, u32 k) const {
      const u32 i = thread_id<target>() + k * workgroup_size;
      const u32 blk = round * BW + i / 64;
      const i64 at = v.start + 64 * static_cast<i64>(blk) + i % 64;
      return i < BW * 64 && round < v.rounds && blk < v.blocks && at < v.end ? at : -1;
    }
    NETRA_DEVICE void start(const params& p, const slice_view& v, u32 r) {
      round = r;
      NETRA_UNROLL
      for (u32 k = 0; k < per_thread; ++k) {
        const i64 at = position(v, k);
        page[k] = at < 0 ? -1 : v.r.page_of(p, at);
      }
    }
    NETRA_DEVICE void finish(const params& p, const slice_view& v, const lds_layout& l) const {
      NETRA_UNROLL
      for (u32 k = 0; k < per_thread; ++k) {
        const u32 i = thread_id<target>() + k * workgroup_size;
        const i64 at = position(v, k);
        if (i < BW * 64) l.table[(round % Contract::table_rounds) * BW * 64 + i] = at < 0 ? -1 : request::slot_of(p, page[k], at);
      }
    }
  };
  /// Rounds whose slots the prologue looks up (the pieces issued before the loop and at its
  /// first iterations need them); the loop looks up round R at iteration 2R - Stages.
  static constexpr u32 prologue_rounds = S / 2 + 1;
  static_assert(prologue_rounds <= Contract::table_rounds, "netra::kernels::attention_gqa8_stage_one: the slot table is too short");

  static NETRA_DEVICE void issue(const params& p, const slice_view& v, u32 kv_head, u32 n, const lds_layout& l) {
    if (n < v.pieces) {
      const u32 slot = n % S;
      const bool is_v = n % 2 == 1;
      const u8* pool = is_v ? p.v_buffer : p.k_buffer;
      const i64* ids = l.table + ((n / 2) % Contract::table_rounds) * BW * 64;
      NETRA_UNROLL
      for (u32 k = 0; k < copies_per_thread; ++k) {
        const u32 c = thread_id<target>() + k * workgroup_size;
        if (chunks_per_piece % workgroup_size == 0 || c < chunks_per_piece) {
          const u32 bl = c / (block_bytes / 16), pos = (c / 16) % 64, chunk = c % 16;
          const i64 id = ids[bl * 64 + pos];
          const u8* src = pool + (static_cast<u64>(id < 0 ? 0 : id) * Contract::kv_heads + kv_head) * Contract::head_dim + 16 * chunk;
          u8* dst = l.ring + slot * Contract::piece_bytes + bl * block_bytes + 16 * (is_v ? staged_v_chunk(pos, chunk) : staged_k_chunk(pos, chunk));
          copy_16B_to_lds<target>(dst, src, id >= 0);
        }
      }
    }
    commit_lds_copies<target>();
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_DYNAMIC_SHARED_BYTES(lds);
    lds_layout l;
    l.ring = lds;
    l.q = reinterpret_cast<u16*>(lds + max_of(Contract::ring_bytes, Contract::epilogue_bytes));
    l.table = reinterpret_cast<i64*>(reinterpret_cast<u8*>(l.q) + Contract::q_bytes);
    l.stats = reinterpret_cast<float*>(reinterpret_cast<u8*>(l.table) + Contract::table_bytes);
    float* epilogue = reinterpret_cast<float*>(lds);  // [waves][8][256], after the ring
    const u32 slice = workgroup_id<target, 0>(), kv_head = workgroup_id<target, 1>(), b = workgroup_id<target, 2>();
    const u32 wave = wave_id<target>(), lane = lane_id<target>(), tg = wave / BW, bw = wave % BW;

    slice_view v;
    v.r = request::read(p, b);
    if (!v.r.writable) return;  // uniform over the workgroup
    const u32 chunk = Contract::chunk_for(static_cast<u32>(min_of(v.r.length, i64{1} << 30)), p.slices);
    v.start = static_cast<i64>(slice) * chunk;
    v.end = min_of(v.start + chunk, v.r.length);
    v.blocks = v.start < v.end ? static_cast<u32>(ceil_div(v.end - v.start, i64{64})) : 0u;
    v.rounds = ceil_div(v.blocks, BW);
    v.pieces = 2 * v.rounds;
    const i64 visible_end = Contract::visible_end(v.r.length, tg);  // causal limit of token tg
    const float score_scale = mul_rn(*p.k_scale, Contract::softmax_scale), v_scale = *p.v_scale;

    // The workgroup's queries into LDS (token t, head kv_head * 8 + r), and the first rounds' slots.
    for (u32 c = thread_id<target>(); c < Contract::q_bytes / 16; c += workgroup_size) {
      const u32 row = c / 32, t = row / plan::rows, r = row % plan::rows;
      const u16* src = p.q + (static_cast<u64>(v.r.first_token + t) * Contract::q_heads + kv_head * Contract::group + r) * Contract::head_dim + 8 * (c % 32);
      *reinterpret_cast<u32x4*>(l.q + 8 * c) = load_16B<target>(src);
    }
    look_up lookups;
    for (u32 round = 0; round < prologue_rounds; ++round) {
      lookups.start(p, v, round);
      lookups.finish(p, v, l);
    }
    lookups.start(p, v, prologue_rounds);
    workgroup_barrier<target>();
    const u16* q_rows = l.q + tg * plan::rows * Contract::head_dim;
    auto read_q = [&](u32 j) {
      const fragment_element e = plan::q_load(lane, j);
      return e.row < plan::rows ? *reinterpret_cast<const u32x4*>(q_rows + e.row * Contract::head_dim + e.col) : u32x4{0, 0, 0, 0};
    };

    for (u32 n = 0; n + 1 < S; ++n) issue(p, v, kv_head, n, l);
    softmax_stats st = softmax_empty();
    float o[plan::o_items];
    NETRA_UNROLL
    for (u32 i = 0; i < plan::o_items; ++i) o[i] = 0.0f;
    u32 pb[plan::scores / 2] = {};
    float alpha_rows[plan::o_row_slots] = {};
    for (u32 n = 0; n < v.pieces; ++n) {
      wait_lds_copies<target, S - 2>();
      workgroup_barrier<target>();
      issue(p, v, kv_head, n + S - 1, l);
      if ((n + S) % 2 == 0 && (n + S) / 2 >= prologue_rounds) {  // round (n + S) / 2 was started two iterations ago
        lookups.finish(p, v, l);
        lookups.start(p, v, (n + S) / 2 + 1);
      }
      const u8* piece = l.ring + (n % S) * Contract::piece_bytes + bw * block_bytes;
      const u32 blk = (n / 2) * BW + bw;
      if (n % 2 == 0) {
        float s[plan::scores];
        plan::qk(s, read_q, [&](u32 j) {
          const fragment_element e = plan::k_read(lane, j);
          return *reinterpret_cast<const u32x4*>(piece + 16 * staged_k_chunk(e.row, e.col));
        });
        const i64* ids = l.table + ((n / 2) % Contract::table_rounds) * BW * 64 + bw * 64;
        float m_block = negative_infinity();
        NETRA_UNROLL
        for (u32 i = 0; i < plan::scores; ++i) {
          const fragment_element e = plan::score_of(lane, i);
          const bool keep = e.row < plan::rows && ids[e.col] >= 0 && v.start + 64 * static_cast<i64>(blk) + e.col < visible_end;
          s[i] = keep ? mul_rn(s[i], score_scale) : negative_infinity();
          m_block = max_of(m_block, s[i]);
        }
        m_block = max_of(m_block, xor_shuffle_f32<target>(m_block, plan::row_mask(0)));
        m_block = max_of(m_block, xor_shuffle_f32<target>(m_block, plan::row_mask(1)));
        const float m_new = max_of(st.m, m_block);
        float l_block = 0.0f;
        NETRA_UNROLL
        for (u32 w = 0; w < plan::scores / 2; ++w) {
          pb[w] = pack_bf16x2<target>(softmax_weight(s[2 * w], m_new), softmax_weight(s[2 * w + 1], m_new));
          l_block = add_rn(l_block, f32_from_bf16(static_cast<u16>(pb[w])));
          l_block = add_rn(l_block, f32_from_bf16(static_cast<u16>(pb[w] >> 16)));
        }
        l_block = add_rn(l_block, xor_shuffle_f32<target>(l_block, plan::row_mask(0)));
        l_block = add_rn(l_block, xor_shuffle_f32<target>(l_block, plan::row_mask(1)));
        const softmax_merge_factors f = softmax_merge(st, {m_new, l_block});
        st = f.merged;
        NETRA_UNROLL
        for (u32 k = 0; k < plan::o_row_slots; ++k)
          alpha_rows[k] = plan::o_rows_are_score_rows
                              ? f.alpha
                              : bit_cast<float>(wave_broadcast<target>(bit_cast<u32>(f.alpha), plan::stats_lane(plan::o_row(lane, k))));
      } else {
        NETRA_UNROLL
        for (u32 i = 0; i < plan::o_items; ++i) o[i] = mul_rn(o[i], alpha_rows[plan::o_row_slot(i)]);
        plan::pv(o, pb, [&](u32 j) {
          const fragment_element e = plan::v_read(lane, j);
          return *reinterpret_cast<const u32x4*>(piece + 16 * staged_v_chunk(e.row, e.col));
        });
      }
    }

    workgroup_barrier<target>();  // every wave is done with the ring
    NETRA_UNROLL
    for (u32 i = 0; i < plan::o_items; ++i) {
      const fragment_element e = plan::o_of(lane, i);
      if (e.row < plan::rows) epilogue[(wave * plan::rows + e.row) * Contract::head_dim + e.col] = o[i];
    }
    const u32 my_row = plan::score_of(lane, 0).row;
    if (my_row < plan::rows && plan::stats_lane(my_row) == lane) {
      l.stats[(wave * plan::rows + my_row) * 2] = st.m;
      l.stats[(wave * plan::rows + my_row) * 2 + 1] = st.l;
    }
    workgroup_barrier<target>();
    for (u32 e = thread_id<target>(); e < Contract::rows * Contract::head_dim; e += workgroup_size) {
      const u32 row = e / Contract::head_dim, d = e % Contract::head_dim, t = row / plan::rows, r = row % plan::rows;
      const u32 w0 = t * BW;
      softmax_stats m = {l.stats[(w0 * plan::rows + r) * 2], l.stats[(w0 * plan::rows + r) * 2 + 1]};
      float acc = epilogue[(w0 * plan::rows + r) * Contract::head_dim + d];
      for (u32 w = w0 + 1; w < w0 + BW; ++w) {
        const softmax_merge_factors f = softmax_merge(m, {l.stats[(w * plan::rows + r) * 2], l.stats[(w * plan::rows + r) * 2 + 1]});
        acc = softmax_merge_value(acc, epilogue[(w * plan::rows + r) * Contract::head_dim + d], f);
        m = f.merged;
      }
      if (p.slices == 1) {
        const u64 at = (static_cast<u64>(v.r.first_token + t) * Contract::q_heads + kv_head * Contract::group + r) * Contract::head_dim + d;
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
