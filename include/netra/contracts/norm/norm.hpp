// netra/contracts/norm/norm.hpp — RMSNorm, fused residual add + RMSNorm and the gated RMSNorm of
// the GDN output, each with a BF16 or a block-E4M3 output (one contract template; aliases below).
//
// Semantics (bitwise; tests/oracles/norm.hpp writes them plainly). A row is N values: one token
// of H = 2048 (rms, add_rms) or one head of 128 (gated: T tokens x 32 heads, rows = 32 T, head h of
// token t at x[t, 128 h ..]). FP32 math, each operation rounded once (dsl/math.hpp, no contraction):
//   add_rms: r'_i = bf16(x_i + r_i) (FP32 add of the two BF16 values, one rounding, written back
//            over r); the norm below reads the rounded r' (the order of a serving engine's fused op:
//            vLLM fused_add_rms_norm adds in FP32, stores BF16, normalizes the stored value).
//   sum:     the row's N values as 8-value chunks c (values 8c .. 8c + 7), chunks in S = min(64, N/8)
//            slices, slice q = chunks q, q + S, q + 2S, ...; per slice one FMA chain
//            acc = fma(v, v, acc) from +0 over its chunks in order and each chunk's values in order;
//            then per half of G = min(S, 32) slices the xor butterfly (masks 1, 2, ..., G / 2) of
//            dsl/wave_reduce.hpp, and sum = R_0 + R_1 (S = 64) or R_0 (S = 16). On wave64 the one
//            6-stage butterfly gives these bits (its last stage adds R_0 and R_1).
//   rs:      rsqrt_f32(sum * (1 / N) + eps) (dsl/rsqrt.hpp; 1 / N exact), eps a run-time FP32
//   y_i:     rms, add_rms: (v_i * rs) * w'_i, w' = w (plain) or 1 + w (zero-centred, FP32 add)
//            gated:        ((v_i * rs) * w_i) * silu_f32(z_i)      (dsl/math.hpp SiLU, plain w)
//   out:     bf16(y_i) (dsl/convert.hpp: RNE, NaN -> 0x7FFF), or with Fp8Out those BF16 values
//            quantized per 128 contiguous outputs by dsl/block_quant.hpp (act_quant's rules:
//            scale = amax / 448, amax = 0 -> scale +0 and signed zeros, a non-finite value poisons
//            its group: scale +Inf / NaN, every E4M3 0x7F); scales [T, C / 128].
// Adversarial rows (the oracle's and the GPU test's; eps = 1e-6, w = 1):
//   all zeros:        sum = 0, rs = rsqrt(eps) = 1000.0 (eps path); y = ±0 (signs of x * w);
//                     FP8: scale +0, q = 0x00 / 0x80.
//   one huge value:   |x| = 2^64 : x^2 = 2^128 overflows, sum = +Inf, rs = +0, every y = ±0;
//                     |x| = 2^60 : y = x * rs = ±sqrt(N) w (45.25 w for N = 2048), the others ±0 or
//                     tiny; FP8: that group scale 45.25 / 448, the others by their own amax.
//   subnormals:       x^2 underflows to +0; y = x * 1000 (normal, kept: nothing is flushed).
//   ±Inf:             sum = +Inf, rs = +0: the Inf value -> NaN (Inf * 0), finite values -> ±0;
//                     FP8: the Inf's group poisoned (NaN scale, 0x7F), other groups amax 0.
//   NaN:              sum = NaN: every y of the row NaN (0x7FFF); FP8: every group poisoned.
//   gated z = -Inf:   silu = NaN (-Inf / +Inf): that y NaN; z = +Inf: y = ±Inf (or NaN for y 0).
// Comparison policy: bitwise, every value, every scale, r' included; rows past T untouched.
//
// Mapping (kernels/norm/rms_norm.hpp): T_r = threads per row = min(S, W) * WavesPerRow, W the
// wave size; thread j of a row holds the slices j + T_r p (p < S / T_r): 8-value chunks by 16-byte
// loads, chunk q + S k at k. RowsPerWorkgroup rows share a workgroup; grid ceil(rows / R).
//   WavesPerRow 1 (both targets): a row lies in one wave (S = 64 on wave64: one slice per lane;
//     on warp32: two per lane, the halves' butterflies added; S = 16: 16 lanes, W / 16 rows per
//     wave). No LDS, no barrier.
//   WavesPerRow 2 (warp32 only, S = 64): two warps per row, one slice per lane; each warp's
//     butterfly R_w goes through LDS (8 bytes per row), one barrier, sum = R_0 + R_1: the same bits.
//   Split 2 or 4 (rms, add_rms; one row per workgroup): a row's outputs over Split workgroups,
//     each summing the whole row (the same bits); add_rms parts form a cluster so that no part
//     writes r' before every part has read r.
//   SlicesPerThread P (gated, S = 16): a head over 16 / P threads, thread j holding slices j and
//     j + 16 / P ..; the butterfly's stages of masks >= 16 / P are adds inside the thread (the same
//     bits: each stage adds the two partners, in either order); an E4M3 group is the head's threads.
// The values are the same for every mapping; dispatch picks decode (rows <= 64: one row per
// workgroup, the most SMs; add_rms FP8 where clusters exist: Split 2), middle (norm_mid) or prefill
// instances (wave64: 4 rows per workgroup; warp32: the two-warp mapping, its release point chosen
// at run time; gated: 16 heads per workgroup, on sm90a above 512 tokens over 8 threads a head).
// Weights are read before the kernel waits for its predecessor (programmatic dependent launch
// on targets that have it): the preceding kernel must not write them.
#pragma once
#include "netra/contracts/norm/signature.hpp"

