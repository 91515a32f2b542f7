// netra/kernels/attention/extend_native_staging.hpp — what the stage ones of
// contracts::attention_gqa4_extend_native share (the per-warp plan, extend_native.hpp, and the
// warpgroup one, extend_native_warpgroup.hpp): the slice of a (slice, KV head, request) workgroup;
// the LDS ring's slot-id look-ups (a round of 64 positions: start() loads the page-table entries,
// finish() writes the slot ids, -1 = masked, into the round's table slot) and its 16-byte copies
// of piece n (K of block n / 2 for n even, V for n odd; 64 x 128 bytes, XOR-swizzled chunks); the
// block step of a warp's rows on their scores in the plan's layout (block_weights.hpp:
// gqa8_wave.hpp's order) and the block's slot ids as a bit mask; and the epilogue, which writes the slice's (m, l, o) of the rows
// the call writes in the pair view's workspace layout (pair kv / 2, view row 8t + 4 (kv % 2) + j,
// elements 128 (kv % 2) + d) so extend.hpp's stage two merges them.
#pragma once
#include "netra/dsl/async_copy.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/wave_vote.hpp"
#include "netra/kernels/attention/block_weights.hpp"
#include "netra/kernels/attention/extend.hpp"
#include "netra/kernels/attention/extend_plan.hpp"

