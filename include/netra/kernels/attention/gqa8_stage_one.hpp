// netra/kernels/attention/gqa8_stage_one.hpp — stage one of contracts::attention_gqa8 through an
// LDS ring (Stages >= 2; the kernel interface is attention_gqa8_stage_one, gqa8.hpp): one
// workgroup per (slice, KV head, request) computes the slice's online softmax for the 8 * Tq query
// rows that share the KV head (the KV group, not the query head, is the unit of reuse: every K/V
// byte the workgroup loads serves 8 heads, and in verify 8 heads x Tq tokens).
//
// Grid (slices, 2, batch); Tq / T * BlockWarps waves (T = Contract::tokens_per_wave); wave (tg, bw)
// = (wave / BlockWarps, wave % BlockWarps) owns query tokens T tg .. T tg + T - 1 (their 8 heads
// each are the plan's rows, gqa8_wave_plan.hpp) and the slice's blocks bw, bw + BlockWarps, ...
// (blocks of 64 positions). The slice streams through an LDS ring of Stages
// pieces; piece n is the K (n even) or V (n odd) of round n / 2, i.e. the blocks round *
// BlockWarps + 0 .. BlockWarps - 1, every thread copying 16-byte chunks (dsl/async_copy.hpp,
// masked positions zero-filled and never read) at the slot ids of an LDS table that the threads
// fill a round ahead (their index loads issued two iterations before the table is written). Iteration n waits
// for its piece, passes one workgroup barrier, issues piece n + Stages - 1 into the slot freed by
// iteration n - 1 (with widen_once, Tq > 1: the workgroup then widens piece n to BF16 in LDS,
// wide_slot layout, and passes a second barrier), then its wave computes: K piece: scores (plan qk,
// x k_scale / 16), masked to -inf (invalid, causal), block max and the online-softmax step (dsl/online_softmax.hpp); V piece:
// o = o * alpha + P V (plan pv). The epilogue (gqa8_wave.hpp) merges the waves in order and writes
// BF16 out (slices = 1) or the slice's (m, l, o) to the workspace for stage two. No atomics.
//
// BlockSplit 2 (verify): each wave of the order is two warps (workgroup warps 2 wave, 2 wave + 1;
// gqa8_block_split.hpp with a compile-time j). At a K piece warp j computes the scores of N-tiles
// [4j, 4j + 4) and writes them into its wave's exchange rows; at the next (V) piece, after that
// iteration's barriers, both warps read the whole block's scores back, take the same block step
// (the same m, l, P) and rescale and add P V on their half of the head dimension only (groups of
// half j, from only those V words). The rows are rewritten only after the barriers of the iteration
// after that, so one block of rows and no added barrier suffice. Every score and o element comes
// from the instructions and order of BlockSplit 1, so the bits are the unsplit verify's.
#pragma once
#include "netra/dsl/async_copy.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/kernels/attention/gqa8_block_split.hpp"
#include "netra/kernels/attention/gqa8_wave.hpp"

