// netra/contracts/gdn/recurrent.hpp — the gated delta rule over a request's token block: K0
// verify (no state written), M16 (state committed) and accepted-prefix replay, one contract whose
// field Commit says what reaches the state pool (gdn::state_commit).
//
// Semantics per request b, v head hv (the step and dot order: contracts/gdn/model.hpp):
//   S = state[slot(b)][hv] (FP32, or BF16 widened exactly); for t = 0 .. n-1 (row r = b T + t):
//   the step with decay[r][hv], beta[r][hv], k = k[r][hv / 2], q = q[r][hv / 2],
//   v_j = v[r][4096 + 128 hv + j] (the conv output's v channels, BF16).
//   Commit none:  n = T; out[r][hv][j] = bf16(o_j); the pool is only read.
//   Commit final: n = T; the outputs, then state[slot(b)][hv] = S_T (stored per StateStorage).
//   Commit accepted_prefix: n = accepted[b]; no outputs; if n >= 1, state[slot(b)] = S_n and the
//     conv state slot takes window n - 1 of the verify step's conv update (windows[b][n - 1]:
//     the same layout as the conv pool, copied whole); n = 0 or n outside [0, T] writes nothing.
// Slots: as the conv contract: state_slots slots, the last the padding sentinel; an index outside
// [0, state_slots - 2] reads the sentinel and writes no state. Real rows must name distinct slots.
// Inputs q, k: FP32 [B T, 16, 128]; decay, beta: FP32 [B T, 32] (contracts/gdn/precompute.hpp).
// Mapping parameters (the same bits for every choice): ValueBlock (Vb): a wave owns Vb value
// columns of one (request, v head); ColumnsPerLane (C): each lane owns C adjacent columns (every
// k and q value it loads serves C columns); L = wave C / Vb lanes share a column (1, 2 or 4);
// Staging (gdn::token_staging): token inputs loaded per token, or the block staged in LDS first
// (block), or the block and each wave's state block (block_and_state: state_through_lds);
// WavesPerWorkgroup (staged only): value blocks sharing one staged block; PrefetchAhead (P, 0 or
// a workgroup count, about the resident workgroups of the GPU): workgroup n of the launch order
// asks for the L2 prefetch of the state block and token inputs of workgroup n + P (a hint: no
// result depends on it; no-op on targets without an L2 prefetch); FusedDots (outputs only): the
// q dot of token t computed in the same pass over the state as the decay and k dot of token t + 1
// (one chain's latency per token instead of two). Comparison: bitwise.
// Contract field Inputs (gdn::core_inputs): precomputed (q, k, decay, beta read as above), or raw:
// the core reads the precompute's inputs instead — the conv output v (all 8192 channels: q | k | v),
// a, b [B T, 32] BF16, A_log, dt_bias [32] FP32 — and forms q, k, decay, beta of the rows it needs
// with contracts/gdn/precompute.hpp's semantics (the same operations in the same order: the bits of
// the two-launch chain precompute -> core); q, k, decay, beta are not read. Staged maps only.
#pragma once
#include "netra/contracts/gdn/admission.hpp"

