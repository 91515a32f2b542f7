// netra/kernels/sampling/argmax.hpp — the two argmax stages of contracts::argmax.
//
// Stage one: grid (Chunks, rows), one wave per workgroup (64 lanes on gfx950, 32 on sm90a).
//   Workgroup (c, r) owns values [c * L, min((c + 1) * L, N)) of row r, L = chunk_length.
//   Lane l loads the 16-byte vectors l, l + W, l + 2W, ... of its chunk (coalesced), all loads
//   issued before any compare; it scans its values in ascending index order keeping the first
//   strict maximum of argmax_order(); the wave then takes the unsigned max of the 64-bit keys
//   (butterfly, dsl/wave_reduce.hpp) and lane 0 writes keys[r * Chunks + c].
// Stage two: grid (rows), one wave per workgroup. Lane l reads key pairs l, l + W, ... of its
//   row with 16-byte loads, the wave takes the max, lane 0 writes out[r] = ~low32(key).
// No LDS, no barriers, no atomics: every key slot is written by exactly one workgroup, so the
// result is independent of scheduling.
#pragma once
#include "netra/contracts/argmax.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/ordered_key.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"

namespace netra::kernels {

template <class Contract> struct argmax_stage_one {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_argmax_stage_one";
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 workgroup_size = wave;
  static constexpr u32 chunk_vectors = Contract::chunk_length / 4;
  static constexpr u32 vectors_per_lane = ceil_div(chunk_vectors, wave);

  struct params {
    const float* logits;
    i64 row_stride;  // elements
    u64* keys;       // [rows, Chunks]
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 rows) { return {{Contract::chunks, rows, 1}, workgroup_size, 0}; }

  /// Column of value `e` (0..3) of the k-th vector lane `lane` loads in chunk `chunk`.
  NETRA_HOST_DEVICE static constexpr u32 column(u32 chunk, u32 lane, u32 k, u32 e) {
    return chunk * Contract::chunk_length + 4 * (lane + k * wave) + e;
  }
  /// Number of 16-byte vectors in chunk `chunk` (smaller for the tail chunk only).
  NETRA_HOST_DEVICE static constexpr u32 vectors_in(u32 chunk) {
    if constexpr (!Contract::has_tail) return chunk_vectors;
    else return chunk + 1 == Contract::chunks ? Contract::last_chunk_length / 4 : chunk_vectors;
  }

  static NETRA_DEVICE void run(const params& p) {
    const u32 chunk = workgroup_id<target, 0>();
    const u32 row = workgroup_id<target, 1>();
    const u32 lane = lane_id<target>();
    const u32 count = vectors_in(chunk);
    const float* base = p.logits + static_cast<i64>(row) * p.row_stride + chunk * Contract::chunk_length;

    u32x4 v[vectors_per_lane];
NETRA_UNROLL
    for (u32 k = 0; k < vectors_per_lane; ++k)
      if (lane + k * wave < count) v[k] = load_16B<target, cache_policy::streaming>(base + 4 * (lane + k * wave));

    u32 best_order = 0, best_column = 0xFFFFFFFFu;  // key identity until a value is seen
NETRA_UNROLL
    for (u32 k = 0; k < vectors_per_lane; ++k) {
      if (lane + k * wave < count) {
NETRA_UNROLL
        for (u32 e = 0; e < 4; ++e) {
          const u32 order = argmax_order(v[k][e]);
          if (order > best_order) {
            best_order = order;
            best_column = column(chunk, lane, k, e);
          }
        }
      }
    }
    const u64 key = wave_max_u64<target>(argmax_key(best_order, best_column));
    if (lane == 0) p.keys[static_cast<u64>(row) * Contract::chunks + chunk] = key;
  }
};

template <class Contract> struct argmax_stage_two {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_argmax_stage_two";
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 workgroup_size = wave;
  static constexpr u32 key_pairs = Contract::chunks / 2;
  static constexpr u32 pairs_per_lane = ceil_div(key_pairs, wave);

  struct params {
    const u64* keys;  // [rows, Chunks], written by stage one
    i64* out;         // [rows]
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 rows) { return {{rows, 1, 1}, workgroup_size, 0}; }

  static NETRA_DEVICE void run(const params& p) {
    const u32 row = workgroup_id<target, 0>();
    const u32 lane = lane_id<target>();
    const u64* keys = p.keys + static_cast<u64>(row) * Contract::chunks;
    u64 best = argmax_key_identity;
NETRA_UNROLL
    for (u32 k = 0; k < pairs_per_lane; ++k) {
      const u32 pair = lane + k * wave;
      if (pair < key_pairs) {
        const u32x4 w = load_16B<target>(keys + 2 * pair);
        const u64 a = (static_cast<u64>(w.y) << 32) | w.x;
        const u64 b = (static_cast<u64>(w.w) << 32) | w.z;
        best = max_of(best, max_of(a, b));
      }
    }
    best = wave_max_u64<target>(best);
    if (lane == 0) p.out[row] = static_cast<i64>(argmax_key_index(best));
  }
};

/// The kernels of an argmax contract instance, in launch order.
template <class Target, u32 N, u32 Chunks, u32 MaxRows, u32 WaveSize>
struct kernels_of<contracts::argmax<Target, N, Chunks, MaxRows, WaveSize>> {
  using contract = contracts::argmax<Target, N, Chunks, MaxRows, WaveSize>;
  using type = type_list<argmax_stage_one<contract>, argmax_stage_two<contract>>;
};

}  // namespace netra::kernels
