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
#pragma once
#include "netra/dsl/entry.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/kernels/attention/gqa8_wave.hpp"

namespace netra::kernels {

template <class Contract> struct attention_gqa8_direct_staging {
  using wave_ops = attention_gqa8_wave<Contract>;
  using target = typename wave_ops::target;
  using plan = typename wave_ops::plan;
  using request = attention_gqa8_request<Contract>;
  using params = attention_gqa8_args;
  static constexpr u32 BW = Contract::block_warps, wave = target::wave_size;
  static constexpr u32 k_pieces = plan::k_reads / plan::qk_chunks, v_pieces = plan::v_reads / plan::pv_steps;
  static constexpr u32 pieces = max_of(k_pieces, v_pieces), parts = plan::qk_chunks + plan::pv_steps;
  static constexpr u32 ids_per_lane = Contract::block / wave;
  static_assert(Contract::tq == 1 && Contract::stages == 0, "netra::kernels::attention_gqa8_direct_staging: decode with Stages = 0 only");
  static_assert(parts % 2 == 0 && Contract::block % wave == 0, "netra::kernels::attention_gqa8_direct_staging: the buffers alternate per block");
  static_assert(Contract::table_bytes == Contract::waves * 2 * Contract::block * 8, "netra::kernels::attention_gqa8_direct_staging: table size");

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

  /// Part `part` of the block whose slot ids are `ids` into `buf` (zeros at masked positions).
  static NETRA_DEVICE void load_part(const params& p, u32 kv_head, const i64* ids, u32 part, u32x4 (&buf)[pieces]) {
    const u32 lane = lane_id<target>();
    const bool is_v = part >= plan::qk_chunks;
    NETRA_UNROLL
    for (u32 n = 0; n < (is_v ? v_pieces : k_pieces); ++n) {
      const fragment_element e = is_v ? plan::v_read(lane, v_pieces * (part - plan::qk_chunks) + n) : plan::k_read(lane, plan::qk_chunks * n + part);
      const i64 id = ids[e.row];
      const u8* pool = is_v ? p.v_buffer : p.k_buffer;
      buf[n] = id >= 0 ? load_16B<target>(pool + (static_cast<u64>(id) * Contract::kv_heads + kv_head) * Contract::head_dim + 16 * e.col)
                       : u32x4{0, 0, 0, 0};
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_DYNAMIC_SHARED_BYTES(lds);
    float* epilogue = reinterpret_cast<float*>(lds);  // [waves][8][256]
    u16* q = reinterpret_cast<u16*>(lds + max_of(Contract::ring_bytes, Contract::epilogue_bytes));
    i64* table = reinterpret_cast<i64*>(reinterpret_cast<u8*>(q) + Contract::q_bytes);  // [waves][2][64]
    float* stats = reinterpret_cast<float*>(reinterpret_cast<u8*>(table) + Contract::table_bytes);
    const u32 slice = workgroup_id<target, 0>(), kv_head = workgroup_id<target, 1>(), b = workgroup_id<target, 2>();
    const u32 w_id = wave_id<target>(), lane = lane_id<target>();

    const typename wave_ops::slice v = wave_ops::slice_of(p, b, slice);
    if (!v.r.writable) return;  // uniform over the workgroup
    const float score_scale = mul_rn(*p.k_scale, Contract::softmax_scale), v_scale = *p.v_scale;
    wave_ops::load_queries(p, v.r, kv_head, q);
    i64* ids_of = table + w_id * 2 * Contract::block;
    const u32 mine = v.blocks > w_id ? ceil_div(v.blocks - w_id, BW) : 0u;
    look_ahead next;
    next.start(p, v, w_id);
    next.finish(p, ids_of);
    typename wave_ops::state w;
    u32x4 buf[2][pieces];
    wave_barrier<target>();  // the wave's first table; its first part's loads overlap the queries'
    if (mine > 0) load_part(p, kv_head, ids_of, 0, buf[0]);
    workgroup_barrier<target>();  // the queries
    auto read_q = [&](u32 j) {
      const fragment_element e = plan::q_load(lane, j);
      return e.row < plan::rows ? *reinterpret_cast<const u32x4*>(q + e.row * Contract::head_dim + e.col) : u32x4{0, 0, 0, 0};
    };

    for (u32 k = 0; k < mine; ++k) {
      const i64* ids = ids_of + (k % 2) * Contract::block;
      i64* ids_next = ids_of + ((k + 1) % 2) * Contract::block;
      next.start(p, v, w_id + (k + 1) * BW);
      typename plan::qk_accumulators acc = {};
      NETRA_UNROLL
      for (u32 part = 0; part < parts; ++part) {
        if (part + 1 < parts) {
          load_part(p, kv_head, ids, part + 1, buf[(part + 1) % 2]);
        } else if (k + 1 < mine) {  // uniform over the wave
          next.finish(p, ids_next);
          wave_barrier<target>();
          load_part(p, kv_head, ids_next, 0, buf[0]);
        }
        const u32x4(&cur)[pieces] = buf[part % 2];
        if (part < plan::qk_chunks) {
          plan::qk_chunk(acc, part, read_q, widened<target>([&](u32 j) { return cur[j / plan::qk_chunks]; }));
          if (part + 1 == plan::qk_chunks) {
            float s[plan::scores];
            plan::qk_scores(s, acc);
            wave_ops::block_step(w, s, score_scale, [&](u32, fragment_element e) { return e.row < plan::rows && ids[e.col] >= 0; });
            wave_ops::rescale(w);
          }
        } else {
          plan::pv_step(w.o, w.pb, part - plan::qk_chunks, widened<target>([&](u32 j) { return cur[j % v_pieces]; }));
        }
      }
    }
    launch_dependents<target>();  // stage two (a programmatic dependent) may start: it waits for this grid's end
    workgroup_barrier<target>();
    wave_ops::finish(p, v.r, b, slice, kv_head, epilogue, stats, w, v_scale);
  }
};

}  // namespace netra::kernels
