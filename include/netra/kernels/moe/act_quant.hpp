// netra/kernels/moe/act_quant.hpp — the one kernel of contracts::moe_act_quant.
//
// Contract: y = bf16(silu(gate) * up) over [R, 1024] BF16 rows, then E4M3 per 128 values with
// scale = amax / 448 (non-finite groups poisoned, amax = 0 keeps signed zeros); bitwise.
// Mapping: grid ceil(R / RowsPerWorkgroup), workgroup RowsPerWorkgroup * L threads,
// L = 64 / VectorsPerLane threads per row. Thread t of workgroup w owns row w * RowsPerWorkgroup
// + t / L and, with j = t % L, the chunks c < VectorsPerLane of 8 values starting at 8j + 8Lc:
// 16-byte loads of gate and up (streaming), 8 SiLU products, one packed BF16 rounding per pair,
// then the group amax across the 16 threads of the group (xor masks 1, 2, 4, 8; integer max of
// BF16 magnitudes, so NaN > +Inf > finite), one scale and one reciprocal per group, 8 quotients
// by Markstein's correction (act_quant_divider: equal to the IEEE division after E4M3 rounding),
// E4M3 packing and one 8-byte store per chunk; thread j % 16 == 0 stores the group's scale.
// Rows past R (last workgroup) compute on row R - 1 and store nothing, so every lane of a wave
// takes part in the shuffles. gfx950: one wave64 per row at VectorsPerLane 1; sm90a: two warps per
// row at VectorsPerLane 1, one warp per row at 2 (see the contract). On sm90a the kernel is
// launched with programmatic dependent launch: it lets its successor start at once and waits for
// its predecessor before the first load; for more than Contract::release_at_start_max_rows rows
// it lets its successor start only after its stores (dsl/sync.hpp successor_release).
#pragma once
#include "netra/contracts/moe/act_quant.hpp"
#include "netra/dsl/block_quant.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"

