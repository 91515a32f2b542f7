// netra/kernels/moe/grouped_tile.hpp — what the grouped expert kernels (grouped_gate_up.hpp,
// grouped_down.hpp) share: a plan tile, the staging of its routes' activation columns into LDS,
// the weight pieces of one 16-row tile for one scale block, and the block product of one 16-column
// chunk, on the fragment layer's block tile (dsl/fragment/: the decode kernels' lane maps and
// matrix instructions; sm90a mma.sync m16n8k32 e4m3 = FP16 HMMA with FP32 accumulation, gfx950
// v_mfma_f32_16x16x128_f8f6f4 unscaled: the FP32 block scales are not E8M0, so they are applied
// after each block's product in FP32).
//
// LDS columns: column c of a tile (its c-th route) holds K contiguous E4M3 bytes at c * Stride;
// Stride = K + 64 makes the 16-byte act reads of a quarter-warp (sm90a: lanes g = 0, 1 x t = 0..3)
// cover all 32 banks.
#pragma once
#include "netra/contracts/moe/grouped_plan.hpp"
#include "netra/dsl/async_copy.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/fragment/register_tile.hpp"
#include "netra/dsl/fragment/target_shapes.hpp"
#include "netra/dsl/fragment/block_tile.hpp"
#include "netra/kernels/moe/experts_device.hpp"

