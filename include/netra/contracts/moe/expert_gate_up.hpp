// netra/contracts/moe/expert_gate_up.hpp — decode MoE gate_up projection: every route's token
// row times its expert's W13, block-FP8, BF16 out.
//
// Semantics (Qwen3.6-35B-A3B decode, M = tokens in [1, MaxTokens], MaxTokens <= 16):
//   inputs  hidden  BF16 [M, 2048] (row stride 2048)
//           ids     int32 [M, 9]  route metadata (route_layout.hpp), read as written
//           W13, S13               expert_weights.hpp
//   output  out     BF16 [9M, 1024], row r = route r = t * 9 + s
//   out[r][n] = bf16( sum_{b=0..15} (sx[t][b] * S13[e][n/128][b]) * sum_{k in block b} qx[t][k] * W13[e][n][k] ),
//   e = ids[r], t = r / 9, with qx / sx the per-128 hidden quantization of
//   moe::hidden_block_quant (fused: each workgroup quantizes the rows it needs; deterministic,
//   so recomputation is exact). Routes whose id is outside [0, 257) get rows of +0.0.
//   A token whose hidden row holds NaN or ±Inf gets NaN in every row of its routes.
// Reduction order (fixed): per block, the matrix instruction's sum; blocks b ascending within a
// wave (acc = fma(P_b, s_b, acc) from +0), then the KSplit wave partials added in wave order.
// The result does not depend on scheduling or on the other routes of the batch.
// Comparison policy: expert_weights.hpp (|out - ref| <= 2^-8 |ref| + 2^-15 E + 2^-120 vs the
// FP64 reference of the dequantized math, NaN where the reference is NaN).
//
// Each distinct expert's weights are read once per call: a workgroup serves a unit, up to 16
// routes of one expert (more than 16 routes per expert only with duplicate ids inside a token:
// then one unit per 16). Field Schedule says how a workgroup finds its unit; the results are the
// same bits either way (each output row is computed by the same operations whoever computes it):
//   route_scan (0): one kernel, grid (64, 9M): workgroup (x, r) reads the call's ids and works
//                   only if route r begins a unit (the route at occurrence 0, 16, .. of its
//                   expert); the others exit after that read.
//   unit_list  (1): two kernels: one workgroup lists the call's units (expert_unit_list.hpp) into
//                   the contract's workspace, then workgroup (x, j) of gate_up reads unit j (its
//                   expert and column routes) in one read; the workgroups past the last unit, which
//                   launch last, exit. No workgroup pays a read only to exit among the working
//                   ones, and none scans the ids.
//   resident   (2): one kernel, targets with programmatic dependent launch (sm90a): a grid
//                   resident at once whose every workgroup lists the call's units into its LDS
//                   (the units kernel's operations), then claims (unit, tile) items from a counter
//                   in the workspace, and releases its successor at once. The workspace holds only
//                   the counters (expert_unit_list.hpp header): zero-filled before the first call
//                   (the handle does it), left zero by every call.
//   For calls with many shared experts the block takes unit_list (gfx950) / resident (sm90a),
//   moe_expert_gate_up_units_decode, from tactics::unit_list_min_tokens = 10 tokens.
// Weight staging is field Staging (contracts/staging.hpp; default per target): M = 1 streams
// 18 MiB of weights, all of it in flight at once. lds_bulk_copy (the sm90a default) keeps it in
// shared memory through the copy engine; registers (the gfx950 default: 512 KiB of VGPRs per CU,
// no wired bulk copy) keeps it in the lanes' registers: on sm90a, at the register cost of the FP8
// mma.sync emulation, 3 workgroups per SM instead of 5 then fit (396 of M = 1's 576 at once).
// The two stagings give the same bits.
// Field Format: the FP8 format of W13 and of the hidden quantization (dsl/fp8_format.hpp), the one
// the target's matrix unit reads (gfx950, sm90a: OCP E4M3FN; gfx942, audit only: E4M3FNUZ, 240 for
// 448 in moe::hidden_block_quant_of, NaN byte 0x80); w13 in the other format is refused.
#pragma once
#include "netra/contracts/moe/expert_unit_list.hpp"
#include "netra/contracts/moe/expert_weights.hpp"
#include "netra/contracts/staging.hpp"

