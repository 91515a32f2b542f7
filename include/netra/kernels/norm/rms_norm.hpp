// netra/kernels/norm/rms_norm.hpp — the one kernel of contracts::norm (RMSNorm, add + RMSNorm, gated).
//
// Contract: contracts/norm/norm.hpp (the sum's order, rs, y, the output rounding; bitwise).
// Mapping: grid ceil(rows / R) workgroups of R * T_r threads (R = RowsPerWorkgroup, T_r threads
// per row). Thread t of workgroup g owns row g R + t / T_r (row = token * heads + head) and, with
// j = t % T_r, the slices q_p = j + T_r p (p < P = S / T_r), slice q holding chunks q + S k
// (k < K): one 16-byte load of x (and of r, z) and of w per chunk, all issued before the first
// use. Per slice one FMA chain over its 8 K values; the butterfly (xor masks 1 .. G/2) over slice
// q: kernels/norm/row_sum.hpp. Then y per value, one 16-byte BF16 store per chunk
// (FP8: the group amax over the group's threads (16, or a gated head's T_r, each max over its P
// chunks first), one scale per group by dsl/block_quant.hpp, one 8-byte E4M3 store per chunk; the
// thread of the group's first chunk stores the scale; Chain bit 32: kernels/norm/group_quarters.hpp,
// each group's amax and quantizer by one lane quarter). add_rms stores r' (16 bytes per chunk) over
// r. Rows past the last compute on the last row and store nothing (every lane shuffles).
// Split > 1 (R = 1): grid rows x Split, workgroup g is part g % Split of row g / Split; every part
// loads and sums the whole row and stores only its chunks (owns), r' included; add_rms: the parts
// are a cluster (arrive after the sum's reads, wait, then r'). gated: silu(z) before the sum (Chain:
// silu, amax, 1 / d by silu_bf16.hpp, dsl/group_max.hpp, group_reciprocal.hpp). gfx950: a wave per
// row of 2048, 4 heads per wave (gated); no LDS. sm90a: two warps per row, or one (P = 2); gated 2
// heads per warp, or a head over 16 / P threads (SlicesPerThread P). PDL: weights before the wait.
#pragma once
#include "netra/contracts/norm/norm.hpp"
#include "netra/dsl/block_quant.hpp"
#include "netra/dsl/cluster.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/group_max.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/rsqrt.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/kernels/norm/group_quarters.hpp"
#include "netra/kernels/norm/group_reciprocal.hpp"
#include "netra/kernels/norm/row_sum.hpp"
#include "netra/kernels/norm/silu_bf16.hpp"