namespace netra::kernels::moe_grouped {

/// One tile of the plan: its key, its first position in the plan's route order, its route count.
struct plan_tile {
  u32 key;
  u32 first;
  u32 routes;
};

template <class Target, class Layout> NETRA_DEVICE plan_tile load_plan_tile(const u8* plan, u32 j) {
  const u32x4 v = load_16B<Target>(plan + Layout::tiles_offset + 16ull * j);
  return {v.x, v.y, v.z};
}
template <class Layout> NETRA_DEVICE u32 plan_tile_count(const u8* plan) {
  return reinterpret_cast<const u32*>(plan)[Layout::count_word];
}
template <class Layout> NETRA_DEVICE const u32* plan_routes(const u8* plan) {
  return reinterpret_cast<const u32*>(plan + Layout::routes_offset);
}

/// Copies K bytes of each of `columns` source rows (source(c): 16-byte aligned) into LDS column c
/// (16-byte pieces, every thread of the workgroup in turn). No barrier.
template <class Target, u32 K, u32 Stride, u32 Threads, class Source>
NETRA_DEVICE void stage_columns(u8* lds, u32 columns, u32 thread, Source source) {
  constexpr u32 pieces = K / 16;
  for (u32 s = thread; s < columns * pieces; s += Threads) {
    const u32 c = s / pieces, piece = s % pieces;
    *reinterpret_cast<u32x4*>(lds + c * Stride + 16 * piece) = load_16B<Target>(source(c) + 16 * piece);
  }
}

template <class Target>
using fragment = netra::fragment::block_tile<typename netra::fragment::matrix_instructions<Target>::e4m3, moe::expert_weights::block, 16>;
template <class Target> using weight_pieces = u32x4[fragment<Target>::weight_pieces];
template <class Target> using d_items = float[fragment<Target>::shape::d_items];

/// The lane's weight pieces of 16 rows (row 0 at `rows`, row stride `RowBytes`) for the scale
/// block at byte `k0` of each row.
template <class Target, u32 RowBytes> NETRA_DEVICE void load_weight_pieces(const u8* rows, u32 k0, u32 lane, weight_pieces<Target>& out) {
  NETRA_UNROLL
  for (u32 v = 0; v < fragment<Target>::weight_pieces; ++v) {
    const netra::fragment::piece pc = fragment<Target>::weight_piece(lane, v);
    out[v] = load_16B<Target, cache_policy::streaming>(rows + static_cast<u64>(pc.index) * RowBytes + k0 + pc.k);
  }
}

/// A per-thread LDS ring of weight pieces (the WeightStages forms): slot s, set t (a 16-row tile)
/// and piece v of each of the workgroup's `Threads` threads, threads adjacent (conflict-free
/// 16-byte reads); only the thread that copies a piece reads it, so the ring needs no barrier.
template <class Target, u32 Threads, u32 Sets> NETRA_DEVICE u8* ring_piece(u8* ring, u32 slot, u32 set, u32 v, u32 thread) {
  return ring + (((slot * Sets + set) * fragment<Target>::weight_pieces + v) * Threads + thread) * 16;
}
/// The lane's pieces of 16 rows (as load_weight_pieces) into ring slot `slot`, set `set`, by
/// asynchronous copies (no commit).
template <class Target, u32 RowBytes, u32 Threads, u32 Sets>
NETRA_DEVICE void copy_weight_pieces(u8* ring, u32 slot, u32 set, const u8* rows, u32 k0, u32 lane, u32 thread) {
  NETRA_UNROLL
  for (u32 v = 0; v < fragment<Target>::weight_pieces; ++v) {
    const netra::fragment::piece pc = fragment<Target>::weight_piece(lane, v);
    copy_16B_to_lds<Target>(ring_piece<Target, Threads, Sets>(ring, slot, set, v, thread), rows + static_cast<u64>(pc.index) * RowBytes + k0 + pc.k, true);
  }
}
/// The thread's pieces of ring slot `slot`, set `set` (landed: after wait_lds_copies).
template <class Target, u32 Threads, u32 Sets> NETRA_DEVICE void read_weight_pieces(u8* ring, u32 slot, u32 set, u32 thread, weight_pieces<Target>& out) {
  NETRA_UNROLL
  for (u32 v = 0; v < fragment<Target>::weight_pieces; ++v) out[v] = *reinterpret_cast<const u32x4*>(ring_piece<Target, Threads, Sets>(ring, slot, set, v, thread));
}

/// The ring's step for block f of `total` (both ring kernels): block f + Stages - 1 issued
/// (issue(f'): block f' into slot f' % Stages, one commit group) or, past the last block, an empty
/// group that keeps the count, so block f has landed once Stages - 1 groups remain; then block f's
/// Sets sets read from its slot. Blocks 0 .. Stages - 2 are issued before the first step.
template <class Target, u32 Stages, u32 Threads, u32 Sets, class Issue>
NETRA_DEVICE void ring_block(u8* ring, u32 f, u32 total, u32 thread, Issue issue, weight_pieces<Target> (&out)[Sets]) {
  if (f + Stages - 1 < total) issue(f + Stages - 1);
  else commit_lds_copies<Target>();
  wait_lds_copies<Target, Stages - 1>();
  NETRA_UNROLL
  for (u32 t = 0; t < Sets; ++t) read_weight_pieces<Target, Threads, Sets>(ring, f % Stages, t, thread, out[t]);
}

/// d = W(16 x 128) * X(128 x the columns of instruction tile n of chunk `chunk`) for the scale
/// block at byte `k0` of the staged columns (d starts from +0).
template <class Target, u32 Stride>
NETRA_DEVICE void chunk_product(d_items<Target>& d, const weight_pieces<Target>& w, const u8* lds, u32 chunk, u32 n, u32 k0, u32 lane) {
  using F = fragment<Target>;
  u32x4 act[F::act_pieces];
  NETRA_UNROLL
  for (u32 v = 0; v < F::act_pieces; ++v) {
    const netra::fragment::piece pc = F::act_piece(lane, n, v);
    act[v] = *reinterpret_cast<const u32x4*>(lds + (chunk * F::chunk_columns + pc.index) * Stride + k0 + pc.k);
  }
  NETRA_UNROLL
  for (u32 i = 0; i < F::shape::d_items; ++i) d[i] = 0.0f;
  netra::fragment::multiply<typename F::shape, F::mmas>(d, w, act);
}

/// Whether instruction tile n of a used chunk `chunk` runs for a plan tile of `routes` routes (the
/// contracts' field Trim): always, or (Trim) only when one of its columns holds a route. Uniform.
template <class Target, bool Trim> NETRA_HOST_DEVICE constexpr bool tile_runs(u32 chunk, u32 n, u32 routes) {
  return !Trim || chunk * fragment<Target>::chunk_columns + n * fragment<Target>::tile_columns < routes;
}

/// Column (in the tile) of D item i of the lane in instruction tile n of chunk `chunk`.
template <class Target> NETRA_HOST_DEVICE constexpr u32 item_column(u32 lane, u32 chunk, u32 n, u32 i) {
  return chunk * fragment<Target>::chunk_columns + fragment<Target>::d_element(lane, n, i).col;
}
/// Row (in the wave's 16) of D item i of the lane.
template <class Target> NETRA_HOST_DEVICE constexpr u32 item_row(u32 lane, u32 n, u32 i) { return fragment<Target>::d_element(lane, n, i).row; }

}  // namespace netra::kernels::moe_grouped
