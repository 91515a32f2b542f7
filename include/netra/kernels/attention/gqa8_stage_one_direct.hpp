// netra/kernels/attention/gqa8_stage_one_direct.hpp — stage one of contracts::attention_gqa8 with
// Stages = 0 (decode only; the kernel interface is attention_gqa8_stage_one, gqa8.hpp): the
// slices, blocks, waves and association order of gqa8_stage_one.hpp (gqa8_wave.hpp holds what the
// two share), with no LDS ring. Every K or V byte of a decode call
// serves one wave, so each wave loads its blocks' pieces from the pools straight into registers in
// the plan's read order (k_read / v_read name 16 contiguous bytes of one position's row).
//
// Grid (slices, 2, batch); BlockWarps waves, wave w owns blocks w, w + BlockWarps, ... of the
// slice and walks them on its own (no workgroup barrier until the epilogue). A block is
// plan::qk_chunks K parts (plan::qk_chunk c: the K pieces k(4n + c)) then plan::pv_steps V parts
// (plan::pv_step kk: the V pieces v(8kk + i)); two register buffers alternate, part i + 1 (the next
// block's first part after the last) loaded before part i is computed. After the K parts: the
// block's online-softmax step and o *= alpha; the V parts add P V. A block's slot ids sit in the
// wave's LDS table of two blocks: lane l looks up positions l, l + wave size of the next block
// (its page-table loads issued at the block's start, its slots stored before the last part, one
// wave barrier). Masked positions (outside the slice, the page table or the pool) load zeros and
// score -inf. LDS: every wave's epilogue o, the queries, the tables, the (m, l) of each wave.
// Before its epilogue a workgroup lets stage two launch (programmatic dependent launch).
//
// BlockSplit S > 1: each wave of the order is S warps (BlockWarps * S warps a workgroup; warp j
// of wave w is workgroup warp S w + j, run with j a compile-time value): warp j loads and computes
// the K parts of its score tiles and the V words of its PV groups only (gqa8_block_split.hpp),
// writes its scores into its wave's exchange rows (two blocks, in the epilogue's bytes), and after
// one workgroup barrier a block reads the whole block's scores back and takes the wave's
// online-softmax step itself (the S warps hold the same m, l, P); it rescales and adds P V on its
// own o items, and in the epilogue stores those (warp 0 the (m, l)). Every warp of the workgroup
// takes ceil(blocks / BlockWarps) rounds (a wave past its last block only meets the barriers), and
// each warp keeps its own table of slot ids.
#pragma once
#include "netra/dsl/entry.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/kernels/attention/gqa8_block_split.hpp"
#include "netra/kernels/attention/gqa8_wave.hpp"

