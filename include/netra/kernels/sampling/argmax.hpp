// netra/kernels/sampling/argmax.hpp — the two argmax stages of contracts::argmax.
//
// Stage one: grid (Chunks / P, rows), P = WavesPerWorkgroup (gfx950: 1 wave64 per workgroup;
//   sm90a: 4 warps per block). Wave w of workgroup (x, r) owns chunk c = x * P + w of row r:
//   values [c * L, min((c + 1) * L, N)), L = chunk_length.
//   Lane l loads the 16-byte vectors l, l + W, l + 2W, ... of its chunk (coalesced; all loads
//   issued before the first use) and, consuming them in load order, keeps m = maxNum of its
//   values (NaN ignored) and whether it saw a NaN. It then finds the first value equal to m
//   (+0 == -0), or the first NaN if it saw one, by scanning its registers from the last value to
//   the first. Its candidate becomes an ordered key (dsl/ordered_key.hpp); the wave takes the
//   unsigned max (butterfly, masks 1, 2, ..., W/2) and lane 0 writes keys[r, c].
// Stage two: grid (rows), one wave per workgroup. Lane l reads key pairs l, l + W, ... of its
//   row with 16-byte loads, the wave takes the max, lane 0 writes out[r] = ~low32(key).
// On sm90a both stages are launched with programmatic dependent launch: each lets its successor
//   start at once (griddepcontrol.launch_dependents) and waits (griddepcontrol.wait) for its
//   predecessor's completion before touching memory the predecessor may write (stage one: the
//   logits; stage two: the keys), so launch latency overlaps the predecessor's tail.
// No LDS, no barriers, no atomics: every key slot is written by exactly one wave, so the result
// does not depend on scheduling.
#pragma once
#include "netra/contracts/argmax.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/float_ops.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/ordered_key.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"

namespace netra::kernels {

template <class Contract> struct argmax_stage_one {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_argmax_stage_one";
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 workgroup_size = wave * Contract::waves_per_workgroup;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 chunk_vectors = Contract::chunk_length / 4;
  static constexpr u32 vectors_per_lane = ceil_div(chunk_vectors, wave);
  static constexpr u32 no_value = 0xFFFFFFFFu;

  struct params {
    const float* logits;
    i64 row_stride;  // elements
    u64* keys;       // [rows, Chunks]
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 rows) {
    return {{Contract::chunks / Contract::waves_per_workgroup, rows, 1}, workgroup_size, 0};
  }

  /// Offset of value `e` (0..3) of the k-th vector of a lane from the lane's first value
  /// (column = chunk * L + 4 * lane + offset).
  NETRA_HOST_DEVICE static constexpr u32 lane_offset(u32 k, u32 e) { return 4 * k * wave + e; }
  /// Number of 16-byte vectors in chunk `chunk` (smaller for the tail chunk only).
  NETRA_HOST_DEVICE static constexpr u32 vectors_in(u32 chunk) {
    if constexpr (!Contract::has_tail) return chunk_vectors;
    else return chunk + 1 == Contract::chunks ? Contract::last_chunk_length / 4 : chunk_vectors;
  }

  static NETRA_DEVICE void run(const params& p) {
    launch_dependents<target>();       // stage two may start; it waits for our completion
    wait_for_prerequisites<target>();  // the logits' producer has completed
    const u32 lane = lane_id<target>();
    const u32 chunk = workgroup_id<target, 0>() * Contract::waves_per_workgroup + wave_id<target>();
    const u32 row = workgroup_id<target, 1>();
    const u32 count = vectors_in(chunk);
    const u32 first_column = chunk * Contract::chunk_length + 4 * lane;
    const float* base = p.logits + static_cast<i64>(row) * p.row_stride + first_column;

    u32x4 v[vectors_per_lane];
    NETRA_UNROLL
    for (u32 k = 0; k < vectors_per_lane; ++k)
      if (lane + k * wave < count) v[k] = load_16B<target, cache_policy::streaming>(base + 4 * k * wave);

    float m = bit_cast<float>(0xFF800000u);  // -inf (NVRTC has no __builtin_inff)
    bool saw_nan = false;
    NETRA_UNROLL
    for (u32 k = 0; k < vectors_per_lane; ++k) {
      if (lane + k * wave < count) {
        NETRA_UNROLL
        for (u32 e = 0; e < 4; ++e) {
          const float x = bit_cast<float>(v[k][e]);
          m = max_num<target>(m, x);
          saw_nan |= x != x;
        }
      }
    }
    // First value equal to m, or first NaN: later hits are overwritten by earlier ones.
    u32 first = no_value;
    if (!saw_nan) {
      NETRA_UNROLL
      for (u32 k = vectors_per_lane; k-- > 0;)
        if (lane + k * wave < count) {
          NETRA_UNROLL
          for (u32 e = 4; e-- > 0;) first = bit_cast<float>(v[k][e]) == m ? lane_offset(k, e) : first;
        }
    } else {
      NETRA_UNROLL
      for (u32 k = vectors_per_lane; k-- > 0;)
        if (lane + k * wave < count) {
          NETRA_UNROLL
          for (u32 e = 4; e-- > 0;) {
            const float x = bit_cast<float>(v[k][e]);
            first = x != x ? lane_offset(k, e) : first;
          }
        }
    }
    const u32 order = saw_nan ? 0xFFFFFFFFu : argmax_order(bit_cast<u32>(m));
    const u64 key = wave_max_u64<target>(first == no_value ? argmax_key_identity : argmax_key(order, first_column + first));
    if (lane == 0) p.keys[static_cast<u64>(row) * Contract::chunks + chunk] = key;
  }
};

template <class Contract> struct argmax_stage_two {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_argmax_stage_two";
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 workgroup_size = wave;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
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
    launch_dependents<target>();
    wait_for_prerequisites<target>();
    u64 best = argmax_key_identity;
    NETRA_UNROLL
    for (u32 k = 0; k < pairs_per_lane; ++k) {
      const u32 pair = lane + k * wave;
      if (pair < key_pairs) {
        // A strong load: with programmatic launch this grid started before the keys were written.
        const u32x4 w = load_16B_after_acquire<target>(keys + 2 * pair);
        best = max_of(best, max_of((static_cast<u64>(w.y) << 32) | w.x, (static_cast<u64>(w.w) << 32) | w.z));
      }
    }
    best = wave_max_u64<target>(best);
    if (lane == 0) p.out[row] = static_cast<i64>(argmax_key_index(best));
  }
};

/// The kernels of an argmax contract instance, in launch order.
template <class Target, u32 N, u32 Chunks, u32 MaxRows, u32 WavesPerWorkgroup, u32 WaveSize>
struct kernels_of<contracts::argmax<Target, N, Chunks, MaxRows, WavesPerWorkgroup, WaveSize>> {
  using contract = contracts::argmax<Target, N, Chunks, MaxRows, WavesPerWorkgroup, WaveSize>;
  using type = type_list<argmax_stage_one<contract>, argmax_stage_two<contract>>;
};

}  // namespace netra::kernels