namespace netra::kernels {

// The group quantizer lives in dsl/block_quant.hpp (shared with the normalization kernels).
using netra::act_quant_divider;
using netra::act_quant_divisor;
using netra::act_quant_scale;
using netra::act_quant_scale_fast;
using netra::bf16x2_magnitude_max;

template <class Contract> struct moe_act_quant_kernel {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_moe_act_quant";
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 lanes_per_row = Contract::lanes_per_row;
  static constexpr u32 vectors = Contract::vectors_per_lane;
  static constexpr u32 rows_per_workgroup = Contract::rows_per_workgroup;

  struct params {
    const u16* in;   // BF16 [rows, row_stride]: [gate | up]
    i64 row_stride;  // elements
    u8* out;         // E4M3 [rows, 512]
    float* scales;   // FP32 [rows, 4]
    u32 rows;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 rows) {
    return {{ceil_div(rows, rows_per_workgroup), 1, 1}, workgroup_size, 0};
  }

  /// Row owned by thread `thread` of workgroup `workgroup` (may be >= R in the last workgroup).
  NETRA_HOST_DEVICE static constexpr u32 row_of(u32 workgroup, u32 thread) {
    return workgroup * rows_per_workgroup + thread / lanes_per_row;
  }
  /// First of the 8 values of chunk `chunk` of thread `thread` (0..511, a multiple of 8).
  NETRA_HOST_DEVICE static constexpr u32 first_value(u32 thread, u32 chunk) {
    return 8 * (thread % lanes_per_row) + 8 * lanes_per_row * chunk;
  }
  /// The 128-value group of that chunk.
  NETRA_HOST_DEVICE static constexpr u32 group_of(u32 thread, u32 chunk) { return first_value(thread, chunk) / Contract::group; }
  /// True for the thread that stores the scale of its groups.
  NETRA_HOST_DEVICE static constexpr bool stores_scale(u32 thread) { return thread % Contract::lanes_per_group == 0; }

  /// Thread `thread`'s chunks of one row: `in` at its first value (first_value(thread, 0)), `out`
  /// and `scales` at the row's start; stores only when `live` (every lane takes part in the
  /// shuffles). `load(address)` reads 16 bytes of the input (the persistent decode kernel reads
  /// rows other workgroups wrote in the same launch: loads after an acquire). The contract's
  /// operations, so every caller gets the same bits.
  template <class Load> static NETRA_DEVICE void quantize_row(const u16* in, u8* out, float* scales, u32 thread, bool live, Load load) {
    u32x4 gate[vectors], up[vectors];
NETRA_UNROLL
    for (u32 c = 0; c < vectors; ++c) {  // first_value(thread, c) = first_value(thread, 0) + 8 L c
      gate[c] = load(in + 8 * lanes_per_row * c);
      up[c] = load(in + Contract::width + 8 * lanes_per_row * c);
    }

    u32 y[vectors][4];
    u32 magnitude[vectors];
NETRA_UNROLL
    for (u32 c = 0; c < vectors; ++c) {
      magnitude[c] = 0;
NETRA_UNROLL
      for (u32 w = 0; w < 4; ++w) {
        const u32 g = gate[c][w], u = up[c][w];
        const float lo = mul_rn(silu_f32(bit_cast<float>(g << 16)), bit_cast<float>(u << 16));
        const float hi = mul_rn(silu_f32(bit_cast<float>(g & 0xFFFF0000u)), bit_cast<float>(u & 0xFFFF0000u));
        y[c][w] = pack_bf16x2<target>(lo, hi);
        magnitude[c] = max_of(magnitude[c], bf16x2_magnitude_max(y[c][w]));
      }
    }

NETRA_UNROLL
    for (u32 mask = 1; mask < Contract::lanes_per_group; mask <<= 1) {
NETRA_UNROLL
      for (u32 c = 0; c < vectors; ++c) magnitude[c] = max_of(magnitude[c], xor_shuffle_u32<target>(magnitude[c], mask));
    }

NETRA_UNROLL
    for (u32 c = 0; c < vectors; ++c) {
      const float scale = act_quant_scale_fast(magnitude[c]);
      const act_quant_divider divider = act_quant_divider::make(magnitude[c], act_quant_divisor(magnitude[c], scale));
      u32 q[4];
NETRA_UNROLL
      for (u32 w = 0; w < 4; ++w) {
        const float lo = divider.quotient(bit_cast<float>(y[c][w] << 16));
        const float hi = divider.quotient(bit_cast<float>(y[c][w] & 0xFFFF0000u));
        q[w] = pack_e4m3x2<target>(lo, hi);
      }
      if (live) {
        store_8B<target>(out + first_value(thread, c), q[0] | (q[1] << 16), q[2] | (q[3] << 16));
        if (stores_scale(thread)) store_4B<target>(scales + group_of(thread, c), bit_cast<u32>(scale));
      }
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    const u32 thread = thread_id<target>();
    const u32 row = row_of(workgroup_id<target, 0>(), thread);
    const bool live = row < p.rows;
    const u64 r = live ? row : p.rows - 1;
    const u16* in = p.in + static_cast<i64>(r) * p.row_stride + first_value(thread, 0);  // addresses before the wait
    // at once for every call of the decode contract (known at compile time), else by the call's rows
    constexpr bool always_at_start = Contract::max_rows <= Contract::release_at_start_max_rows;
    const successor_release<target> release(always_at_start || p.rows <= Contract::release_at_start_max_rows);
    wait_for_prerequisites<target>();  // the producer of `in` has completed (and our outputs' readers)
    quantize_row(in, p.out + r * Contract::width, p.scales + r * Contract::groups, thread, live,
                 [](const u16* a) { return load_16B<target, cache_policy::streaming>(a); });
    release.after_stores();
  }
};

/// The kernels of an act_quant contract instance, in launch order.
template <class Target, u32 MaxRows, u32 VectorsPerLane, u32 RowsPerWorkgroup, u32 WaveSize>
struct kernels_of<contracts::moe_act_quant<Target, MaxRows, VectorsPerLane, RowsPerWorkgroup, WaveSize>> {
  using contract = contracts::moe_act_quant<Target, MaxRows, VectorsPerLane, RowsPerWorkgroup, WaveSize>;
  using type = type_list<moe_act_quant_kernel<contract>>;
};

}  // namespace netra::kernels