namespace netra::kernels {

template <class Contract> struct attention_gqa8_direct_staging {
  using wave_ops = attention_gqa8_wave<Contract>;
  using target = typename wave_ops::target;
  using plan = typename wave_ops::plan;
  using request = attention_gqa8_request<Contract>;
  using params = attention_gqa8_args;
  static constexpr u32 BW = Contract::block_warps, S = Contract::block_split, wave = target::wave_size;
  static constexpr u32 k_pieces = plan::k_reads / plan::qk_chunks, v_pieces = plan::v_reads / plan::pv_steps;
  static constexpr u32 pieces = max_of(k_pieces, v_pieces), parts = plan::qk_chunks + plan::pv_steps;
  static constexpr u32 ids_per_lane = Contract::block / wave, score_stride = Contract::score_row_floats;
  /// The block step's weights (block_weights.hpp; the same bits either way): branch-free where a
  /// warp takes whole blocks (H200, lab row attention_decode_weight_of_max: 2-5 % faster at B 4 to
  /// 128), by branch with BlockSplit (its extra registers halve 2 x 0 / 4's workgroups a SM).
  using weight = conditional_t<S == 1, weight_of_max, weight_by_branch>;
  static_assert(Contract::tq == 1 && Contract::stages == 0, "netra::kernels::attention_gqa8_direct_staging: decode with Stages = 0 only");
  static_assert(parts % 2 == 0 && Contract::block % wave == 0, "netra::kernels::attention_gqa8_direct_staging: the buffers alternate per block");
  static_assert(Contract::table_bytes == Contract::warps * 2 * Contract::block * 8, "netra::kernels::attention_gqa8_direct_staging: table size");
  static_assert(S == 1 || Contract::exchange_bytes == BW * 2 * plan::rows * score_stride * 4, "netra::kernels::attention_gqa8_direct_staging: exchange size");

  /// The lane's look-ups of one block: page-table entries loaded by start(), slots stored by finish().
  struct look_ahead {
    i64 page[ids_per_lane];
    i64 at[ids_per_lane];
    NETRA_DEVICE void start(const params& p, const typename wave_ops::slice& v, u32 blk) {
      NETRA_UNROLL
      for (u32 k = 0; k < ids_per_lane; ++k) {
        at[k] = v.start + static_cast<i64>(Contract::block) * blk + lane_id<target>() + k * wave;
        page[k] = blk < v.blocks && at[k] < v.end ? v.r.page_of(p, at[k]) : -1;
      }
    }
    NETRA_DEVICE void finish(const params& p, i64* ids) const {
      NETRA_UNROLL
      for (u32 k = 0; k < ids_per_lane; ++k) ids[lane_id<target>() + k * wave] = page[k] < 0 ? -1 : request::slot_of(p, page[k], at[k]);
    }
  };

  /// Words [W0, W1) of the 16 bytes at `at` (the others 0): one 16-, 8- or 4-byte load.
  template <u32 W0, u32 W1> static NETRA_DEVICE u32x4 load_words(const u8* at) {
    if constexpr (W1 - W0 == 4) {
      return load_16B<target>(at);
    } else {
      static_assert(W1 - W0 == 1 || W1 - W0 == 2, "netra::kernels::attention_gqa8_direct_staging: 1, 2 or 4 words");
      u32x2 x;
      if constexpr (W1 - W0 == 2) x = *reinterpret_cast<const u32x2*>(at + 4 * W0);
      else x = {*reinterpret_cast<const u32*>(at + 4 * W0), 0u};
      const auto word = [&](u32 i) { return i == W0 ? x.x : i == W0 + 1 ? x.y : 0u; };
      return u32x4{word(0), word(1), word(2), word(3)};
    }
  }

  /// A K piece (16 bytes) or the warp's words of a V piece.
  template <class Split> static NETRA_DEVICE u32x4 load_piece(bool is_v, const u8* at) {
    if constexpr (Split::w1 - Split::w0 == 4) return load_16B<target>(at);
    else return is_v ? load_words<Split::w0, Split::w1>(at) : load_16B<target>(at);
  }

  /// Part `part` of the block whose slot ids are `ids` into `buf`: warp j's K tiles or V words
  /// (gqa8_block_split.hpp; zeros at masked positions).
  template <class Split> static NETRA_DEVICE void load_part(const params& p, u32 kv_head, const i64* ids, u32 part, u32x4 (&buf)[pieces]) {
    const u32 lane = lane_id<target>();
    const bool is_v = part >= plan::qk_chunks;
    NETRA_UNROLL
    for (u32 n = 0; n < pieces; ++n) {  // a constant trip count: unrolled whatever the part
      const u32 j = is_v ? v_pieces * (part - plan::qk_chunks) + n : plan::qk_chunks * n + part;
      if (is_v ? n >= v_pieces || !Split::reads_v_chunk(j) : n >= k_pieces || !Split::owns_tile(n)) continue;  // constant once unrolled
      const fragment_element e = is_v ? plan::v_read(lane, j) : plan::k_read(lane, j);
      const i64 id = ids[e.row];
      const u8* pool = is_v ? p.v_buffer : p.k_buffer;
      buf[n] = id >= 0 ? load_piece<Split>(is_v, pool + (static_cast<u64>(id) * Contract::kv_heads + kv_head) * Contract::head_dim + 16 * e.col)
                       : u32x4{0, 0, 0, 0};
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    const u32 j = wave_id<target>() % S;
    if constexpr (S == 1) run_as<0>(p);
    else if constexpr (S == 2) j == 0 ? run_as<0>(p) : run_as<1>(p);
    else if constexpr (S == 4) j < 2 ? (j == 0 ? run_as<0>(p) : run_as<1>(p)) : (j == 2 ? run_as<2>(p) : run_as<3>(p));
    else split_8(p, j);
  }
  static NETRA_DEVICE void split_8(const params& p, u32 j) {
    if constexpr (S == 8) {
      switch (j) {
        case 0: run_as<0>(p); break;
        case 1: run_as<1>(p); break;
        case 2: run_as<2>(p); break;
        case 3: run_as<3>(p); break;
        case 4: run_as<4>(p); break;
        case 5: run_as<5>(p); break;
        case 6: run_as<6>(p); break;
        default: run_as<7>(p); break;
      }
    }
  }

  /// Warp J of its wave's S warps (uniform over the warp).
  template <u32 J> static NETRA_DEVICE void run_as(const params& p) {
    using split = gqa8_block_split<plan, S, J>;
    NETRA_DYNAMIC_SHARED_BYTES(lds);
    float* epilogue = reinterpret_cast<float*>(lds);  // [waves][8][256]; S > 1: first the score exchange [waves][2][8][72]
    u16* q = reinterpret_cast<u16*>(lds + max_of(Contract::ring_bytes, Contract::epilogue_bytes));
    i64* table = reinterpret_cast<i64*>(reinterpret_cast<u8*>(q) + Contract::q_bytes);  // [warps][2][64]
    float* stats = reinterpret_cast<float*>(reinterpret_cast<u8*>(table) + Contract::table_bytes);
    const u32 slice = workgroup_id<target, 0>(), kv_head = workgroup_id<target, 1>(), b = workgroup_id<target, 2>();
    const u32 warp = wave_id<target>(), w_id = warp / S, lane = lane_id<target>();

    const typename wave_ops::slice v = wave_ops::slice_of(p, b, slice);
    if (!v.r.writable) return;  // uniform over the workgroup
    const float score_scale = mul_rn(*p.k_scale, Contract::softmax_scale), v_scale = *p.v_scale;
    wave_ops::load_queries(p, v.r, kv_head, q);
    i64* ids_of = table + warp * 2 * Contract::block;
    const u32 mine = v.blocks > w_id ? ceil_div(v.blocks - w_id, BW) : 0u;
    // S > 1: every warp of the workgroup takes the same number of rounds (one barrier each).
    const u32 rounds = S == 1 ? mine : ceil_div(v.blocks, BW);
    look_ahead next;
    next.start(p, v, w_id);
    next.finish(p, ids_of);
    typename wave_ops::state w;
    u32x4 buf[2][pieces];
    wave_barrier<target>();  // the warp's first table; its first part's loads overlap the queries'
    if (mine > 0) load_part<split>(p, kv_head, ids_of, 0, buf[0]);
    workgroup_barrier<target>();  // the queries
    auto read_q = [&](u32 jq) {
      const fragment_element e = plan::q_load(lane, jq);
      return e.row < plan::rows ? *reinterpret_cast<const u32x4*>(q + e.row * Contract::head_dim + e.col) : u32x4{0, 0, 0, 0};
    };

    for (u32 k = 0; k < rounds; ++k) {
      const bool has = S == 1 || k < mine;  // uniform over the warp
      const i64* ids = ids_of + (k % 2) * Contract::block;
      i64* ids_next = ids_of + ((k + 1) % 2) * Contract::block;
      float* exchange = epilogue + (w_id * 2 + k % 2) * plan::rows * score_stride;
      if (has) next.start(p, v, w_id + (k + 1) * BW);
      typename plan::qk_accumulators acc = {};
      NETRA_UNROLL
      for (u32 part = 0; part < parts; ++part) {
        if (S > 1 && !has) {  // the rounds past the wave's last block: their barrier only
          if (part + 1 == plan::qk_chunks) workgroup_barrier<target>();
          continue;
        }
        if (part + 1 < parts) {
          load_part<split>(p, kv_head, ids, part + 1, buf[(part + 1) % 2]);
        } else if (k + 1 < mine) {  // uniform over the warp
          next.finish(p, ids_next);
          wave_barrier<target>();
          load_part<split>(p, kv_head, ids_next, 0, buf[0]);
        }
        const u32x4(&cur)[pieces] = buf[part % 2];
        if (part < plan::qk_chunks) {
          plan::template qk_chunk<split::t0, split::t1>(acc, part, read_q, widened<target>([&](u32 jk) { return cur[jk / plan::qk_chunks]; }));
          if (part + 1 == plan::qk_chunks) {
            float s[plan::scores];
            plan::qk_scores(s, acc);
            if constexpr (S > 1) exchange_scores<split>(s, exchange);
            wave_ops::block_step(w, s, score_scale, [&](u32, fragment_element e) { return e.row < plan::rows && ids[e.col] >= 0; }, weight{});
            wave_ops::rescale(w, [](u32 i) { return split::owns_o_item(i); });
          }
        } else {
          plan::template pv_step<split::g0, split::g1>(w.o, w.pb, part - plan::qk_chunks, widened<target>([&](u32 jv) { return cur[jv % v_pieces]; }));
        }
      }
    }
    launch_dependents<target>();  // stage two (a programmatic dependent) may start: it waits for this grid's end
    workgroup_barrier<target>();
    if constexpr (S == 1) wave_ops::finish(p, v.r, b, slice, kv_head, epilogue, stats, w, v_scale);
    else wave_ops::finish(p, v.r, b, slice, kv_head, epilogue, stats, w, v_scale, w_id, [](u32 i) { return split::owns_o_item(i); }, J == 0);
  }

  /// S > 1: the warp's score items into its wave's exchange rows, one workgroup barrier, then every
  /// item of the block back (rows past plan::rows are padding: never kept).
  template <class Split> static NETRA_DEVICE void exchange_scores(float (&s)[plan::scores], float* exchange) {
    const u32 lane = lane_id<target>();
    Split::template write_scores<score_stride>(s, exchange, lane);
    workgroup_barrier<target>();
    Split::template read_scores<score_stride>(s, exchange, lane);
  }
};

}  // namespace netra::kernels