namespace netra::kernels {

/// The 16-byte slot of (position, chunk) in a staged 64 x 128-byte K or V block: the XOR spreads
/// one instruction's K reads (positions 8nt + g, chunks 4c + t) and V reads (positions 2t + e,
/// chunk g) over distinct banks.
NETRA_HOST_DEVICE constexpr u32 extend_staged_chunk(u32 pos, u32 chunk) { return 8 * pos + (chunk ^ (4 * (pos & 1) ^ 2 * ((pos >> 1) & 3))); }

template <class Contract> struct extend_native_staging {
  using target = typename Contract::target;
  using plan = extend_plan_of<target>;
  using request = attention_gqa8_request<typename Contract::pair_view>;  // the cache part of the call
  static constexpr u32 S = Contract::stages, T = Contract::table_rounds, B = Contract::block, D = Contract::head_dim, G = Contract::group;
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr u32 chunks = Contract::piece_bytes / 16, copies_per_thread = ceil_div(chunks, workgroup_size);
  static constexpr u32 lookups_per_thread = ceil_div(B, workgroup_size);
  static constexpr u32 o_stride = D + 4;  // floats per staged o row: 16-byte rows, lanes of one store in 4-way distinct banks
  static_assert(Contract::epilogue_bytes == Contract::rows * o_stride * 4, "netra::kernels::extend_native_staging: the staged o's rows");

  struct slice {
    request r;
    i64 start, end;
    u32 blocks;
  };
  static NETRA_DEVICE slice slice_of(const attention_gqa8_args& p, u32 b, u32 sl) {
    slice v;
    v.r = request::read(p, b);
    const u32 chunk = Contract::chunk_for(static_cast<u32>(min_of(v.r.length, i64{1} << 30)), p.slices);
    v.start = static_cast<i64>(sl) * chunk;
    v.end = min_of(v.start + chunk, v.r.length);
    v.blocks = v.start < v.end ? static_cast<u32>(ceil_div(v.end - v.start, i64{B})) : 0u;
    return v;
  }

  struct look_up {
    i64 page[lookups_per_thread];
    u32 round;
    NETRA_DEVICE i64 position(const slice& v, u32 k) const {
      const u32 i = thread_id<target>() + k * workgroup_size;
      const i64 at = v.start + static_cast<i64>(B) * round + i;
      return i < B && round < v.blocks && at < v.end ? at : -1;
    }
    NETRA_DEVICE void start(const attention_gqa8_args& p, const slice& v, u32 r) {
      round = r;
      NETRA_UNROLL
      for (u32 k = 0; k < lookups_per_thread; ++k) {
        const i64 at = position(v, k);
        page[k] = at < 0 ? -1 : v.r.page_of(p, at);
      }
    }
    NETRA_DEVICE void finish(const attention_gqa8_args& p, const slice& v, i64* table) const {
      NETRA_UNROLL
      for (u32 k = 0; k < lookups_per_thread; ++k) {
        const u32 i = thread_id<target>() + k * workgroup_size;
        const i64 at = position(v, k);
        if (i < B) table[(round % T) * B + i] = at < 0 ? -1 : request::slot_of(p, page[k], at);
      }
    }
  };

  /// A workgroup's call: its slice, KV head and request, the request's extension and its slice of
  /// the prefix (read only when the call writes the request). Stage two may launch from here on: it
  /// waits for this grid before its workspace loads.
  struct workgroup {
    u32 sl, kv, b;
    extend_request e;
    slice v;
  };
  static NETRA_DEVICE workgroup start(const attention_extend_args& a) {
    workgroup w{workgroup_id<target, 0>(), workgroup_id<target, 1>(), workgroup_id<target, 2>(), {}, {}};
    launch_dependents<target>();
    w.e = extend_request::read(a, w.b, Contract::max_extend);
    if (w.e.writable) w.v = slice_of(a.view, w.b, w.sl);
    return w;
  }

  /// The first T rounds' slot ids into the table (their look-ups in flight together); returns the
  /// look-up of round T, started.
  static NETRA_DEVICE look_up first_rounds(const attention_gqa8_args& p, const slice& v, i64* table) {
    look_up first[T], next;
    NETRA_UNROLL
    for (u32 round = 0; round < T; ++round) first[round].start(p, v, round);
    NETRA_UNROLL
    for (u32 round = 0; round < T; ++round) first[round].finish(p, v, table);
    next.start(p, v, T);
    return next;
  }

  /// Piece n's copies into ring slot n % S (one commit group, empty past the slice).
  static NETRA_DEVICE void issue(const attention_gqa8_args& p, const slice& v, u32 kv, u32 n, u8* ring, const i64* table) {
    if (n < 2 * v.blocks) {
      const u8* pool = n % 2 ? p.v_buffer : p.k_buffer;
      const i64* ids = table + ((n / 2) % T) * B;
      NETRA_UNROLL
      for (u32 k = 0; k < copies_per_thread; ++k) {
        const u32 c = thread_id<target>() + k * workgroup_size;
        if (chunks % workgroup_size == 0 || c < chunks) {
          const u32 pos = c / 8, chunk = c % 8;
          const i64 id = ids[pos];
          const u8* src = pool + (static_cast<u64>(id < 0 ? 0 : id) * Contract::kv_heads + kv) * D + 16 * chunk;
          copy_16B_to_lds<target>(ring + (n % S) * Contract::piece_bytes + 16 * extend_staged_chunk(pos, chunk), src, id >= 0);
        }
      }
    }
    commit_lds_copies<target>();
  }

  /// The mask as data: bit c = position c's slot id >= 0 (ballots over the block's 64 ids).
  static NETRA_DEVICE u64 valid_positions(const i64* ids, u32 lane) {
    constexpr u32 W = target::wave_size;
    constexpr u64 lanes = W == 64 ? ~u64{0} : (u64{1} << W) - 1;
    u64 valid = 0;
    NETRA_UNROLL
    for (u32 j = 0; j < B / W; ++j) valid |= (wave_ballot<target>(ids[lane + W * j] >= 0) & lanes) << (W * j);
    return valid;
  }

  /// The epilogue, after every warp has read its last piece: o_at(i) = (workgroup row, element) of
  /// the lane's o item i (rows >= 48: padding, not stored), its statistics st[plan::row_slot(i)];
  /// o goes through `staged` (rows of o_stride floats, idle LDS) and out in 16-byte pieces.
  template <class OAt>
  static NETRA_DEVICE void write_slice(const attention_gqa8_args& p, const extend_request& e, u32 b, u32 sl, u32 kv, const float (&o)[plan::o_items],
                                       const softmax_stats (&st)[plan::row_slots], OAt o_at, float* staged) {
    const u64 unit = (static_cast<u64>(b) * p.slices + sl) * (Contract::kv_heads / 2) + kv / 2;
    constexpr u32 view_rows = Contract::pair_view::rows, view_dim = Contract::pair_view::head_dim;
    auto view_row = [&](u32 row) { return unit * view_rows + 2 * G * (row / G) + G * (kv % 2) + row % G; };
    workgroup_barrier<target>();  // every warp has read its last piece
    NETRA_UNROLL
    for (u32 i = 0; i < plan::o_items; ++i) {
      const fragment_element f = o_at(i);
      if (f.row < Contract::rows) {
        staged[f.row * o_stride + f.col] = o[i];
        if (f.col == 0 && f.row / G < e.count) p.split_stats[view_row(f.row) * 2] = st[plan::row_slot(i)].m, p.split_stats[view_row(f.row) * 2 + 1] = st[plan::row_slot(i)].l;
      }
    }
    workgroup_barrier<target>();
    for (u32 c = thread_id<target>(); c < Contract::rows * (D / 4); c += workgroup_size) {
      const u32 row = c / (D / 4), col = 4 * (c % (D / 4));
      if (row / G < e.count) store_16B<target>(p.split_o + view_row(row) * view_dim + D * (kv % 2) + col, *reinterpret_cast<const u32x4*>(staged + row * o_stride + col));
    }
  }
};

/// What the stage ones share as kernels: the entry (Math = false: the mapping's floor), the
/// workgroups a processor holds (contract's workgroups_per_processor) and the launch.
template <class Contract, bool Math> struct extend_native_stage_one_kernel {
  using staging = extend_native_staging<Contract>;
  using target = typename Contract::target;
  using plan = typename staging::plan;
  using params = attention_extend_args;
  static constexpr const char* symbol = Math ? "netra_attention_extend_native_stage_one" : "netra_attention_extend_native_floor";
  static constexpr u32 workgroup_size = Contract::workgroup_size, dynamic_lds_bytes = Contract::lds_bytes;
  static constexpr bool programmatic_dependent_launch = false, prefers_max_lds = true;
  static constexpr u32 min_workgroups_per_processor = Contract::workgroups_per_processor;
  static constexpr u32 S = Contract::stages, T = Contract::table_rounds, G = Contract::group;
  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch, u32 slices) { return {{slices, Contract::kv_heads, batch}, workgroup_size, dynamic_lds_bytes}; }
};

}  // namespace netra::kernels