namespace netra::contracts {

/// The instance's fields as named (Split 1, SlicesPerThread 0 and Chain 0, the defaults, leave the
/// name as it was before those fields).
template <u32 Kind, u32 Weight, u32 Fp8Out, u32 MaxTokens, u32 WavesPerRow, u32 RowsPerWorkgroup, u32 Resident, u32 Split, u32 SlicesPerThread,
          u32 Chain>
struct norm_args {
  static constexpr i64 value[] = {Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident, Split, SlicesPerThread, Chain};
};
template <u32 Kind, u32 Weight, u32 Fp8Out, u32 MaxTokens, u32 WavesPerRow, u32 RowsPerWorkgroup, u32 Resident, u32 Split, u32 SlicesPerThread>
struct norm_args<Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident, Split, SlicesPerThread, 0> {
  static constexpr i64 value[] = {Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident, Split, SlicesPerThread};
};
template <u32 Kind, u32 Weight, u32 Fp8Out, u32 MaxTokens, u32 WavesPerRow, u32 RowsPerWorkgroup, u32 Resident, u32 Split>
struct norm_args<Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident, Split, 0, 0> {
  static constexpr i64 value[] = {Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident, Split};
};
template <u32 Kind, u32 Weight, u32 Fp8Out, u32 MaxTokens, u32 WavesPerRow, u32 RowsPerWorkgroup, u32 Resident>
struct norm_args<Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident, 1, 0, 0> {
  static constexpr i64 value[] = {Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident};
};

template <class Target, u32 Kind, u32 Weight, u32 Fp8Out, u32 MaxTokens, u32 WavesPerRow, u32 RowsPerWorkgroup, u32 Resident = 0,
          u32 Split = 1, u32 SlicesPerThread = 0, u32 Chain = 0, u32 WaveSize = Target::wave_size>
struct norm {
  static_assert(is_built_target_v<Target> || is_audit_only_target_v<Target>,
                "netra::contracts::norm: field Target is not supported; supported: netra::gfx950, netra::sm90a, netra::gfx942, "
                "netra::gfx1151 (built and audited only)");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::norm: field WaveSize must equal the target's wave size (gfx950, gfx942: 64; sm90a, gfx1151: 32)");
  static_assert(Kind <= 2, "netra::contracts::norm: field Kind must be 0 (rms), 1 (add_rms) or 2 (gated)");
  static_assert(Weight <= 1, "netra::contracts::norm: field Weight must be 0 (plain w) or 1 (zero-centred 1 + w)");
  static_assert(!(Kind == 2 && Weight == 1), "netra::contracts::norm: field Weight: the gated norm has a plain weight (0)");
  static_assert(Fp8Out <= 1, "netra::contracts::norm: field Fp8Out must be 0 (BF16 output) or 1 (E4M3, one FP32 scale per 128)");
  static_assert(MaxTokens >= 1 && MaxTokens <= 8192, "netra::contracts::norm: field MaxTokens must be in [1, 8192]");