namespace netra {

/// What a call to the gate_up projection has (its tensors, runtime/tensor.hpp; all compact):
///   hidden bfloat16 [tokens, 2048], ids int32 [tokens, 9], w13 E4M3 [257, 1024, 2048] (the shared
///   expert's slice included), s13 float32 [257, 8, 16], out bfloat16 [9 tokens, 1024].
/// E4M3: float8_e4m3fn, or uint8 holding E4M3 bytes.
struct moe_gate_up_signature {
  target_id target;
  device_ref device;
  tensor_arg hidden;
  tensor_arg ids;
  tensor_arg w13;
  tensor_arg s13;
  tensor_arg out;
  const void* workspace = nullptr;  // Schedule unit_list: the unit list; resident: its counters (the handle's)
  u64 workspace_bytes = 0;
  NETRA_HOST_DEVICE constexpr i64 tokens() const { return hidden.rank == 2 ? hidden.shape[0] : 0; }
};

/// How gate_up's workgroups find their units (the Schedule field of contracts::moe_expert_gate_up).
namespace gate_up_schedule {
inline constexpr u32 route_scan = 0;  // each workgroup scans the call's ids (one kernel)
inline constexpr u32 unit_list = 1;   // one workgroup lists the units first (two kernels, workspace)
inline constexpr u32 resident = 2;    // a resident grid, each workgroup lists the units (one kernel, counters)
}  // namespace gate_up_schedule

namespace contracts {

/// The template arguments an instance is named and spelled by: Schedule only when it or Staging
/// is not the default, Staging only when it is not the target's default, so the instances with
/// defaults keep their names.
template <u32 MaxTokens, u32 Schedule, u32 Staging, bool DefaultStaging> struct moe_gate_up_args {
  static constexpr i64 value[] = {MaxTokens, Schedule, Staging};
};
template <u32 MaxTokens, u32 Schedule, u32 Staging> struct moe_gate_up_args<MaxTokens, Schedule, Staging, true> {
  static constexpr i64 value[] = {MaxTokens, Schedule};
};
template <u32 MaxTokens, u32 Staging> struct moe_gate_up_args<MaxTokens, gate_up_schedule::route_scan, Staging, true> {
  static constexpr i64 value[] = {MaxTokens};
};

template <class Target, u32 MaxTokens, u32 Schedule = gate_up_schedule::route_scan, u32 Staging = default_staging<Target>,
          u32 WaveSize = Target::wave_size, class Format = native_fp8_t<Target>>
struct moe_expert_gate_up {
  static_assert(is_built_target_v<Target> || same_v<Target, gfx942>,
                "netra::contracts::moe_expert_gate_up: field Target is not supported; supported: netra::gfx950, netra::sm90a, "
                "netra::gfx942 (built and audited only)");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::moe_expert_gate_up: field WaveSize must equal the target's wave size (gfx950, gfx942: 64; sm90a: 32)");
  static_assert(same_v<Format, native_fp8_t<Target>>,
                "netra::contracts::moe_expert_gate_up: field Format must be the FP8 format the target's matrix unit reads "
                "(gfx950, sm90a: netra::fp8::e4m3fn; gfx942: netra::fp8::e4m3fnuz)");
  static_assert(MaxTokens >= 1 && MaxTokens <= 16,
                "netra::contracts::moe_expert_gate_up: field MaxTokens must be in [1, 16] (decode: at most 16 tokens, 144 routes)");
  static_assert(Schedule == gate_up_schedule::route_scan || Schedule == gate_up_schedule::unit_list || Schedule == gate_up_schedule::resident,
                "netra::contracts::moe_expert_gate_up: field Schedule must be 0 (route_scan), 1 (unit_list) or 2 (resident)");
  static_assert(Schedule != gate_up_schedule::resident || Target::has_programmatic_dependent_launch,
                "netra::contracts::moe_expert_gate_up: field Schedule 2 (resident) needs programmatic dependent launch (sm90a); use 1 (unit_list)");
  static_assert(Staging == staging::registers || Staging == staging::lds_bulk_copy,
                "netra::contracts::moe_expert_gate_up: field Staging must be 0 (registers) or 1 (lds_bulk_copy)");
  static_assert(Staging != staging::lds_bulk_copy || Target::has_bulk_copy,
                "netra::contracts::moe_expert_gate_up: field Staging 1 (lds_bulk_copy) needs the target's bulk copy (sm90a); use 0 (registers)");

