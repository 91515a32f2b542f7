// netra/contracts/moe/act_quant.hpp — fused SiLU(gate) * up -> BF16 boundary -> block E4M3.
//
// Semantics (bitwise; tests/oracles/moe_routing.hpp states them plainly): input BF16 [R, 1024],
// row r = [gate (512) | up (512)] with a row stride in elements. For each r and i < 512:
//   y = bf16( silu_f32(gate[r, i]) * up[r, i] )       (dsl/math.hpp silu, one FP32 multiply,
//                                                       dsl/convert.hpp BF16: RNE, NaN -> 0x7FFF)
// then per group G = i / 128 (four groups of 128 contiguous values):
//   amax = max |y| over the group's 128 BF16 values, NaN counting above +Inf
//   finite amax > 0: scale = amax / 448 (IEEE), q = e4m3(y / scale) (IEEE division, then
//                    dsl/convert.hpp E4M3: RNE; |y / scale| can exceed 448 only by rounding and
//                    saturates to ±448; tiny quotients become E4M3 subnormals or signed zeros)
//   amax = 0:        scale = +0.0, q = e4m3(y) = 0x00 / 0x80 (the sign of each zero is kept)
//   amax = +Inf:     (an infinite y, no NaN) scale = +Inf, every q of the group = 0x7F (NaN)
//   amax = NaN:      scale = 0x7FC00000 (canonical quiet NaN), every q of the group = 0x7F
// so a group that holds a non-finite value is poisoned as a whole: downstream GEMMs see NaN, never
// a silently finite value. Outputs: E4M3 [R, 512] (row-major, contiguous) and FP32 scales [R, 4]
// (contiguous, scale of values 128G..128G+127 at [r, G]).
// Comparison policy: bitwise, every value and every scale (zero mismatches).
//
// Mapping (both targets, one kernel): a row is owned by L = 64 / VectorsPerLane consecutive
// threads; thread j of its row owns VectorsPerLane chunks c of 8 values, values
// [8j + 8Lc, 8j + 8Lc + 8): one 16-byte load of gate and one of up per chunk, one 8-byte store of
// E4M3. The 128-value group of a chunk is held by 16 consecutive threads (inside one wave on both
// targets), which take amax with a 4-stage xor butterfly (masks 1, 2, 4, 8); the first thread of
// the 16 stores the scale. RowsPerWorkgroup rows share a workgroup; grid = ceil(R / RowsPerWorkgroup).
// No LDS, no barriers, no atomics, no workspace.
//   gfx950 decode (R = 9):  VectorsPerLane 1, RowsPerWorkgroup 1 -> 9 one-wave64 workgroups (the article's).
//   sm90a  decode (R = 9):  VectorsPerLane 1, RowsPerWorkgroup 1 -> 9 two-warp blocks.
//   R up to 9 * 512: VectorsPerLane 1, 4 rows per 256-lane workgroup on both targets (gfx950: one
//   wave64 per row; sm90a: two warps per row). On the H200 this measured faster (6.6-6.8 us at
//   R = 4608) than one warp per row in 8-row blocks (8.5 us), half a warp per row (11.0 us) and
//   one warp per row in 4-row blocks (8.2 us, though it fits in one wave of resident blocks).
// The values are the same for every mapping.
#pragma once
#include "netra/contracts/common.hpp"
#include "netra/contracts/moe/route_layout.hpp"