namespace netra {

/// A recurrent core call: q, k [B T, 16, 128] FP32; v: the conv output [B T, 8192] BF16 (rows
/// contiguous, row stride a multiple of 8); decay, beta [B T, 32] FP32; state: the pool
/// [slots, 32, 128, 128] FP32 or BF16; slots [B] i32; Commit none / final: out [B T, 32, 128]
/// BF16; accepted_prefix: accepted [B] i32, conv_windows [B, T, 8192, 3] or [B, T, 3, 8192] BF16
/// and conv_state [slots, 8192, 3] or [slots, 3, 8192] in the windows' layout.
struct gdn_recurrent_signature {
  target_id target;
  device_ref device;
  tensor_arg q, k, v, decay, beta, state, slots, out, accepted, conv_windows, conv_state;
  tensor_arg a{}, b{}, a_log{}, dt_bias{};  // Inputs raw only: the precompute's gates and parameters
  NETRA_HOST_DEVICE constexpr i64 batch() const { return slots.rank == 1 ? slots.shape[0] : 0; }
  NETRA_HOST_DEVICE constexpr i64 state_slots() const { return state.extent(0); }
};

namespace gdn::token_staging {
/// Recurrent core only: the token block and each wave's state block in LDS — the wave copies its
/// block with consecutive 16-byte vectors instead of each lane's 128-byte runs (state_through_lds).
inline constexpr u32 block_and_state = 3;
}  // namespace gdn::token_staging
namespace gdn::core_inputs {
inline constexpr u32 precomputed = 0;  // q, k, decay, beta from the precompute launch
inline constexpr u32 raw = 1;          // the precompute fused into the core's staging (its exact order)
}  // namespace gdn::core_inputs

namespace contracts {

/// Default value block: gfx950 16 (the article: one wave64 holds 128 x 16, 32 state registers per
/// lane); sm90a 8 (the same lane geometry on warp32: 4 lanes per column, 32 state registers; Vb 16
/// needs 255 registers per thread there, Vb 32 spills).
template <class Target> inline constexpr u32 gdn_default_value_block = Target::wave_size / 4;

/// The instance-name arguments: ColumnsPerLane appears only when it is not 1.
template <u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock, u32 Staging, u32 Waves, u32 Columns> struct gdn_recurrent_args {
  static constexpr i64 value[] = {Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns};
};
template <u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock, u32 Staging, u32 Waves>
struct gdn_recurrent_args<Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, 1> {
  static constexpr i64 value[] = {Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves};
};
/// With a prefetch distance every mapping field appears.
template <u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock, u32 Staging, u32 Waves, u32 Columns, u32 Prefetch>
struct gdn_recurrent_prefetch_args {
  static constexpr i64 value[] = {Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch};
};
template <u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock, u32 Staging, u32 Waves, u32 Columns>
struct gdn_recurrent_prefetch_args<Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, 0> {
  static constexpr const auto& value = gdn_recurrent_args<Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns>::value;
};
template <u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock, u32 Staging, u32 Waves, u32 Columns, u32 Prefetch, u32 Fused>
struct gdn_recurrent_all_args {
  static constexpr i64 value[] = {Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused};
};
template <u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock, u32 Staging, u32 Waves, u32 Columns, u32 Prefetch>
struct gdn_recurrent_all_args<Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, 0> {
  static constexpr const auto& value = gdn_recurrent_prefetch_args<Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch>::value;
};
/// Inputs raw: every field appears.
template <u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock, u32 Staging, u32 Waves, u32 Columns, u32 Prefetch, u32 Fused, u32 Inputs>
struct gdn_recurrent_input_args {
  static constexpr i64 value[] = {Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused, Inputs};
};
template <u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock, u32 Staging, u32 Waves, u32 Columns, u32 Prefetch, u32 Fused>
struct gdn_recurrent_input_args<Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused, 0> {
  static constexpr const auto& value = gdn_recurrent_all_args<Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused>::value;
};


template <class Target, u32 Commit, u32 MaxBatch, u32 Tokens, u32 StateStorage, u32 ValueBlock = gdn_default_value_block<Target>,
          u32 Staging = gdn::token_staging::per_token, u32 WavesPerWorkgroup = 1, u32 ColumnsPerLane = 1, u32 PrefetchAhead = 0,
          u32 FusedDots = 0, u32 Inputs = gdn::core_inputs::precomputed, u32 WaveSize = Target::wave_size>
struct gdn_recurrent {
  static_assert(is_built_target_v<Target>,
                "netra::contracts::gdn_recurrent: field Target is not supported; supported: netra::gfx950, netra::sm90a");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::gdn_recurrent: field WaveSize must equal the target's wave size (gfx950: 64; sm90a: 32)");
  static_assert(Commit == gdn::state_commit::none || Commit == gdn::state_commit::final || Commit == gdn::state_commit::accepted_prefix,
                "netra::contracts::gdn_recurrent: field Commit must be 0 (none), 1 (final) or 2 (accepted_prefix)");
  static_assert(MaxBatch >= 1 && MaxBatch <= 128, "netra::contracts::gdn_recurrent: field MaxBatch must be in [1, 128]");
  static_assert(Tokens >= 1 && Tokens <= 16, "netra::contracts::gdn_recurrent: field Tokens must be in [1, 16]");
  static_assert(StateStorage == gdn::state_storage::fp32 || StateStorage == gdn::state_storage::bf16,
                "netra::contracts::gdn_recurrent: field StateStorage must be 0 (fp32) or 1 (bf16)");
  static_assert(ColumnsPerLane == 1 || ColumnsPerLane == 2 || ColumnsPerLane == 4,
                "netra::contracts::gdn_recurrent: field ColumnsPerLane must be 1, 2 or 4");
  static_assert(ValueBlock * 4 == WaveSize * ColumnsPerLane || ValueBlock * 2 == WaveSize * ColumnsPerLane || ValueBlock == WaveSize * ColumnsPerLane,
                "netra::contracts::gdn_recurrent: field ValueBlock must be wave C / 4, wave C / 2 or wave C (1, 2 or 4 lanes per column)");
  static_assert(Staging == gdn::token_staging::per_token || Staging == gdn::token_staging::block || Staging == gdn::token_staging::block_and_state,
                "netra::contracts::gdn_recurrent: field Staging must be 0 (per_token), 1 (block) or 3 (block_and_state)");
  static_assert(WavesPerWorkgroup >= 1 && WavesPerWorkgroup <= 8 && (gdn::value_dim / ValueBlock) % WavesPerWorkgroup == 0,
                "netra::contracts::gdn_recurrent: field WavesPerWorkgroup must be in [1, 8] and divide the value blocks of a head");
  static_assert(PrefetchAhead <= 4096, "netra::contracts::gdn_recurrent: field PrefetchAhead must be in [0, 4096] workgroups");
  static_assert(FusedDots == 0 || (FusedDots == 1 && Commit != gdn::state_commit::accepted_prefix),
                "netra::contracts::gdn_recurrent: field FusedDots must be 0, or 1 with outputs (Commit none or final)");
  static_assert(Staging != gdn::token_staging::per_token || WavesPerWorkgroup == 1,
                "netra::contracts::gdn_recurrent: field WavesPerWorkgroup must be 1 with Staging 0 (per_token): waves share only staged tokens");
  static_assert(Inputs == gdn::core_inputs::precomputed || (Inputs == gdn::core_inputs::raw && Staging != gdn::token_staging::per_token && PrefetchAhead == 0),
                "netra::contracts::gdn_recurrent: field Inputs must be 0 (precomputed), or 1 (raw) with a staged map (Staging 1 or 3) and PrefetchAhead 0");