namespace netra::kernels {

template <class Contract> struct norm_kernel {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_norm";
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 min_workgroups_per_processor = Contract::resident;  // 0: no minimum (launch bounds of the block size alone)
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 threads_per_row = Contract::threads_per_row;
  static constexpr u32 slices = Contract::slices;
  static constexpr u32 per_thread = Contract::slices_per_thread;  // P
  static constexpr u32 per_slice = Contract::chunks_per_slice;    // K
  static constexpr u32 chunks = per_thread * per_slice;           // chunks per thread
  static constexpr u32 rows_per_workgroup = Contract::rows_per_workgroup;
  static constexpr u32 waves_per_row = Contract::waves_per_row;
  static constexpr u32 split = Contract::split;
  static constexpr norm_kind kind = Contract::kind;
  /// add_rms with Split > 1: the parts of a row are a cluster; r' only after every part read r.
  static constexpr bool split_residual = kind == norm_kind::add_rms && split > 1;
  static constexpr u32 cluster_size = split_residual ? split : 1;

  struct params {
    const u16* x;       // BF16 [T, C], token stride x_stride
    u16* residual;      // add_rms: BF16 [T, C], read and written
    const u16* gate;    // gated: BF16 [T, C]
    const u16* weight;  // BF16 [N]
    void* out;          // BF16 or E4M3 [T, C], compact
    float* scales;      // FP8: [T, C / 128]
    i64 x_stride, residual_stride, gate_stride;  // elements
    float eps;
    u32 rows;  // tokens * heads
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 rows) {
    const u32 groups = ceil_div(rows, rows_per_workgroup);
    return {{Contract::grid_cap > 0 && groups > Contract::grid_cap ? Contract::grid_cap : groups * split, 1, 1}, workgroup_size, 0};
  }
  /// Row of thread `thread` of workgroup `workgroup` (may be >= rows in the last workgroup).
  NETRA_HOST_DEVICE static constexpr u32 row_of(u32 workgroup, u32 thread) { return workgroup / split * rows_per_workgroup + thread / threads_per_row; }
  /// True when the workgroup's part (workgroup % Split) stores the thread's chunk i: every part
  /// loads and sums the whole row, part s stores k = i % K in [s K / Split, (s + 1) K / Split).
  NETRA_HOST_DEVICE static constexpr bool owns(u32 part, u32 i) { return (i % per_slice) / (per_slice / split) == part; }
  NETRA_HOST_DEVICE static constexpr u32 slice_of(u32 thread, u32 p) { return thread % threads_per_row + threads_per_row * p; }
  /// The thread's chunk i = p K + k: chunk q_p + S k of its row (values 8 chunk .. 8 chunk + 7).
  NETRA_HOST_DEVICE static constexpr u32 chunk_of(u32 thread, u32 i) { return slice_of(thread, i / per_slice) + slices * (i % per_slice); }
  /// Offset of a row's first value in a [T, C] tensor of token stride `stride`.
  NETRA_HOST_DEVICE static constexpr i64 row_offset(u32 row, i64 stride) {
    return static_cast<i64>(row / Contract::heads) * stride + static_cast<i64>(row % Contract::heads) * Contract::n;
  }
  /// Chain bit 32: a group's amax and quantizer by lane quarters (kernels/norm/group_quarters.hpp).
  static constexpr bool quarters = (Contract::chain & 32) != 0;
  /// True when the thread stores the scale of its chunk i's group: the group's first chunk (bit
  /// 32: the first lane of the quarter that holds slot i).
  NETRA_HOST_DEVICE static constexpr bool stores_scale(u32 thread, u32 i) {
    return quarters ? group_quarters<target, Contract::chain>::stores_scale(thread, i) : chunk_of(thread, i) % 16 == 0;
  }
  /// Chunk i's E4M3 group slot: one per chunk, or one for all (a gated head over < 16 threads).
  static constexpr u32 group_threads = Contract::group_threads;
  static constexpr u32 group_slots = group_threads < 16 ? 1 : chunks;
  NETRA_HOST_DEVICE static constexpr u32 slot_of(u32 i) { return group_slots == 1 ? 0 : i; }

  static NETRA_DEVICE float lo_of(u32 w) { return bit_cast<float>(w << 16); }
  static NETRA_DEVICE float hi_of(u32 w) { return bit_cast<float>(w & 0xFFFF0000u); }

  /// A row's loaded inputs: x (and r for add_rms, z for gated), per chunk of the thread.
  struct row_inputs {
    u32x4 v[chunks], r[kind == norm_kind::add_rms ? chunks : 1], z[kind == norm_kind::gated ? chunks : 1];
  };
  static NETRA_DEVICE void load_chunks(const u16* row_base, u32 thread, u32x4 (&into)[chunks]) {
NETRA_UNROLL
    for (u32 i = 0; i < chunks; ++i) into[i] = load_16B<target, cache_policy::streaming_early>(row_base + 8 * chunk_of(thread, i));
  }
  static NETRA_DEVICE void load_row(const params& p, u32 thread, u32 row, row_inputs& in) {
    load_chunks(p.x + row_offset(row, p.x_stride), thread, in.v);
    if constexpr (kind == norm_kind::add_rms) load_chunks(p.residual + row_offset(row, p.residual_stride), thread, in.r);
    if constexpr (kind == norm_kind::gated) load_chunks(p.gate + row_offset(row, p.gate_stride), thread, in.z);
  }

  static NETRA_DEVICE void run(const params& p) { run_part<0>(p, workgroup_id<target, 0>() % split); }
  /// The body for part Part (the workgroup's part is uniform: one branch per workgroup).
  template <u32 Part> static NETRA_DEVICE void run_part(const params& p, u32 part) {
    if constexpr (Part + 1 < split) {
      if (part != Part) return run_part<Part + 1>(p, part);
    }
    const u32 thread = thread_id<target>();
    u32x4 w[chunks] = {};
NETRA_UNROLL
    for (u32 i = 0; i < chunks; ++i)
      if (owns(Part, i)) w[i] = load_16B<target>(p.weight + 8 * chunk_of(thread, i));
    constexpr bool always_at_start = Contract::max_tokens <= Contract::release_at_start_max_tokens;
    const successor_release<target> release(always_at_start || p.rows <= Contract::release_at_start_max_tokens * Contract::heads);
    wait_for_prerequisites<target>();  // the producers of x, r, z have completed (and our outputs' readers)
    const u32 row = row_of(workgroup_id<target, 0>(), thread);
    row_inputs in;
    if constexpr (Contract::grid_cap == 0) {
      const u32 clamped = row < p.rows ? row : p.rows - 1;
      load_row(p, thread, clamped, in);
      finish_row<Part>(p, thread, clamped, row < p.rows, in, w);
    } else {
      // Each wave loops while its first row is in range (uniform: every lane shuffles), rows
      // past the last computing on the last row and storing nothing.
      const u32 step = shape(p.rows).grid[0] * rows_per_workgroup;
      const u32 first = row_of(workgroup_id<target, 0>(), (thread / wave) * wave);
      constexpr bool prefetch = kind != norm_kind::add_rms;  // the next row's loads in flight (add_rms: too many registers)
      load_row(p, thread, row < p.rows ? row : p.rows - 1, in);
      for (u32 k = 0; first + k * step < p.rows; ++k) {
        const u32 current = row + k * step, next = current + step;
        const bool more = first + (k + 1) * step < p.rows;
        row_inputs ahead;
        if (prefetch && more) load_row(p, thread, next < p.rows ? next : p.rows - 1, ahead);
        finish_row<Part>(p, thread, current < p.rows ? current : p.rows - 1, current < p.rows, in, w);
        if (prefetch) in = ahead;
        else if (more) load_row(p, thread, next < p.rows ? next : p.rows - 1, in);
      }
    }
    release.after_stores();
  }

  /// Everything after the loads for one row: r' (stored), the sum, rs, y, the stores of part Part.
  template <u32 Part>
  static NETRA_DEVICE void finish_row(const params& p, u32 thread, u32 row, bool live, row_inputs& in, const u32x4 (&w)[chunks]) {
    u32x4 (&v)[chunks] = in.v;
    float gate[kind == norm_kind::gated ? chunks : 1][8] = {};  // gated: silu(z), independent of the sum (issued before it)
    constexpr u32 gated = kind == norm_kind::gated ? 1 : 0, interleave = gated ? Contract::chain & 8 : 0;
    if constexpr (gated != 0) gates_of<Contract::chain>(in.z, gate);  // Chain bit 8: the divisors only, the quotients between the lane stages
    if constexpr (kind == norm_kind::add_rms) {
      u16* r = p.residual + row_offset(row, p.residual_stride);
NETRA_UNROLL
      for (u32 i = 0; i < chunks; ++i) {
        u32 sum_words[4];
NETRA_UNROLL
        for (u32 e = 0; e < 4; ++e)
          sum_words[e] = pack_bf16x2<target>(add_rn(lo_of(v[i][e]), lo_of(in.r[i][e])), add_rn(hi_of(v[i][e]), hi_of(in.r[i][e])));
        v[i] = u32x4{sum_words[0], sum_words[1], sum_words[2], sum_words[3]};
        if (!split_residual && live && owns(Part, i)) store_16B<target>(r + 8 * chunk_of(thread, i), v[i]);
      }
    }
    float part[per_thread];
NETRA_UNROLL
    for (u32 s = 0; s < per_thread; ++s) {
      float acc = 0.0f;
NETRA_UNROLL
      for (u32 k = 0; k < per_slice; ++k) {
NETRA_UNROLL
        for (u32 e = 0; e < 4; ++e) {
          const u32 word = v[s * per_slice + k][e];
          acc = fma_rn(lo_of(word), lo_of(word), acc);
          acc = fma_rn(hi_of(word), hi_of(word), acc);
        }
      }
      part[s] = acc;
    }
    if constexpr (split_residual) cluster_ops<target>::arrive();  // this part has read r (its values are summed above)
    if constexpr (interleave != 0)  // gated, P = 1: the lane stages, each shuffle in flight under its share of the quotients
NETRA_UNROLL
      for (u32 mask = 1, stage = 0; mask < threads_per_row; mask <<= 1, ++stage) {
        const float other = xor_shuffle_f32<target>(part[0], mask);
        gate_quotients<Contract::chain, __builtin_ctz(threads_per_row)>(in.z, gate, stage);
        part[0] = add_rn(part[0], other);
      }
    const float sum = interleave != 0 ? part[0] : norm_row_sum<Contract>::of(part, thread);
    const float rs = rsqrt_f32(add_rn(mul_rn(sum, 1.0f / Contract::n), p.eps));

    u32 y[chunks][4] = {};
NETRA_UNROLL
    for (u32 i = 0; i < chunks; ++i) {
      if (!owns(Part, i)) continue;
NETRA_UNROLL
      for (u32 e = 0; e < 4; ++e)
        y[i][e] = pack_bf16x2<target>(value(v[i][e], w[i][e], gate[gated * i][2 * e], rs, false), value(v[i][e], w[i][e], gate[gated * i][2 * e + 1], rs, true));
    }

    const i64 out_offset = static_cast<i64>(row) * Contract::n;
    if constexpr (!Contract::fp8_out) {
      u16* out = static_cast<u16*>(p.out) + out_offset;
NETRA_UNROLL
      for (u32 i = 0; i < chunks; ++i)
        if (live && owns(Part, i)) store_16B<target>(out + 8 * chunk_of(thread, i), u32x4{y[i][0], y[i][1], y[i][2], y[i][3]});
    } else if constexpr (quarters) {  // Chain bit 32: the four slots' groups by lane quarters
      u8* out = static_cast<u8*>(p.out) + out_offset;
      u32 q[chunks][2];
      const e4m3_block_quantizer own = group_quarters<target, Contract::chain>::quantize(y, q);
      const u32 s = group_quarters<target, Contract::chain>::slot_of_lane(thread);
NETRA_UNROLL
      for (u32 i = 0; i < chunks; ++i)
        if (live) store_8B<target>(out + 8 * chunk_of(thread, i), q[i][0], q[i][1]);
      if (live && stores_scale(thread, s)) store_4B<target>(p.scales + static_cast<i64>(row) * Contract::groups_per_row + chunk_of(thread, s) / 16, bit_cast<u32>(own.scale));
    } else {
      u8* out = static_cast<u8*>(p.out) + out_offset;
      u32 magnitude[group_slots] = {};
NETRA_UNROLL
      for (u32 i = 0; i < chunks; ++i)
        if (owns(Part, i))
          magnitude[slot_of(i)] = max_of(magnitude[slot_of(i)], max_of(max_of(bf16x2_magnitude_max(y[i][0]), bf16x2_magnitude_max(y[i][1])),
                                                                    max_of(bf16x2_magnitude_max(y[i][2]), bf16x2_magnitude_max(y[i][3]))));
      if constexpr ((Contract::chain & 4) != 0) {
        magnitude[0] = group_max_u32<target, group_threads>(magnitude[0]);  // gated: one slot
      } else {
NETRA_UNROLL
        for (u32 mask = 1; mask < group_threads; mask <<= 1) {
NETRA_UNROLL
          for (u32 g = 0; g < group_slots; ++g)  // g = i where group_slots = chunks (Split 1 otherwise)
            if (owns(Part, g)) magnitude[g] = max_of(magnitude[g], xor_shuffle_u32<target>(magnitude[g], mask));
        }
      }
NETRA_UNROLL
      for (u32 i = 0; i < chunks; ++i) {
        if (!owns(Part, i)) continue;
        const e4m3_block_quantizer quant = group_quantizer<Contract::chain>(magnitude[slot_of(i)]);  // one slot: the same, computed once
        u32 q[4];
NETRA_UNROLL
        for (u32 e = 0; e < 4; ++e) q[e] = pack_e4m3x2<target>(quant.divider.quotient(lo_of(y[i][e])), quant.divider.quotient(hi_of(y[i][e])));
        const u32 c = chunk_of(thread, i);
        if (live) {
          store_8B<target>(out + 8 * c, q[0] | (q[1] << 16), q[2] | (q[3] << 16));
          if (stores_scale(thread, i)) store_4B<target>(p.scales + static_cast<i64>(row) * Contract::groups_per_row + c / 16, bit_cast<u32>(quant.scale));
        }
      }
    }
    if constexpr (split_residual) {
      cluster_ops<target>::wait();  // every part of the row has read r: r' of the part's chunks over r
      u16* r = p.residual + row_offset(row, p.residual_stride);
NETRA_UNROLL
      for (u32 i = 0; i < chunks; ++i)
        if (live && owns(Part, i)) store_16B<target>(r + 8 * chunk_of(thread, i), v[i]);
    }
  }

  /// y of the low (hi = false) or high BF16 of a word pair, in FP32 (the contract's order; g = silu(z)).
  static NETRA_DEVICE float value(u32 vw, u32 ww, float g, float rs, bool hi) {
    const float x = hi ? hi_of(vw) : lo_of(vw), wt = hi ? hi_of(ww) : lo_of(ww);
    const float n = mul_rn(x, rs);
    if constexpr (kind == norm_kind::gated) return mul_rn(mul_rn(n, wt), g);
    else if constexpr (Contract::weight_form == norm_weight::zero_centred) return mul_rn(n, add_rn(1.0f, wt));
    else return mul_rn(n, wt);
  }
};

/// The kernels of a norm contract instance, in launch order.
template <class Target, u32 Kind, u32 Weight, u32 Fp8Out, u32 MaxTokens, u32 WavesPerRow, u32 RowsPerWorkgroup, u32 Resident, u32 Split,
          u32 SlicesPerThread, u32 Chain, u32 WaveSize>
struct kernels_of<contracts::norm<Target, Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident, Split, SlicesPerThread, Chain, WaveSize>> {
  using contract = contracts::norm<Target, Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident, Split, SlicesPerThread, Chain, WaveSize>;
  using type = type_list<norm_kernel<contract>>;
};

}  // namespace netra::kernels