namespace netra::kernels {

template <class Contract> struct attention_gqa8_ring_staging {
  using wave_ops = attention_gqa8_wave<Contract>;
  using target = typename wave_ops::target;
  using plan = typename wave_ops::plan;
  using request = attention_gqa8_request<Contract>;
  using params = attention_gqa8_args;
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr u32 BW = Contract::block_warps, S = Contract::stages, block_bytes = 64 * 256;
  /// BlockSplit (1 for a contract that does not say: the GQA4 extend's pair view) and its exchange.
  static constexpr u32 Split = [] {
    if constexpr (requires { Contract::block_split; }) return Contract::block_split;
    else return 1u;
  }();
  static constexpr u32 exchange_bytes = [] {
    if constexpr (Split > 1) return Contract::exchange_bytes;
    else return 0u;
  }();
  static constexpr u32 score_stride = 64 + 8;  // the exchange's row (Contract::score_row_floats)
  static constexpr bool widen_once = requires { requires Contract::widen_once; };
  static constexpr u32 chunks_per_piece = BW * block_bytes / 16;
  static constexpr u32 copies_per_thread = ceil_div(chunks_per_piece, workgroup_size);

  struct slice_view : wave_ops::slice {
    u32 pieces, rounds;
  };
  struct lds_layout {
    u8* ring;       // [Stages][BlockWarps][64 x 256] E4M3, reused by the epilogue
    u16* q;         // [Tq][8][256] BF16
    i64* table;     // [table_rounds][BlockWarps * 64] slot ids (-1: masked)
    float* stats;   // [waves][8][2]
    float* exchange;  // BlockSplit 2: [waves][rows][72] the K piece's scores
    u64* wide;      // widen_once: [BlockWarps][64 x 4 x 16] BF16 x 4 (wide_slot), the piece widened
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
  static_assert(prologue_rounds <= Contract::table_rounds, "netra::kernels::attention_gqa8_ring_staging: the slot table is too short");

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

  /// widen_once: the workgroup widens piece n (after the barrier that ends every wave's use of the
  /// last one) into l.wide, then a barrier.
  static NETRA_DEVICE void widen_piece(const lds_layout& l, u32 n) {
    const u8* whole = l.ring + (n % S) * Contract::piece_bytes;
    const bool is_v = n % 2 == 1;
    for (u32 c = thread_id<target>(); c < BW * block_bytes / 16; c += workgroup_size) {
      const u32 bl = c / (block_bytes / 16), pos = (c / 16) % 64, chunk = c % 16;
      const u32x4 x = *reinterpret_cast<const u32x4*>(whole + bl * block_bytes + 16 * (is_v ? staged_v_chunk(pos, chunk) : staged_k_chunk(pos, chunk)));
      NETRA_UNROLL
      for (u32 i = 0; i < 4; ++i) {
        const bf16x4 b = e4m3x4_to_bf16x4<target>(x[static_cast<int>(i)]);
        l.wide[bl * block_bytes / 4 + wide_slot(is_v, pos, chunk, i)] = static_cast<u64>(b.lo) | static_cast<u64>(b.hi) << 32;
      }
    }
    workgroup_barrier<target>();
  }

  static NETRA_DEVICE void run(const params& p) {
    if constexpr (Split == 1) {
      run_as<0>(p);
    } else {
      static_assert(Split == 2 && Contract::score_row_floats == score_stride, "netra::kernels::attention_gqa8_ring_staging: BlockSplit 1 or 2");
      wave_id<target>() % 2 == 0 ? run_as<0>(p) : run_as<1>(p);
    }
  }

  /// Warp J of its wave's BlockSplit warps (uniform over the warp; BlockSplit 1: the wave itself).
  template <u32 J> static NETRA_DEVICE void run_as(const params& p) {
    using split = gqa8_block_split<plan, Split, J>;
    NETRA_DYNAMIC_SHARED_BYTES(lds);
    lds_layout l;
    l.ring = lds;
    l.q = reinterpret_cast<u16*>(lds + max_of(Contract::ring_bytes, Contract::epilogue_bytes));
    l.table = reinterpret_cast<i64*>(reinterpret_cast<u8*>(l.q) + Contract::q_bytes);
    l.stats = reinterpret_cast<float*>(reinterpret_cast<u8*>(l.table) + Contract::table_bytes);
    l.exchange = reinterpret_cast<float*>(reinterpret_cast<u8*>(l.stats) + Contract::stats_bytes);
    l.wide = reinterpret_cast<u64*>(reinterpret_cast<u8*>(l.exchange) + exchange_bytes);
    float* epilogue = reinterpret_cast<float*>(lds);  // [waves][8][256], after the ring
    const u32 slice = workgroup_id<target, 0>(), kv_head = workgroup_id<target, 1>(), b = workgroup_id<target, 2>();
    const u32 wave = wave_id<target>() / Split, lane = lane_id<target>(), tg = wave / BW, bw = wave % BW;
    float* exchange = l.exchange + wave * plan::rows * score_stride;

    slice_view v;
    static_cast<typename wave_ops::slice&>(v) = wave_ops::slice_of(p, b, slice);
    if (!v.r.writable) return;  // uniform over the workgroup
    v.rounds = ceil_div(v.blocks, BW);
    v.pieces = 2 * v.rounds;
    i64 visible_end[plan::tokens];  // causal limit of each of the wave's tokens
    NETRA_UNROLL
    for (u32 k = 0; k < plan::tokens; ++k) visible_end[k] = Contract::visible_end(v.r.length, plan::tokens * tg + k);
    const float score_scale = mul_rn(*p.k_scale, Contract::softmax_scale), v_scale = *p.v_scale;

    // The workgroup's queries into LDS, and the first rounds' slots.
    wave_ops::load_queries(p, v.r, kv_head, l.q);
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
    typename wave_ops::state w;
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
      if constexpr (widen_once) widen_piece(l, n);
      const u64* wide = l.wide + bw * block_bytes / 4;
      auto reader = [&](bool is_v) {
        return [&, is_v](u32 j) {
          const fragment_element e = is_v ? plan::v_read(lane, j) : plan::k_read(lane, j);
          if constexpr (widen_once) {
            wide_chunk x;
            NETRA_UNROLL
            for (u32 i = 0; i < 4; ++i) {
              const u64 bits = wide[wide_slot(is_v, e.row, e.col, i)];
              x.w[i] = {static_cast<u32>(bits), static_cast<u32>(bits >> 32)};
            }
            return x;
          } else {
            return widened<target>([&](u32) {
              return *reinterpret_cast<const u32x4*>(piece + 16 * (is_v ? staged_v_chunk(e.row, e.col) : staged_k_chunk(e.row, e.col)));
            })(j);
          }
        };
      };
      if (n % 2 == 0) {
        float s[plan::scores];
        plan::template qk<split::t0, split::t1>(s, read_q, reader(false));
        if constexpr (Split == 1) {  // the block step (with BlockSplit 2: at the V piece, the same predicate spelled there)
          const i64* ids = l.table + ((n / 2) % Contract::table_rounds) * BW * 64 + bw * 64;
          wave_ops::block_step(w, s, score_scale, [&](u32, fragment_element e) {
            return e.row < plan::rows && ids[e.col] >= 0 && v.start + 64 * static_cast<i64>(blk) + e.col < visible_end[e.row / Contract::group];
          });
        } else {
          split::template write_scores<score_stride>(s, exchange, lane_id<target>());  // read back after the next iteration's barriers
        }
      } else {
        if constexpr (Split > 1) {
          float s[plan::scores];
          split::template read_scores<score_stride>(s, exchange, lane);
          const i64* ids = l.table + ((n / 2) % Contract::table_rounds) * BW * 64 + bw * 64;
          wave_ops::block_step(w, s, score_scale, [&](u32, fragment_element e) {
            return e.row < plan::rows && ids[e.col] >= 0 && v.start + 64 * static_cast<i64>(blk) + e.col < visible_end[e.row / Contract::group];
          });
        }
        wave_ops::rescale(w, [](u32 i) { return split::owns_o_item(i); });
        plan::template pv<split::g0, split::g1>(w.o, w.pb, reader(true));
      }
    }

    workgroup_barrier<target>();  // every wave is done with the ring
    if constexpr (Split == 1) wave_ops::finish(p, v.r, b, slice, kv_head, epilogue, l.stats, w, v_scale);
    else wave_ops::finish(p, v.r, b, slice, kv_head, epilogue, l.stats, w, v_scale, wave, [](u32 i) { return split::owns_o_item(i); }, J == 0);
  }
};

}  // namespace netra::kernels