  using target = Target;
  static constexpr const char* family = "norm";
  static constexpr const char* template_name = "netra::contracts::norm";
  static constexpr norm_kind kind = static_cast<norm_kind>(Kind);
  static constexpr norm_weight weight_form = static_cast<norm_weight>(Weight);
  static constexpr bool fp8_out = Fp8Out == 1;
  using fp8_format = fp8::e4m3fn;  // the FP8 output's format on every target (gfx942, gfx1151: encoded in software)
  static constexpr u32 n = kind == norm_kind::gated ? 128 : 2048;  // values per row
  static constexpr u32 heads = kind == norm_kind::gated ? 32 : 1;  // rows per token
  static constexpr u32 cols = n * heads;                            // a token's width C
  static constexpr u32 group = 128;                                 // outputs per E4M3 scale
  static constexpr u32 groups_per_row = n / group;
  static constexpr u32 max_tokens = MaxTokens;
  static constexpr u32 max_rows = MaxTokens * heads;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u32 chunks = n / 8;
  static constexpr u32 slices = chunks < 64 ? chunks : 64;
  static constexpr u32 chunks_per_slice = chunks / slices;
  static constexpr u32 half = slices < 32 ? slices : 32;  // slices per butterfly (G)
  static constexpr u32 waves_per_row = WavesPerRow;
  static_assert(WavesPerRow == 1 || (WavesPerRow == 2 && slices > WaveSize),
                "netra::contracts::norm: field WavesPerRow must be 1, or 2 where a row has more slices than a wave has lanes "
                "(warp32, N = 2048)");
  static_assert(SlicesPerThread == 0 || ((SlicesPerThread == 2 || SlicesPerThread == 4) && Kind == 2),
                "netra::contracts::norm: field SlicesPerThread must be 0 (as the wave gives), or 2 or 4 for the gated norm "
                "(16 / SlicesPerThread threads per head)");
  /// SlicesPerThread 0: a row over min(S, W) * WavesPerRow threads; P (gated): over S / P threads,
  /// each holding P slices (more values per thread, fewer threads and shuffles per head).
  static constexpr u32 threads_per_row = SlicesPerThread > 0 ? slices / SlicesPerThread : (slices < WaveSize ? slices : WaveSize) * WavesPerRow;
  static constexpr u32 slices_per_thread = slices / threads_per_row;
  static constexpr u32 rows_per_workgroup = RowsPerWorkgroup;
  static constexpr u32 workgroup_size = RowsPerWorkgroup * threads_per_row;
  static_assert(RowsPerWorkgroup >= 1 && workgroup_size <= 1024,
                "netra::contracts::norm: field RowsPerWorkgroup must be >= 1 with at most 1024 threads per workgroup");
  static_assert(workgroup_size % WaveSize == 0,
                "netra::contracts::norm: field RowsPerWorkgroup must make whole waves (RowsPerWorkgroup * threads per row a "
                "multiple of the wave size)");
  static_assert(WaveSize % 16 == 0 && slices % 16 == 0, "netra::contracts::norm: an E4M3 group's 16 chunks lie in one wave");
  /// Threads that share an E4M3 group (16 chunks): 16 consecutive threads, or a gated head's
  /// S / P threads (each holding P of its chunks).
  static constexpr u32 group_threads = threads_per_row < 16 ? threads_per_row : 16;
  static_assert(Resident <= 16 && (Resident == 0 || WavesPerRow == 1),
                "netra::contracts::norm: field Resident must be 0, or 1 .. 16 with WavesPerRow 1 (a looping grid)");
  /// Resident 0: one row per thread group, grid ceil(rows / R). Resident > 0: grid
  /// min(ceil(rows / R), Resident * compute units), launch bounds for Resident workgroups per
  /// compute unit, each wave looping over its rows (stride grid * R); rms and gated load the next
  /// row before finishing one.
  static constexpr u32 resident = Resident;
  static constexpr u32 grid_cap = Resident * Target::compute_units;
  static_assert(Split == 1 || ((Split == 2 || Split == 4) && Kind != 2 && RowsPerWorkgroup == 1 && Resident == 0),
                "netra::contracts::norm: field Split must be 1, or 2 or 4 for rms / add_rms with one row per workgroup and "
                "Resident 0");
  /// Split > 1: a row's outputs over Split workgroups (grid rows x Split); each computes the
  /// row's sum over all of its chunks (the same bits) and stores chunks q + S k of its part
  /// (k in [part K / Split, (part + 1) K / Split), K = chunks per slice): r', y, the E4M3 groups.
  static constexpr u32 split = Split;
  static_assert(Split == 1 || Kind != 1 || Target::has_clusters,
                "netra::contracts::norm: field Split > 1 for add_rms needs workgroup clusters (its parts order r' after r)");
  static_assert(Chain == 0 ||
                    (Kind == 2 && Chain < 32 && ((Chain & 6) == 0 || Fp8Out == 1) && ((Chain & 16) == 0 || (Chain & 3) != 0) &&
                     ((Chain & 8) == 0 || SlicesPerThread <= 1)) ||
                    (Kind != 2 && Fp8Out == 1 && Split == 1 && threads_per_row >= 16 && slices_per_thread * chunks_per_slice == 4 &&
                     (Chain & ~18u) == 32 && ((Chain & 16) == 0 || (Chain & 2) != 0)),
                "netra::contracts::norm: field Chain must be 0 or, for the gated norm, a sum of the bits 1, 8 (one slice per "
                "thread), 16 (with 1 or 2) and, with an FP8 output, 2 and 4; for rms / add_rms with an FP8 output, Split 1 and "
                "four chunks per thread: 32, plus 2 and 16 (with 2) (each bit's meaning: the field's comment)");
  /// Chain (the same bits, each form checked exhaustively on the host or by the kernel's model): how the
  /// per-thread chain is spelled, bit 1: silu(z) by kernels/norm/silu_bf16.hpp (no division, no
  /// branch); bit 2: the E4M3 group's 1 / d by kernels/norm/group_reciprocal.hpp (no division);
  /// bit 4: the group amax by dsl/group_max.hpp (one reduction instruction where the target has
  /// one, else the xor butterfly); bit 8: the exponentials of silu(z) before the sum, its
  /// quotients (divisions, or bit 1's) between the butterfly's lane stages, each stage's shuffle
  /// in flight under them; bit 16: the reciprocals of bits 1 and 2 seeded by the target's
  /// reciprocal instruction (dsl/math.hpp approx_reciprocal_f32) instead of an integer seed and
  /// four Newton steps; bit 32 (rms / add_rms, four E4M3 groups per 16 lanes, each lane one chunk
  /// of each): the groups' amax reduce-scattered so that one lane quarter holds each group's, one
  /// quantizer per lane, each group's divider read from its quarter (kernels/norm/group_quarters.hpp).
  /// 0: silu_f32's and the quantizer's IEEE divisions, the butterfly.
  static constexpr u32 chain = Chain;
  static constexpr u32 lds_bytes = WavesPerRow > 1 ? RowsPerWorkgroup * WavesPerRow * 4 : 0;
  /// Calls of at most this many tokens let their successor start at once (PDL), larger ones after
  /// their stores (dsl/sync.hpp successor_release): 64; 16 for a gated workgroup of several waves.
  static constexpr u32 release_at_start_max_tokens = kind == norm_kind::gated && workgroup_size > WaveSize ? 16 : 64;
  static constexpr u64 workspace_bytes = 0;

