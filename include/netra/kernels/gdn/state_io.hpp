// netra/kernels/gdn/state_io.hpp — one row group of a recurrent state column (32 consecutive key
// indices, contiguous in the [slots, 32, V, K] pool) between memory and FP32 registers.
// FP32 storage: 8 x 16 B; BF16 storage: 4 x 16 B, widened exactly on load, rounded to nearest
// even (NaN -> 0x7FFF, dsl/convert.hpp) on store — the only rounding storage adds.
// wave_block: the same runs through LDS — the wave copies its whole state block (its Vb adjacent
// columns, contiguous in the pool) with consecutive 16-byte vectors a lane, then each lane takes its
// runs from LDS; the store is the reverse. The bits are the same as the direct runs. Two forms
// (Async): the one-token decode's copy goes through registers into units XOR-swizzled by column;
// Staging block_and_state's copy is asynchronous (cp.async: no registers, in flight beside the
// token staging; the caller waits and puts the barrier) into units where every C columns (one
// lane's) are followed by a 16-byte pad unit. Either way the 8 column lanes of a row group read 8
// bank groups; the padded form keeps a lane's units at constant offsets.
#pragma once
#include "netra/contracts/gdn/model.hpp"
#include "netra/dsl/async_copy.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/workgroup_barrier.hpp"

namespace netra::kernels::gdn_state_io {
inline constexpr u32 rows = 32;
/// State values in one 16-byte vector.
template <u32 Storage> inline constexpr u32 per_vector = Storage == gdn::state_storage::fp32 ? 4 : 8;

template <u32 Storage> NETRA_DEVICE void widen(const u32x4& w, float* s) {
  if constexpr (Storage == gdn::state_storage::fp32) {
    s[0] = bit_cast<float>(w.x), s[1] = bit_cast<float>(w.y), s[2] = bit_cast<float>(w.z), s[3] = bit_cast<float>(w.w);
  } else {
    NETRA_UNROLL
    for (u32 e = 0; e < 8; ++e) s[e] = bit_cast<float>(e % 2 ? w[static_cast<int>(e / 2)] & 0xFFFF0000u : w[static_cast<int>(e / 2)] << 16);
  }
}
template <class Target, u32 Storage> NETRA_DEVICE u32x4 narrow(const float* s) {
  if constexpr (Storage == gdn::state_storage::fp32) return u32x4{bit_cast<u32>(s[0]), bit_cast<u32>(s[1]), bit_cast<u32>(s[2]), bit_cast<u32>(s[3])};
  else return u32x4{pack_bf16x2<Target>(s[0], s[1]), pack_bf16x2<Target>(s[2], s[3]), pack_bf16x2<Target>(s[4], s[5]), pack_bf16x2<Target>(s[6], s[7])};
}

template <class Target, u32 Storage> NETRA_DEVICE void load(const void* base, float (&s)[rows]) {
  constexpr u32 n = per_vector<Storage>;
  NETRA_UNROLL
  for (u32 v = 0; v < rows / n; ++v) widen<Storage>(load_16B<Target>(static_cast<const char*>(base) + 16 * v), s + n * v);
}

template <class Target, u32 Storage> NETRA_DEVICE void store(void* base, const float (&s)[rows]) {
  constexpr u32 n = per_vector<Storage>;
  NETRA_UNROLL
  for (u32 v = 0; v < rows / n; ++v) store_16B<Target>(static_cast<char*>(base) + 16 * v, narrow<Target, Storage>(s + n * v));
}

/// A wave's block of Columns state columns in LDS (`lds`: `units` 16-byte units); each lane owns
/// ColumnsPerLane adjacent columns of it.
template <class Target, u32 Storage, u32 Columns, u32 Wave, u32 ColumnsPerLane = 1, bool Async = false> struct wave_block {
  static constexpr bool async = Async;
  static constexpr u32 column_vectors = gdn::key_dim * gdn::state_bytes_per_element(Storage) / 16;
  static constexpr u32 run_vectors = rows / per_vector<Storage>;
  static constexpr u32 vectors = Columns * column_vectors;
  /// LDS units of the block: its vectors (and in the padded form one pad unit per ColumnsPerLane columns).
  static constexpr u32 units = vectors + (Async ? Columns / ColumnsPerLane : 0);
  static constexpr u32 bytes = 16 * units;
  static_assert(vectors % Wave == 0 && column_vectors % 8 == 0 && Columns % ColumnsPerLane == 0,
                "gdn_state_io::wave_block: whole vectors per lane, columns of whole bank rows, whole lanes' columns");
  /// The LDS unit of the block's vector p (distinct for distinct p, below units).
  NETRA_HOST_DEVICE static constexpr u32 at(u32 p) {
    if constexpr (Async) return p + p / (column_vectors * ColumnsPerLane);
    else return p ^ ((p / column_vectors / ColumnsPerLane) & 7u);
  }
  /// The wave's block from global memory (every lane calls it); Async: one group of asynchronous
  /// copies. The caller waits for them (wait_lds_copies, Async) and then puts the wave or workgroup barrier.
  NETRA_DEVICE static void fetch(const char* global, u32x4* lds, u32 lane) {
    NETRA_UNROLL
    for (u32 k = 0; k < vectors / Wave; ++k) {
      if constexpr (Async) copy_16B_to_lds<Target>(&lds[at(lane + k * Wave)], global + 16 * (lane + k * Wave), true);
      else lds[at(lane + k * Wave)] = load_16B<Target>(global + 16 * (lane + k * Wave));
    }
    if constexpr (Async) commit_lds_copies<Target>();
  }
  /// Rows [32 group, + 32) of the block's column `column`.
  NETRA_DEVICE static void take(const u32x4* lds, u32 column, u32 group, float (&s)[rows]) {
    NETRA_UNROLL
    for (u32 v = 0; v < run_vectors; ++v) widen<Storage>(lds[at(column * column_vectors + group * run_vectors + v)], s + per_vector<Storage> * v);
  }
  NETRA_DEVICE static void put(u32x4* lds, u32 column, u32 group, const float (&s)[rows]) {
    NETRA_UNROLL
    for (u32 v = 0; v < run_vectors; ++v) lds[at(column * column_vectors + group * run_vectors + v)] = narrow<Target, Storage>(s + per_vector<Storage> * v);
  }
  /// The wave barrier, then the block to global memory (every lane calls it).
  NETRA_DEVICE static void flush(char* global, const u32x4* lds, u32 lane) {
    wave_barrier<Target>();
    NETRA_UNROLL
    for (u32 k = 0; k < vectors / Wave; ++k) store_16B<Target>(global + 16 * (lane + k * Wave), lds[at(lane + k * Wave)]);
  }
};
}  // namespace netra::kernels::gdn_state_io