  using target = Target;
  // The replay's code object also holds the conv commit kernel: its own instantiation header.
  static constexpr const char* family = Commit == gdn::state_commit::accepted_prefix ? "gdn_replay" : "gdn_recurrent";
  static constexpr const char* template_name = "netra::contracts::gdn_recurrent";
  static constexpr u32 commit = Commit;
  static constexpr u32 max_batch = MaxBatch;
  static constexpr u32 tokens = Tokens;
  static constexpr u32 state_storage = StateStorage;
  static constexpr u32 value_block = ValueBlock;
  static constexpr u32 staging = Staging;
  static constexpr u32 waves_per_workgroup = WavesPerWorkgroup;
  static constexpr u32 columns_per_lane = ColumnsPerLane;
  static constexpr u32 prefetch_ahead = PrefetchAhead;
  static constexpr bool fused_dots = FusedDots == 1;
  static constexpr bool raw_inputs = Inputs == gdn::core_inputs::raw;
  static constexpr u32 wave_size = WaveSize;
  static constexpr bool writes_outputs = Commit != gdn::state_commit::accepted_prefix;
  static constexpr u64 workspace_bytes = 0;
  static constexpr u64 state_bytes_per_slot = u64{gdn::state_elements} * gdn::state_bytes_per_element(StateStorage);
  static constexpr const auto& template_args =
      gdn_recurrent_input_args<Commit, MaxBatch, Tokens, StateStorage, ValueBlock, Staging, WavesPerWorkgroup, ColumnsPerLane, PrefetchAhead, FusedDots, Inputs>::value;
  /// State registers per lane (FP32): the wave's 128 x Vb block over its lanes.
  static constexpr u32 state_registers = gdn::key_dim * ValueBlock / WaveSize;
  /// LDS of the staged token block (kernels/gdn/token_block.hpp's stage): k, q (not for the
  /// replay), v, decay, beta.
  static constexpr u32 stage_bytes = Tokens * ((writes_outputs ? 2 : 1) * gdn::key_dim + ValueBlock * WavesPerWorkgroup + 2) * 4;
  /// The state block through LDS (kernels/gdn/state_io.hpp wave_block: each wave copies its block
  /// with consecutive 16-byte vectors, not each lane's 128-byte runs, whose warp-wide accesses span
  /// 32 lines): Staging block_and_state, and sm90a's one-token maps with one column a lane and at
  /// most 32 KiB of blocks. The one-token half-head FP32 map (C 2) is not given it by default: it
  /// spilled at its register cap when the copy went through registers; with Staging 3 the copy is
  /// asynchronous (no registers). gfx950 is not catalogued with it: the cost of lane runs is the
  /// H200's L1 (lab/gdn/decode_access_floor.cu), not measured on an AMD GPU, and gfx950's copy into
  /// LDS is a load and an LDS store through VGPRs (dsl/async_copy.hpp), which its wave64 one-token
  /// map had no room for (105 VGPRs against 96).
  static constexpr bool state_through_lds =
      Staging == gdn::token_staging::block_and_state ||
      (same_v<Target, sm90a> && Tokens == 1 && ColumnsPerLane == 1 &&
       WavesPerWorkgroup * ValueBlock * gdn::key_dim * gdn::state_bytes_per_element(StateStorage) <= 32768);
  /// Staging block_and_state copies asynchronously into dynamic LDS with a pad unit per lane's C
  /// columns; the one-token form through registers into static LDS (kernels/gdn/state_io.hpp).
  static constexpr bool state_copy_async = Staging == gdn::token_staging::block_and_state;
  /// LDS of the state blocks (0 without state_through_lds).
  static constexpr u32 state_lds_bytes =
      state_through_lds
          ? WavesPerWorkgroup * (ValueBlock * gdn::key_dim * gdn::state_bytes_per_element(StateStorage) + (state_copy_async ? ValueBlock / ColumnsPerLane * 16 : 0))
          : 0;
  static decision admits(const gdn_recurrent_signature& s) {
    constexpr i64 D = gdn::channels, H = gdn::heads_qk, HV = gdn::heads_v, K = gdn::key_dim, V = gdn::value_dim;
    constexpr dtype state = StateStorage == gdn::state_storage::fp32 ? dtype::f32 : dtype::bf16;
    if (const decision d = gdn::admit_slots<Target>(s.target, s.slots, s.device, MaxBatch); !d.admitted()) return d;
    const i64 B = s.batch(), R = B * Tokens;
    const auto v_rows = [&] {
      if (const decision d = require_tensor(s.v, {"v", dtype::bf16, 2, {R, D}, "[B T, 8192]", layout::rows, 16}, s.device); !d.admitted()) return d;
      return gdn::admit_row_stride("v row stride", s.v);
    };
    if constexpr (raw_inputs) {
      if (const decision d = v_rows(); !d.admitted()) return d;
      if (const decision d = require_tensor(s.a, {"a", dtype::bf16, 2, {R, HV}, "[B T, 32]", layout::compact, 2}, s.device); !d.admitted()) return d;
      if (const decision d = require_tensor(s.b, {"b", dtype::bf16, 2, {R, HV}, "[B T, 32]", layout::compact, 2}, s.device); !d.admitted()) return d;
      if (const decision d = require_tensor(s.a_log, {"A_log", dtype::f32, 1, {HV}, "[32]", layout::compact, 4}, s.device); !d.admitted()) return d;
      if (const decision d = require_tensor(s.dt_bias, {"dt_bias", dtype::f32, 1, {HV}, "[32]", layout::compact, 4}, s.device); !d.admitted()) return d;
    } else {
      if (const decision d = require_tensor(s.q, {"q", dtype::f32, 3, {R, H, K}, "[B T, 16, 128]", layout::compact, 16}, s.device); !d.admitted()) return d;
      if (const decision d = require_tensor(s.k, {"k", dtype::f32, 3, {R, H, K}, "[B T, 16, 128]", layout::compact, 16}, s.device); !d.admitted()) return d;
      if (const decision d = v_rows(); !d.admitted()) return d;
      if (const decision d = require_tensor(s.decay, {"decay", dtype::f32, 2, {R, HV}, "[B T, 32]", layout::compact, 4}, s.device); !d.admitted())
        return d;
      if (const decision d = require_tensor(s.beta, {"beta", dtype::f32, 2, {R, HV}, "[B T, 32]", layout::compact, 4}, s.device); !d.admitted())
        return d;
    }
    if (const decision d = require_tensor(s.state, {"state", state, 4, {-1, HV, V, K}, "[slots, 32, 128, 128]", layout::compact, 16}, s.device);
        !d.admitted())
      return d;
    if (const decision d = gdn::admit_pool_slots(s.state_slots()); !d.admitted()) return d;
    if constexpr (writes_outputs) {
      if (const decision d = require_tensor(s.out, {"out", dtype::bf16, 3, {R, HV, V}, "[B T, 32, 128]", layout::compact, ColumnsPerLane > 1 ? 4 : 2}, s.device); !d.admitted())
        return d;
    } else {
      if (const decision d = require_tensor(s.accepted, {"accepted", dtype::i32, 1, {B}, "[B]", layout::compact, 4}, s.device); !d.admitted())
        return d;
      if (const decision d = require_tensor(s.conv_windows, {"conv_windows", dtype::bf16, 4, {B, Tokens, -1, -1}, "[B, T, 8192, 3] or [B, T, 3, 8192]",
                                                             layout::compact, 16},
                                            s.device);
          !d.admitted())
        return d;
      const i64 e2 = s.conv_windows.shape[2], e3 = s.conv_windows.shape[3];
      if (!((e2 == D && e3 == 3) || (e2 == 3 && e3 == D))) return gdn::refuse_shape("conv_windows", "[B, T, 8192, 3] or [B, T, 3, 8192]", s.conv_windows);
      if (const decision d = require_tensor(s.conv_state, {"conv_state", dtype::bf16, 3, {s.state_slots(), e2, e3}, "[slots, ...] in the windows' layout",
                                                           layout::compact, 16},
                                            s.device);
          !d.admitted())
        return d;
    }
    return admit();
  }

