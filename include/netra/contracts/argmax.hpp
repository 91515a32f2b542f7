// netra/contracts/argmax.hpp — exact torch.argmax(dim=-1) over FP32 rows, in two stages.
//
// Semantics (bitwise equal to torch.argmax on the returned indices): NaN beats every number and
// the first NaN wins among NaNs; equal values return the lowest index; +0.0 == -0.0; a row of
// -inf returns 0. Input FP32 [rows, N] with a row stride in elements; output int64 [rows]
// (argmax_signature: the tensors as DLPack describes them).
//
// Decomposition: stage one splits each row into `Chunks` chunks of `chunk_length` values and
// writes one ordered 64-bit key per chunk (dsl/ordered_key.hpp) to a caller-owned workspace
// [rows, Chunks]; stage two reduces the keys of each row with one unsigned max. On sm90a stage two
// is launched with programmatic dependent launch (it starts while stage one drains and waits on
// griddepcontrol.wait before reading keys); on gfx950 the kernel boundary orders the stages.
//
// Workspace: keys [MaxRows, Chunks] u64, caller-owned, allocated once; one workspace serves one
// stream at a time.
//
// Mapping parameter: WavesPerWorkgroup chunks share a stage-one workgroup (one wave each,
// independent). gfx950 uses 1 (2,048 one-wave workgroups at 16 rows, as in the article); sm90a
// uses 4 (128-thread blocks; measured against 1 and 8 in bench/results/argmax_h200.json).
//
// Other N: chunk_length = round_up(ceil(N / Chunks), 4). When N is a multiple of
// Chunks * 4 every chunk is full (the reference shape: 248320 = 128 x 1940); otherwise the last
// chunk is a shorter tail. Every chunk must hold at least one value, and N must be a multiple of
// 4 so that rows and chunks start on 16-byte boundaries.
#pragma once
#include "netra/contracts/common.hpp"

namespace netra {

/// What a call to argmax actually has: the handle's target and device, its tensors (built from
/// the caller's DLTensors, runtime/tensor.hpp) and the workspace of the tactic that asks.
///   logits: float32 [rows, cols], rows contiguous, any row stride (elements);
///   out:    int64 [rows], compact.
struct argmax_signature {
  target_id target;
  device_ref device;
  tensor_arg logits;
  tensor_arg out;
  const void* workspace = nullptr;
  u64 workspace_bytes = 0;
  NETRA_HOST_DEVICE constexpr i64 rows() const { return logits.rank == 2 ? logits.shape[0] : 0; }
  NETRA_HOST_DEVICE constexpr i64 cols() const { return logits.rank == 2 ? logits.shape[1] : 0; }
  /// The stride between rows in elements (a single row's stride does not matter: its length).
  NETRA_HOST_DEVICE constexpr i64 row_stride() const { return rows() == 1 ? cols() : logits.strides[0]; }
};

namespace contracts {

/// Default chunks per workgroup of a target (see the mapping note above).
template <class Target> inline constexpr u32 argmax_default_waves_per_workgroup = same_v<Target, sm90a> ? 4u : 1u;

template <class Target, u32 N, u32 Chunks, u32 MaxRows, u32 WavesPerWorkgroup = argmax_default_waves_per_workgroup<Target>,
          u32 WaveSize = Target::wave_size>
struct argmax {
  static_assert(is_built_target_v<Target> || is_rtc_test_target_v<Target> || is_audit_only_target_v<Target>,
                "netra::contracts::argmax: field Target is not supported; supported: netra::gfx950, netra::sm90a, "
                "netra::gfx942, netra::gfx1151 (built and audited only) and netra::gfx90a (hipRTC tests)");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::argmax: field WaveSize must equal the target's wave size (gfx950, gfx942, gfx90a: 64; sm90a, gfx1151: 32)");
  static_assert(N % 4 == 0, "netra::contracts::argmax: field N (row length) must be a multiple of 4 (16-byte loads)");
  static_assert(N >= 4 && N <= 0x7FFFFFF0u, "netra::contracts::argmax: field N (row length) must be in [4, 2^31 - 16]");
  static_assert(Chunks >= 2 && Chunks <= 4096 && Chunks % 2 == 0,
                "netra::contracts::argmax: field Chunks must be even and in [2, 4096] (stage two reads key pairs with 16-byte loads)");
  static_assert(MaxRows >= 1 && MaxRows <= 65535, "netra::contracts::argmax: field MaxRows must be in [1, 65535] (grid y)");
  static_assert(WavesPerWorkgroup == 1 || WavesPerWorkgroup == 2 || WavesPerWorkgroup == 4 || WavesPerWorkgroup == 8,
                "netra::contracts::argmax: field WavesPerWorkgroup must be 1, 2, 4 or 8");
  static_assert(Chunks % WavesPerWorkgroup == 0, "netra::contracts::argmax: field Chunks must be a multiple of WavesPerWorkgroup");