  static constexpr const auto& template_args =
      norm_args<Kind, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident, Split, SlicesPerThread, Chain>::value;

  /// Run-time admission: the first field that refuses, in this order.
  static decision admits(const norm_signature& s) {
    if (s.target != Target::id) return refuse("target", Target::name, s.target);
    if (s.kind != kind) return refuse("kind", norm_kind_name(kind), static_cast<i64>(s.kind));
    if (s.weight_form != weight_form)
      return refuse("weight_form", weight_form == norm_weight::plain ? "plain (w)" : "zero-centred (1 + w)", static_cast<i64>(s.weight_form));
    if (s.fp8_out != fp8_out) return refuse("fp8_out", fp8_out ? "true (E4M3 output)" : "false (BF16 output)", s.fp8_out ? 1 : 0);
    if (const decision d = require_tensor(s.x, {"x", dtype::bf16, 2, {-1, cols}, "[tokens, C]", layout::rows, 16}, s.device); !d.admitted())
      return d;
    const i64 t = s.tokens();
    if (t < 1 || t > MaxTokens) return refuse("tokens", "in [1, MaxTokens]", t);
    if (const decision d = require_stride("x", norm_signature::token_stride(s.x)); !d.admitted()) return d;
    if constexpr (kind == norm_kind::add_rms) {
      if (const decision d = require_tensor(s.residual, {"residual", dtype::bf16, 2, {t, cols}, "[tokens, C]", layout::rows, 16}, s.device);
          !d.admitted())
        return d;
      if (const decision d = require_stride("residual", norm_signature::token_stride(s.residual)); !d.admitted()) return d;
    }
    if constexpr (kind == norm_kind::gated) {
      if (const decision d = require_tensor(s.gate, {"gate", dtype::bf16, 2, {t, cols}, "[tokens, C]", layout::rows, 16}, s.device); !d.admitted())
        return d;
      if (const decision d = require_stride("gate", norm_signature::token_stride(s.gate)); !d.admitted()) return d;
    }
    if (const decision d = require_tensor(s.weight, {"weight", dtype::bf16, 1, {n}, "[N]", layout::compact, 16}, s.device); !d.admitted())
      return d;
    const dtype out_type = fp8_out ? fp8_dtype_v<fp8_format> : dtype::bf16;
    if (const decision d = require_tensor(s.out, {"out", out_type, 2, {t, cols}, "[tokens, C]", layout::compact, 16}, s.device); !d.admitted())
      return d;
    if constexpr (fp8_out) {
      if (const decision d = require_tensor(s.scales, {"scales", dtype::f32, 2, {t, cols / group}, "[tokens, C / 128]", layout::compact, 4}, s.device);
          !d.admitted())
        return d;
    }
    const u32 eps_bits = bit_cast<u32>(s.eps);
    if (!(eps_bits >= 0x00800000u && eps_bits < 0x7F800000u)) return refuse("eps", "a positive, finite, normal FP32 value", static_cast<i64>(eps_bits));
    // The output may be x itself (same compact layout, in place); nothing else may overlap.
    const byte_range out = range_of(s.out, fp8_out ? 1 : 2), scales = fp8_out ? range_of(s.scales, 4) : byte_range{};
    const byte_range x = range_of(s.x, 2);
    const bool out_is_x = !fp8_out && s.out.data == s.x.data && norm_signature::token_stride(s.x) == cols;
    if (out.overlaps(x) && !out_is_x) return refuse("out", "no overlap with x unless it is x itself (in place, compact)", address_of(s.out.data));
    if (scales.overlaps(x) || scales.overlaps(out)) return refuse("scales", "no overlap with x or out", address_of(s.scales.data));
    if constexpr (kind == norm_kind::add_rms) {
      const byte_range r = range_of(s.residual, 2);
      if (r.overlaps(x) || r.overlaps(out) || r.overlaps(scales)) return refuse("residual", "no overlap with x, out or scales", address_of(s.residual.data));
    }
    if constexpr (kind == norm_kind::gated) {
      const byte_range z = range_of(s.gate, 2);
      if (z.overlaps(out) || z.overlaps(scales)) return refuse("gate", "no overlap with out or scales", address_of(s.gate.data));
    }
    return admit();
  }

