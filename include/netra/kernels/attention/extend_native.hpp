// netra/kernels/attention/extend_native.hpp — stage one of contracts::attention_gqa4_extend_native:
// one workgroup per (slice, KV head, request) computes the slice's online softmax for the KV
// head's 48 query rows (row 4t + j: head 4 kv + j of extension token t; tokens >= E_b are zero
// rows, never written), reading the FP8 prefix K/V of the [slots, 8, 128] pool in place.
//
// Grid (slices, 8, batch); 48 / plan::rows waves (sm90a 3 x 16 rows, 96 threads; gfx950 4 x 12
// rows, 256 threads); wave w owns rows plan::rows w .. + plan::rows - 1 and every block of 64
// positions of the slice, so no wave merge is needed. The slice
// streams through an LDS ring of Stages pieces (piece n: K (n even) or V (n odd) of block n / 2,
// 64 x 128 bytes, every thread copying 16-byte chunks at the slot ids of an LDS table filled a
// round ahead, their index loads issued two iterations before); iteration n waits for its piece,
// passes one barrier and issues piece n + Stages - 1 into the slot freed by iteration n - 1; each
// warp whose rows hold a token widens the chunks it reads once (extend_plan.hpp) and computes:
// K piece: scores x (k_scale * c), masked to -inf, block max, BF16 weights and the online-softmax
// step (dsl/online_softmax.hpp), as gqa8_wave.hpp's block_step in the same order; V piece:
// o = o * alpha + P V. Its (m, l, o) go to the workspace in the pair view's layout (pair kv / 2,
// view row 8t + 4 (kv % 2) + j, elements 128 (kv % 2) + d), so extend.hpp's stage two merges them.
// Math = false keeps the grid, the copies, the look-ups, Q's loads and the workspace writes and
// drops the widening and the math: the floor of this mapping (bench/attention_extend.py).
#pragma once
#include "netra/dsl/async_copy.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/kernels/attention/extend.hpp"
#include "netra/kernels/attention/extend_plan.hpp"

namespace netra::kernels {

/// The 16-byte slot of (position, chunk) in a staged 64 x 128-byte K or V block: the XOR spreads
/// one instruction's K reads (positions 8nt + g, chunks 4c + t) and V reads (positions 2t + e,
/// chunk g) over distinct banks.
NETRA_HOST_DEVICE constexpr u32 extend_staged_chunk(u32 pos, u32 chunk) { return 8 * pos + (chunk ^ (4 * (pos & 1) ^ 2 * ((pos >> 1) & 3))); }

template <class Contract, bool Math = true> struct attention_extend_native_stage_one {
  using target = typename Contract::target;
  using plan = extend_plan_of<target>;
  using request = attention_gqa8_request<typename Contract::pair_view>;  // the cache part of the call
  using params = attention_extend_args;
  static constexpr const char* symbol = Math ? "netra_attention_extend_native_stage_one" : "netra_attention_extend_native_floor";
  static constexpr u32 workgroup_size = Contract::workgroup_size, dynamic_lds_bytes = Contract::lds_bytes;
  static constexpr bool programmatic_dependent_launch = false, prefers_max_lds = true;  // 4 workgroups per SM
  static constexpr u32 min_workgroups_per_processor = 4;  // 12 warps per SM: <= 168 registers
  static constexpr u32 S = Contract::stages, T = Contract::table_rounds, B = Contract::block, D = Contract::head_dim, G = Contract::group;
  static constexpr u32 chunks = Contract::piece_bytes / 16, copies_per_thread = ceil_div(chunks, workgroup_size);
  static constexpr u32 lookups_per_thread = ceil_div(B, workgroup_size);
  static constexpr u32 o_stride = D + 4;  // floats per staged o row: 16-byte rows, lanes of one store in 4-way distinct banks
  static_assert(Contract::rows * o_stride * 4 <= Contract::ring_bytes, "netra::kernels::attention_extend_native_stage_one: the staged o does not fit the ring");
  static_assert(plan::rows == Contract::wave_rows && plan::head_dim == D && plan::block == B, "netra::kernels::attention_extend_native_stage_one: the plan's tile is not the contract's");

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch, u32 slices) { return {{slices, Contract::kv_heads, batch}, workgroup_size, dynamic_lds_bytes}; }

  struct slice {
    request r;
    i64 start, end;
    u32 blocks;
  };
  /// Round look-ups: start() loads the page-table entries of the thread's positions, finish()
  /// writes their slot ids (-1: masked) into the round's table slot.
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