  using target = Target;
  static constexpr const char* family = "argmax";
  static constexpr const char* template_name = "netra::contracts::argmax";
  static constexpr u32 n = N;
  static constexpr u32 chunks = Chunks;
  static constexpr u32 max_rows = MaxRows;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u32 waves_per_workgroup = WavesPerWorkgroup;
  static constexpr u32 chunk_length = round_up(ceil_div(N, Chunks), 4u);
  static constexpr u32 last_chunk_length = N - (Chunks - 1) * chunk_length;
  static constexpr bool has_tail = last_chunk_length != chunk_length;
  static_assert((Chunks - 1) * chunk_length < N,
                "netra::contracts::argmax: field Chunks is too large for N: every chunk must hold at least one value "
                "((Chunks - 1) * round_up(ceil(N / Chunks), 4) < N)");

  /// Workspace: keys, row r at r * Chunks * 8 bytes.
  static constexpr u64 workspace_bytes = static_cast<u64>(MaxRows) * Chunks * sizeof(u64);

  /// Template arguments as the instantiation spells them (for instance names and JIT sources).
  static constexpr i64 template_args[] = {N, Chunks, MaxRows, WavesPerWorkgroup};

  /// Run-time admission: the first field that refuses, in this order.
  static decision admits(const argmax_signature& s) {
    if (s.target != Target::id) return refuse("target", Target::name, s.target);
    if (const decision d = require_tensor(s.logits, {"logits", dtype::f32, 2, {-1, N}, "[rows, N]", layout::rows, 16}, s.device); !d.admitted())
      return d;
    if (s.rows() < 1 || s.rows() > MaxRows) return refuse("rows", "in [1, MaxRows]", s.rows());
    if (s.row_stride() < N || s.row_stride() % 4 != 0)
      return refuse("row_stride", ">= N and a multiple of 4 elements (16-byte aligned rows)", s.row_stride());
    if (const decision d = require_tensor(s.out, {"out", dtype::i64, 1, {s.rows()}, "[rows]", layout::compact, 8}, s.device); !d.admitted())
      return d;
    return require_workspace(s, workspace_bytes);
  }

  /// Resource ceilings per kernel (both stages) that the audit enforces.
  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950> || same_v<Target, gfx90a> || same_v<Target, gfx942> || same_v<Target, gfx1151>) {
      resource_budget b;
      b.max_vgprs = 64;
      b.max_sgprs = 40;
      b.max_code_bytes = 4096;  // the article's two hand-written stages: 3,984 bytes
      if constexpr (same_v<Target, gfx1151>) {  // wave32: twice the values per lane (stage one: 85 VGPRs, 4,100 bytes)
        b.max_vgprs = 96;
        b.max_code_bytes = 6144;
      }
      return b;  // no AGPRs, no LDS, no scratch, no spills
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 128;
      b.max_code_bytes = 16384;
      return b;  // no shared memory, no stack, no spills
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::argmax: no resource budget for this target");
    }
  }
};

/// The reference contract of the article: N = 248320 logits, 128 chunks of 1940 values,
/// up to 128 rows, the target's default mapping.
template <class Target> using argmax_reference = argmax<Target, 248320, 128, 128>;

}  // namespace contracts
}  // namespace netra