  /// Resource ceilings per target: no scratch, no spills; LDS only for WavesPerRow 2 (wave64:
  /// none at all). A warp32 row keeps 64 values and 64 weights per lane (64 registers of data).
  static constexpr resource_budget budget() {
    resource_budget b;
    if constexpr (WaveSize == 64) {
      b.max_vgprs = kind == norm_kind::add_rms ? 96 : 64;  // measured 56-62 (add_rms FP8: 75), gated 38-42
      b.max_sgprs = 48;
      b.max_code_bytes = fp8_out ? 10240 : 6144;
      if constexpr (same_v<Target, gfx942>) {  // E4M3 in software: measured up to 17,736 bytes, the rms FP8 forms 68-74 VGPRs
        b.max_code_bytes = fp8_out ? 20480 : 6144;
        if (fp8_out && kind == norm_kind::rms) b.max_vgprs = 80;
      }
    } else if constexpr (is_amd_v<Target>) {  // gfx1151, wave32: 64 values and 64 weights per lane
      b.max_vgprs = 160;                        // measured 80-145
      b.max_sgprs = 48;
      b.max_lds_bytes = lds_bytes;
      b.max_code_bytes = fp8_out ? 49152 : 12288;  // E4M3 in software, the row body unrolled (measured up to 40,728)
    } else {
      b.max_lds_bytes = lds_bytes > 0 ? lds_bytes + 1024 : 0;  // sm_90 reserves 1 KiB per block (counted by the cubin)
      b.max_registers = Resident > 0 ? 65536 / (Resident * workgroup_size) : 128;  // measured 95-123 one warp per row, 61-64 two warps per row, 33-36 gated; looping: the launch bound
      b.max_code_bytes = (fp8_out ? 32768 : 16384) * (Resident > 0 ? 2 : 1);  // a looping grid: the row body twice (prefetch)
    }
    return b;
  }