namespace netra {

/// What a call to act_quant has (its tensors, runtime/tensor.hpp):
///   in:     bfloat16 [rows, 1024] = [gate | up], rows contiguous, row stride a multiple of 8;
///   out:    E4M3 [rows, 512] (float8_e4m3fn, or uint8 holding E4M3 bytes), compact;
///   scales: float32 [rows, 4], compact.
struct moe_act_quant_signature {
  target_id target;
  device_ref device;
  tensor_arg in;
  tensor_arg out;
  tensor_arg scales;
  NETRA_HOST_DEVICE constexpr i64 rows() const { return in.rank == 2 ? in.shape[0] : 0; }
  NETRA_HOST_DEVICE constexpr i64 cols() const { return in.rank == 2 ? in.shape[1] : 0; }
  /// Elements between input rows (a single row's stride does not matter: its length).
  NETRA_HOST_DEVICE constexpr i64 row_stride() const { return rows() == 1 ? cols() : in.strides[0]; }
};

namespace contracts {

template <class Target, u32 MaxRows, u32 VectorsPerLane, u32 RowsPerWorkgroup, u32 WaveSize = Target::wave_size>
struct moe_act_quant {
  static_assert(is_built_target_v<Target> || is_audit_only_target_v<Target>,
                "netra::contracts::moe_act_quant: field Target is not supported; supported: netra::gfx950, netra::sm90a, "
                "netra::gfx942, netra::gfx1151 (built and audited only)");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_act_quant: field WaveSize must equal the target's wave size (gfx950, gfx942: 64; sm90a, gfx1151: 32)");
  static_assert(MaxRows >= 1 && MaxRows <= 9u * 512u,
                "netra::contracts::moe_act_quant: field MaxRows must be in [1, 4608] (9 routes x up to 512 tokens)");
  static_assert(VectorsPerLane == 1 || VectorsPerLane == 2 || VectorsPerLane == 4,
                "netra::contracts::moe_act_quant: field VectorsPerLane must be 1, 2 or 4 (64, 32 or 16 threads per row)");
  static_assert(RowsPerWorkgroup >= 1 && RowsPerWorkgroup * (64u / VectorsPerLane) <= 1024u,
                "netra::contracts::moe_act_quant: field RowsPerWorkgroup must be >= 1 with at most 1024 threads per workgroup");
  static_assert((RowsPerWorkgroup * (64u / VectorsPerLane)) % WaveSize == 0,
                "netra::contracts::moe_act_quant: field RowsPerWorkgroup must make whole waves (RowsPerWorkgroup * 64 / "
                "VectorsPerLane a multiple of the wave size)");

  using target = Target;
  static constexpr const char* family = "moe_act_quant";
  static constexpr const char* template_name = "netra::contracts::moe_act_quant";
  static constexpr u32 cols = 1024;        // [gate | up]
  static constexpr u32 width = 512;        // intermediate size: output values per row
  static constexpr u32 group = 128;        // values per E4M3 scale
  static constexpr u32 groups = width / group;
  static constexpr float e4m3_max = 448.0f;
  using fp8_format = fp8::e4m3fn;  // the output's format on every target (gfx942, gfx1151: encoded in software)
  static constexpr u32 max_rows = MaxRows;
  static constexpr u32 vectors_per_lane = VectorsPerLane;
  static constexpr u32 rows_per_workgroup = RowsPerWorkgroup;
  static constexpr u32 lanes_per_row = 64 / VectorsPerLane;
  static constexpr u32 lanes_per_group = group / 8;  // 16 threads, 8 values each
  static constexpr u32 wave_size = WaveSize;
  static constexpr u32 workgroup_size = RowsPerWorkgroup * lanes_per_row;
  static constexpr u64 workspace_bytes = 0;
  /// Calls of up to this many rows (the decode block's 9 M, M <= 16) let their successor start at
  /// once (programmatic dependent launch, sm90a), so the block's down kernel runs its prologue
  /// meanwhile; larger calls release it after their stores (the measured choice:
  /// docs/kernels/moe-routing.md).
  static constexpr u32 release_at_start_max_rows = 144;
  static_assert(lanes_per_row * 8 * VectorsPerLane == width, "netra::contracts::moe_act_quant: a row's threads cover 512 values");
  static_assert(Target::wave_size % lanes_per_group == 0, "netra::contracts::moe_act_quant: a group's 16 threads lie in one wave");

  static constexpr i64 template_args[] = {MaxRows, VectorsPerLane, RowsPerWorkgroup};