  static NETRA_DEVICE void run(const params& a) {
    NETRA_DYNAMIC_SHARED_BYTES(lds);
    u8* ring = lds;
    i64* table = reinterpret_cast<i64*>(lds + Contract::ring_bytes);
    const attention_gqa8_args& p = a.view;
    const u32 sl = workgroup_id<target, 0>(), kv = workgroup_id<target, 1>(), b = workgroup_id<target, 2>();
    const u32 warp = wave_id<target>(), lane = lane_id<target>();
    launch_dependents<target>();  // stage two may launch now: it waits for this grid before its workspace loads
    const extend_request e = extend_request::read(a, b, Contract::max_extend);
    if (!e.writable) return;  // uniform over the workgroup
    slice v;
    v.r = request::read(p, b);
    const u32 chunk = Contract::chunk_for(static_cast<u32>(min_of(v.r.length, i64{1} << 30)), p.slices);
    v.start = static_cast<i64>(sl) * chunk;
    v.end = min_of(v.start + chunk, v.r.length);
    v.blocks = v.start < v.end ? static_cast<u32>(ceil_div(v.end - v.start, i64{B})) : 0u;
    const bool busy = Math && warp * plan::rows / G < e.count;  // the warp's first token is one of the request's
    const float score_scale = mul_rn(*p.k_scale, Contract::softmax_scale);

    // The warp's Q operands (zero rows past E_b), the first rounds' slots.
    typename plan::q_operands qa;
    {
      u32x4 q[plan::q_loads];
      NETRA_UNROLL
      for (u32 j = 0; j < plan::q_loads; ++j) {
        const fragment_element f = plan::q_load(lane, j);
        const u32 row = warp * plan::rows + f.row, t = row / G;
        q[j] = f.row < plan::rows && t < e.count ? load_16B<target>(a.q + (static_cast<u64>(e.first + t) * Contract::q_heads + G * kv + row % G) * D + f.col)
                                                 : u32x4{0, 0, 0, 0};
      }
      plan::q_operands_of(qa, q);
    }
    look_up lookups, first[T];  // the first T rounds' look-ups in flight together
    NETRA_UNROLL
    for (u32 round = 0; round < T; ++round) first[round].start(p, v, round);
    NETRA_UNROLL
    for (u32 round = 0; round < T; ++round) first[round].finish(p, v, table);
    lookups.start(p, v, T);
    workgroup_barrier<target>();

    constexpr u32 R = plan::row_slots;
    softmax_stats st[R];
    float alpha[R];
    NETRA_UNROLL
    for (u32 k = 0; k < R; ++k) st[k] = softmax_empty(), alpha[k] = 0.0f;
    float o[plan::o_items] = {};
    u32 pb[plan::scores / 2] = {};
    if constexpr (!Math) {  // Q's loads stay
      u32 fold = 0;
      NETRA_UNROLL
      for (u32 i = 0; i < sizeof(qa) / 4; ++i) fold ^= reinterpret_cast<const u32*>(&qa)[i];
      o[0] = bit_cast<float>(fold);
    }
    for (u32 n = 0; n + 1 < S; ++n) issue(p, v, kv, n, ring, table);
    for (u32 n = 0; n < 2 * v.blocks; ++n) {
      wait_lds_copies<target, S - 2>();
      workgroup_barrier<target>();
      issue(p, v, kv, n + S - 1, ring, table);
      if ((n + S) % 2 == 0 && (n + S) / 2 >= T) {  // round (n + S) / 2 was started two iterations ago
        lookups.finish(p, v, table);
        lookups.start(p, v, (n + S) / 2 + 1);
      }
      if (!busy) continue;
      const u8* piece = ring + (n % S) * Contract::piece_bytes;
      auto at = [piece](fragment_element f) { return piece + 16 * extend_staged_chunk(f.row, f.col / 16) + f.col % 16; };
      auto widen = [](u32 word) { return e4m3x4_to_bf16x4<target>(word); };
      if (n % 2 == 0) {
        float s[plan::scores];
        plan::qk(s, qa, [&](u32 j) { return *reinterpret_cast<const u32x4*>(at(plan::k_read(lane, j))); }, widen);
        // The block step of each of the lane's rows (gqa8_wave.hpp's order): mask, scale, block max
        // over the row's items and lanes, BF16 weights, l over the pair words in order, then the lanes.
        const i64* ids = table + ((n / 2) % T) * B;
        NETRA_UNROLL
        for (u32 k = 0; k < R; ++k) {
          float m_block = negative_infinity();
          NETRA_UNROLL
          for (u32 i = 0; i < plan::scores; ++i)
            if (plan::row_slot(i) == k) {
              s[i] = ids[plan::score_of(lane, i).col] >= 0 ? mul_rn(s[i], score_scale) : negative_infinity();
              m_block = max_of(m_block, s[i]);
            }
          m_block = max_of(m_block, xor_shuffle_f32<target>(m_block, plan::row_mask(0)));
          m_block = max_of(m_block, xor_shuffle_f32<target>(m_block, plan::row_mask(1)));
          const float m_new = max_of(st[k].m, m_block);
          float l_block = 0.0f;
          NETRA_UNROLL
          for (u32 w = 0; w < plan::scores / 2; ++w)
            if (plan::row_slot(2 * w) == k) {
              pb[w] = pack_bf16x2<target>(softmax_weight(s[2 * w], m_new), softmax_weight(s[2 * w + 1], m_new));
              l_block = add_rn(l_block, f32_from_bf16(static_cast<u16>(pb[w])));
              l_block = add_rn(l_block, f32_from_bf16(static_cast<u16>(pb[w] >> 16)));
            }
          l_block = add_rn(l_block, xor_shuffle_f32<target>(l_block, plan::row_mask(0)));
          l_block = add_rn(l_block, xor_shuffle_f32<target>(l_block, plan::row_mask(1)));
          const softmax_merge_factors f = softmax_merge(st[k], {m_new, l_block});
          st[k] = f.merged, alpha[k] = f.alpha;
        }
      } else {
        NETRA_UNROLL
        for (u32 i = 0; i < plan::o_items; ++i) o[i] = mul_rn(o[i], alpha[plan::row_slot(i)]);
        plan::pv(o, pb, [&](u32 j) { return *reinterpret_cast<const typename plan::v_raw*>(at(plan::v_read(lane, j))); }, widen);
      }
    }

    // The slice's (m, l, o) of the written rows, in the pair view's workspace layout: the stats
    // from the lanes that hold element 0, o through the (now idle) ring as rows of o_stride floats,
    // then out in 16-byte pieces (row 4t + j: view row 8t + 4 (kv % 2) + j, elements 128 (kv % 2) ..).
    const u64 unit = (static_cast<u64>(b) * p.slices + sl) * (Contract::kv_heads / 2) + kv / 2;
    constexpr u32 view_rows = Contract::pair_view::rows, view_dim = Contract::pair_view::head_dim;
    auto view_row = [&](u32 row) { return unit * view_rows + 2 * G * (row / G) + G * (kv % 2) + row % G; };
    float* staged = reinterpret_cast<float*>(ring);
    workgroup_barrier<target>();  // every warp has read its last piece
    NETRA_UNROLL
    for (u32 i = 0; i < plan::o_items; ++i) {
      const fragment_element f = plan::o_of(lane, i);
      const u32 row = warp * plan::rows + f.row;
      if (f.row < plan::rows) {
        staged[row * o_stride + f.col] = o[i];
        if (f.col == 0 && row / G < e.count) p.split_stats[view_row(row) * 2] = st[plan::row_slot(i)].m, p.split_stats[view_row(row) * 2 + 1] = st[plan::row_slot(i)].l;
      }
    }
    workgroup_barrier<target>();
    for (u32 c = thread_id<target>(); c < Contract::rows * (D / 4); c += workgroup_size) {
      const u32 row = c / (D / 4), col = 4 * (c % (D / 4));
      if (row / G < e.count) store_16B<target>(p.split_o + view_row(row) * view_dim + D * (kv % 2) + col, *reinterpret_cast<const u32x4*>(staged + row * o_stride + col));
    }
  }
};

template <class Target, u32 PageSize, u32 Stages, u32 MaxBatch, u32 SplitCapacity>
struct kernels_of<contracts::attention_gqa4_extend_native<Target, PageSize, Stages, MaxBatch, SplitCapacity>> {
  using contract = contracts::attention_gqa4_extend_native<Target, PageSize, Stages, MaxBatch, SplitCapacity>;
  using type = extend_kernel_list<contract, attention_extend_native_stage_one<contract>, attention_extend_native_stage_one<contract, false>>;
};

}  // namespace netra::kernels