 private:
  struct byte_range {
    u64 begin = 0, end = 0;
    constexpr bool overlaps(const byte_range& o) const { return begin < o.end && o.begin < end; }
  };
  static i64 address_of(const void* p) { return static_cast<i64>(__builtin_bit_cast(u64, p)); }
  /// The bytes a [T, C] tensor of admitted shape spans.
  static byte_range range_of(const tensor_arg& a, u64 element_bytes) {
    const u64 begin = __builtin_bit_cast(u64, a.data);
    const u64 extent = static_cast<u64>((a.shape[0] - 1) * norm_signature::token_stride(a) + a.shape[1]) * element_bytes;
    return {begin, begin + extent};
  }
  static decision require_stride(const char* field, i64 stride) {
    if (stride < cols || stride % 8 != 0) return refuse(field, ">= C and a multiple of 8 elements (16-byte aligned tokens)", stride);
    return admit();
  }
};

/// RMSNorm over H = 2048 (Weight: 0 plain, 1 zero-centred; Fp8Out: 0 BF16, 1 E4M3 + scales).
template <class Target, u32 Weight, u32 Fp8Out, u32 MaxTokens, u32 WavesPerRow, u32 RowsPerWorkgroup, u32 Resident = 0>
using rms_norm = norm<Target, 0, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident>;
/// r' = bf16(x + r) written back, then RMSNorm(r').
template <class Target, u32 Weight, u32 Fp8Out, u32 MaxTokens, u32 WavesPerRow, u32 RowsPerWorkgroup, u32 Resident = 0>
using add_rms_norm = norm<Target, 1, Weight, Fp8Out, MaxTokens, WavesPerRow, RowsPerWorkgroup, Resident>;
/// RMSNorm(o) * SiLU(z) per head of 128, 32 heads per token, plain weight [128].
template <class Target, u32 Fp8Out, u32 MaxTokens, u32 RowsPerWorkgroup, u32 Resident = 0, u32 SlicesPerThread = 0, u32 Chain = 0>
using gated_rms_norm = norm<Target, 2, 0, Fp8Out, MaxTokens, 1, RowsPerWorkgroup, Resident, 1, SlicesPerThread, Chain>;

/// Chain of the rms / add_rms E4M3 forms with one row part per workgroup (Split 1): on sm90a 50
/// (each group's amax and quantizer by one lane quarter, the reciprocal from the instruction: the
/// fastest measured, docs/kernels/norm.md), 0 elsewhere (gfx950: not measured on hardware).
template <class Target, u32 Kind, u32 Fp8Out, u32 Split>
inline constexpr u32 quarter_chain = Kind != 2 && Fp8Out == 1 && Split == 1 && same_v<Target, sm90a> ? 50 : 0;

/// The decode mapping (up to 64 tokens): one row per workgroup, a whole wave64 or two warps per
/// row of 2048; the gated norm W / 16 heads per workgroup (sm90a FP8: 8, four warps). add_rms FP8
/// on a target with clusters: a row over two workgroups (Split 2). Chain on sm90a: gated BF16 17,
/// FP8 6, rms FP8 quarter_chain, 0 elsewhere (each the fastest measured: docs/kernels/norm.md; gated
/// FP8 to 16 tokens: norm_decode16).
template <class Target, u32 Kind, u32 Fp8Out> inline constexpr u32 decode_split = Kind == 1 && Fp8Out == 1 && Target::has_clusters ? 2 : 1;
template <class Target, u32 Kind, u32 Weight, u32 Fp8Out>
using norm_decode = norm<Target, Kind, Weight, Fp8Out, 64, Kind != 2 && Target::wave_size < 64 ? 2 : 1,
                         Kind == 2 ? (same_v<Target, sm90a> && Fp8Out == 1 ? 8 : Target::wave_size / 16) : 1, 0, decode_split<Target, Kind, Fp8Out>, 0,
                         Kind == 2 && same_v<Target, sm90a> ? (Fp8Out == 1 ? 6 : 17) : quarter_chain<Target, Kind, Fp8Out, decode_split<Target, Kind, Fp8Out>>>;
/// The gated FP8 decode up to 16 tokens (sm90a, dispatched before norm_decode): Chain 14, the
/// SiLU's divisions between the butterfly's stages (docs/kernels/norm.md: why not beyond 16).
template <class Target> using norm_decode16 = norm<Target, 2, 0, 1, 16, 1, Target::wave_size / 16, 0, 1, 0, 14>;
/// True where the gated norm has a middle tier (norm_mid, dispatched between the decode and the
/// prefill instances): sm90a, whose prefill mapping spreads a head over 8 threads (SlicesPerThread
/// 2), faster than 16 threads a head from 1024 tokens and slower or equal at 512 (docs/kernels/norm.md).
template <class Target, u32 Kind> inline constexpr bool norm_has_mid = Kind == 2 && same_v<Target, sm90a>;
/// The gated norm's middle tier (65 .. 512 tokens where norm_has_mid): 16 heads per workgroup, a
/// head over 16 threads.
template <class Target, u32 Kind, u32 Weight, u32 Fp8Out> using norm_mid = norm<Target, Kind, Weight, Fp8Out, 512, 1, 16>;
/// The prefill mapping (up to 8192 tokens): rms and add_rms one row per wave64, 4 rows per
/// workgroup, or on warp32 two warps per row and one row per workgroup (the decode mapping: 64
/// registers, 32 warps per SM; the fastest sm90a mapping measured at 512 and 8192 tokens,
/// bench/results/norm_h200.json); gated 16 heads per workgroup (where norm_has_mid, a head over 8
/// threads: SlicesPerThread 2). Chain: quarter_chain.
template <class Target, u32 Kind, u32 Weight, u32 Fp8Out>
using norm_prefill = norm<Target, Kind, Weight, Fp8Out, 8192, Kind != 2 && Target::wave_size < 64 ? 2 : 1,
                          Kind == 2 ? 16 : (Target::wave_size < 64 ? 1 : 4), 0, 1, norm_has_mid<Target, Kind> ? 2 : 0,
                          quarter_chain<Target, Kind, Fp8Out, 1>>;

}  // namespace netra::contracts