  /// sm90a, C > 1: registers per thread the launch bound allows: 64 state registers 128 (two
  /// workgroups of 8 warps per processor), except at MaxBatch 1, whose grid fills one workgroup per
  /// processor at most (255); 128 state registers: 255.
  static constexpr u32 register_cap = state_registers <= 64 && MaxBatch > 1 ? 128 : 255;
  /// The staged block and the state blocks plus 1 KiB (sm90a's reserved shared memory), in whole KiB.
  static constexpr u32 lds_bytes = (Staging != gdn::token_staging::per_token ? stage_bytes : 0) + state_lds_bytes;
  static constexpr u32 lds_budget = lds_bytes > 19456 ? (lds_bytes + 2047) / 1024 * 1024 : 20480;

  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      resource_budget b;
      // measured 75-82 per token, 88-90 at T 1 (decode: no token loop, the one token's loads issued
      // together), 89-111 staged; the article's K0: 80 VGPRs, 40 SGPRs, 1 KiB LDS
      b.max_vgprs = Staging != gdn::token_staging::per_token ? 112 : Tokens == 1 ? 96 : 88;
      // Inputs raw: 4 more kernel arguments (measured 50); staged: the token block's loads all
      // issued before its LDS stores, their addresses held (measured 60 on the one-wave K0 map)
      b.max_sgprs = raw_inputs ? 56 : Staging != gdn::token_staging::per_token ? 64 : 48;
      b.max_lds_bytes = lds_budget;
      b.max_code_bytes = 24576;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      // C 1: Vb 8: 32 state registers per lane; Vb 16: 64. C > 1: the cap the kernel's launch bound sets.
      b.max_registers = ColumnsPerLane > 1 ? register_cap : ValueBlock * 4 == WaveSize ? 128 : 255;
      b.max_lds_bytes = lds_budget;
      b.max_code_bytes = 65536;
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::gdn_recurrent: no resource budget for this target");
    }
  }
};