  using target = Target;
  using weights = moe::expert_weights;
  using fp8_format = Format;
  using hidden_quant = moe::hidden_block_quant_of<Format>;
  /// unit_list contracts are their own kernel family (two kernels, instantiate/moe_experts_gate_up_units.hpp).
  static constexpr const char* family = Schedule == gate_up_schedule::unit_list ? "moe_experts_gate_up_units" : "moe_experts_gate_up";
  static constexpr const char* template_name = "netra::contracts::moe_expert_gate_up";
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 max_routes = MaxTokens * moe::route_layout::slots;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u32 schedule = Schedule;
  static constexpr bool unit_list = Schedule == gate_up_schedule::unit_list;
  static constexpr bool resident = Schedule == gate_up_schedule::resident;
  static constexpr u32 k_split = 4;  // waves per workgroup, each owns 2048 / 4 = 512 of K
  static constexpr u32 weight_staging = Staging;
  static constexpr bool weights_in_lds = Staging == staging::lds_bulk_copy;  // copy engine -> LDS; else registers
  /// Workgroups that must fit on one processor at once (the entry point's launch bounds; the
  /// gfx950 entry takes no minimum: 576 workgroups on 256 CUs): weights in LDS 5 (sm90a: at most
  /// 96 registers per thread), with the resident schedule's lister 4 (128; ptxas spilled 12 bytes
  /// at 96); weights in registers 3 (168: the mma.sync pieces' 64 weight registers spilled at 128).
  static constexpr u32 min_workgroups_per_processor = !weights_in_lds ? 3 : resident ? 4 : 5;
  /// unit_list: the call's unit list, rewritten by every call (no initial contents needed);
  /// resident: the list's header, its counters zero before the first call and after every call.
  static constexpr u64 workspace_bytes = unit_list ? moe::expert_unit_list::bytes(max_routes) : resident ? moe::expert_unit_list::header_bytes : 0;
  static constexpr const auto& template_args = moe_gate_up_args<MaxTokens, Schedule, Staging, Staging == default_staging<Target>>::value;

  static decision admits(const moe_gate_up_signature& s) {
    constexpr i64 routes = moe::route_layout::slots;
    if (s.target != Target::id) return refuse("target", Target::name, s.target);
    if (const decision d = require_tensor(s.hidden, {"hidden", dtype::bf16, 2, {-1, weights::hidden}, "[tokens, 2048]", layout::compact, 16}, s.device);
        !d.admitted())
      return d;
    if (s.tokens() < 1 || s.tokens() > MaxTokens) return refuse("tokens", "in [1, MaxTokens]", s.tokens());
    if (const decision d = require_tensor(s.ids, {"ids", dtype::i32, 2, {s.tokens(), routes}, "[tokens, 9]", layout::compact, 4}, s.device);
        !d.admitted())
      return d;
    if (const decision d = weights::require<Format>(s.w13, "w13", "[257 experts (256 routed + shared), 1024, 2048]", s.s13, "s13", "[257, 8, 16]",
                                                    weights::gate_up_rows, weights::hidden, s.device);
        !d.admitted())
      return d;
    if (const decision d = require_tensor(s.out, {"out", dtype::bf16, 2, {routes * s.tokens(), weights::gate_up_rows}, "[9 tokens, 1024]",
                                                  layout::compact, 16},
                                          s.device);
        !d.admitted())
      return d;
    if constexpr (workspace_bytes > 0)
      if (const decision d = require_workspace(s, workspace_bytes); !d.admitted()) return d;
    return admit();
  }

  /// Resource ceilings the audit enforces (no scratch, no spills on either target).
  static constexpr resource_budget budget() {
    if constexpr (is_amd_v<Target>) {  // gfx950; gfx942: 4 MFMA 16x16x32 per block instead of one 16x16x128
      resource_budget b;
      b.max_vgprs = 128;  // 4 waves per SIMD
      b.max_agprs = 0;
      b.max_sgprs = 102;
      b.max_lds_bytes = 8192;  // wave partials (weights and quantized activations live in VGPRs)
      b.max_code_bytes = 24576;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 65536 / (min_workgroups_per_processor * 128) / 8 * 8;  // launch bounds: 5, 4 or 3 workgroups of 128 threads per SM
      // 36,944 static (32 KiB staged weights, 4 KiB partials), resident 2,748 more (the list in
      // LDS), + the 1 KiB the SM reserves per block; registers staging: no staged weights
      b.max_lds_bytes = weights_in_lds ? 40744 : 12288;
      b.max_code_bytes = 49152;
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::moe_expert_gate_up: no resource budget for this target");
    }
  }
};

/// The decode contract of the article's model: up to 16 tokens (M = 1 is the same instance).
template <class Target> using moe_expert_gate_up_decode = moe_expert_gate_up<Target, 16>;
/// The same with the units listed first (the decode block's gate_up for calls of many tokens):
/// resident where the target has programmatic dependent launch (sm90a), else unit_list.
template <class Target>
using moe_expert_gate_up_units_decode =
    moe_expert_gate_up<Target, 16, Target::has_programmatic_dependent_launch ? gate_up_schedule::resident : gate_up_schedule::unit_list>;

}  // namespace contracts
}  // namespace netra