  /// Run-time admission: the first field that refuses, in this order.
  static decision admits(const moe_act_quant_signature& s) {
    if (s.target != Target::id) return refuse("target", Target::name, s.target);
    if (const decision d = require_tensor(s.in, {"in", dtype::bf16, 2, {-1, -1}, "[rows, 1024]", layout::rows, 16}, s.device); !d.admitted())
      return d;
    if (s.cols() != cols) return refuse("cols", "== 1024 ([gate | up], intermediate 512)", s.cols());
    if (s.rows() < 1 || s.rows() > MaxRows) return refuse("rows", "in [1, MaxRows]", s.rows());
    if (s.row_stride() < cols || s.row_stride() % 8 != 0)
      return refuse("row_stride", ">= 1024 and a multiple of 8 elements (16-byte aligned rows)", s.row_stride());
    if (const decision d = require_tensor(s.out, {"out", fp8_dtype_v<fp8_format>, 2, {s.rows(), width}, "[rows, 512]", layout::compact, 16}, s.device);
        !d.admitted())
      return d;
    return require_tensor(s.scales, {"scales", dtype::f32, 2, {s.rows(), groups}, "[rows, 4]", layout::compact, 16}, s.device);
  }

  /// Resource ceilings the audit enforces: no LDS, no scratch, no spills on either target.
  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      resource_budget b;
      b.max_vgprs = 48 * VectorsPerLane;  // decode: 35 (the article's hand-written kernel: 35)
      b.max_sgprs = 40;
      b.max_code_bytes = 4096 * VectorsPerLane;
      return b;
    } else if constexpr (is_audit_only_target_v<Target>) {  // E4M3 in software; gfx1151: twice the values per lane (wave32)
      resource_budget b;
      b.max_vgprs = (same_v<Target, gfx1151> ? 96 : 48) * VectorsPerLane;  // measured 39-42 (gfx942), 73-75 (gfx1151)
      b.max_sgprs = 40;
      b.max_code_bytes = 8192 * VectorsPerLane;  // measured 5,340-6,512
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 64;  // 32 warps per SM stay possible
      b.max_code_bytes = 12288 * VectorsPerLane;  // the IEEE division's slow path is out of line
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::moe_act_quant: no resource budget for this target");
    }
  }
};

/// The article's decode contract: one token, 9 routes, one 64-lane workgroup per route row.
template <class Target> using moe_act_quant_decode = moe_act_quant<Target, 9, 1, 1>;

/// Up to 512 tokens (R = 9 * 512 rows): one wave64 per row on gfx950, two warps per row on sm90a.
template <class Target> struct moe_act_quant_batch_mapping {
  static_assert(is_built_target_v<Target> || is_audit_only_target_v<Target>,
                "netra::contracts::moe_act_quant_batch: field Target is not supported; supported: netra::gfx950, netra::sm90a, "
                "netra::gfx942, netra::gfx1151");
};
template <> struct moe_act_quant_batch_mapping<gfx950> {
  static constexpr u32 vectors_per_lane = 1, rows_per_workgroup = 4;
};
template <> struct moe_act_quant_batch_mapping<sm90a> {
  static constexpr u32 vectors_per_lane = 1, rows_per_workgroup = 4;  // the H200 choice (docs/kernels/moe-routing.md)
};
template <> struct moe_act_quant_batch_mapping<gfx942> {  // gfx950's (not measured: no gfx942 here)
  static constexpr u32 vectors_per_lane = 1, rows_per_workgroup = 4;
};
template <> struct moe_act_quant_batch_mapping<gfx1151> {  // sm90a's two waves32 per row (not measured)
  static constexpr u32 vectors_per_lane = 1, rows_per_workgroup = 4;
};
template <class Target>
using moe_act_quant_batch = moe_act_quant<Target, 9 * 512, moe_act_quant_batch_mapping<Target>::vectors_per_lane,
                                          moe_act_quant_batch_mapping<Target>::rows_per_workgroup>;

}  // namespace contracts
}  // namespace netra