/// The article's contracts: K0 verify (B 1..64, T 12, nothing committed), M16 (B 1, T 16,
/// committed), replay (B 1..128, T 12, accepted prefix committed).
template <class Target, u32 StateStorage, u32 ValueBlock = gdn_default_value_block<Target>, u32 Staging = 0, u32 Waves = 1, u32 Columns = 1, u32 Prefetch = 0,
          u32 Fused = 0>
using gdn_k0 = gdn_recurrent<Target, gdn::state_commit::none, 64, 12, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch, Fused>;
template <class Target, u32 StateStorage, u32 ValueBlock = gdn_default_value_block<Target>, u32 Staging = 0, u32 Waves = 1, u32 Columns = 1, u32 Fused = 0,
          u32 Inputs = gdn::core_inputs::precomputed>
using gdn_m16 = gdn_recurrent<Target, gdn::state_commit::final, 1, 16, StateStorage, ValueBlock, Staging, Waves, Columns, 0, Fused, Inputs>;
template <class Target, u32 StateStorage, u32 ValueBlock = gdn_default_value_block<Target>, u32 Staging = 0, u32 Waves = 1, u32 Columns = 1, u32 Prefetch = 0>
using gdn_replay = gdn_recurrent<Target, gdn::state_commit::accepted_prefix, 128, 12, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch>;

}  // namespace contracts
}  // namespace netra
