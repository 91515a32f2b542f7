// netra/contracts/gdn/precompute.hpp — the token-local quantities the recurrent core reads, from
// the conv output y (q | k | v channels, BF16) and the projections a, b (BF16, [B T, 32], each
// with its own row stride: column views of the input projection's product are taken as they are).
//
// Semantics, per row r (r = b T + t) (every operation one IEEE rounding, in this order):
//   q/k head h (x = the head's 128 BF16 values as FP32):
//     partials P_l = x[4l]^2 (mul), then fma(x[4l+e], x[4l+e], P_l) for e = 1, 2, 3 (l = 0..31);
//     ss = butterfly over the 32 partials: P_l <- P_l + P_(l^m) for m = 1, 2, 4, 8, 16;
//     inv = 1 / sqrt_rn(ss + 1e-6) (IEEE division); k_out = x * inv; q_out = (x * inv) * 128^-1/2.
//   v head hv: decay = exp_f32(-(exp_f32(A_log[hv]) * softplus_f32(a[r][hv] + dt_bias[hv])))
//     (exp(g) with g = -exp(A_log) softplus(a + dt_bias)); beta = sigmoid_f32(b[r][hv]); a NaN
//     decay or beta is stored as 0x7FC00000 (gdn::canonical_nan).
//   exp_f32 / sigmoid_f32: dsl/math.hpp; softplus_f32, sqrt_rn: dsl/activation.hpp.
// Outputs (FP32): q, k [B T, 16, 128]; decay, beta [B T, 32]. A_log, dt_bias: FP32 [32].
// Comparison policy: bitwise. A zero head gives ss = 0, inv = 1000.0000xx, outputs +-0.
#pragma once
#include "netra/contracts/gdn/admission.hpp"

namespace netra {

/// A precompute call: y [B T, 8192] BF16 (rows contiguous, row stride a multiple of 8); a, b
/// [B T, 32] BF16 (rows contiguous, any row stride >= 32 elements); A_log, dt_bias [32] FP32;
/// q, k [B T, 16, 128] FP32; decay, beta [B T, 32] FP32 (compact).
struct gdn_precompute_signature {
  target_id target;
  device_ref device;
  tensor_arg y, a, b, a_log, dt_bias, q, k, decay, beta;
  NETRA_HOST_DEVICE constexpr i64 rows() const { return y.rank == 2 ? y.shape[0] : 0; }
};

namespace contracts {

template <class Target, u32 MaxBatch, u32 Tokens, u32 WaveSize = Target::wave_size> struct gdn_precompute {
  static_assert(is_built_target_v<Target> || is_audit_only_target_v<Target>,
                "netra::contracts::gdn_precompute: field Target is not supported; supported: netra::gfx950, netra::sm90a, netra::gfx942, "
                "netra::gfx1151 (built and audited only)");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::gdn_precompute: field WaveSize must equal the target's wave size (gfx950, gfx942: 64; sm90a, gfx1151: 32)");
  static_assert(MaxBatch >= 1 && MaxBatch <= 128, "netra::contracts::gdn_precompute: field MaxBatch must be in [1, 128]");
  static_assert(Tokens >= 1 && Tokens <= 16, "netra::contracts::gdn_precompute: field Tokens must be in [1, 16]");

  using target = Target;
  static constexpr const char* family = "gdn_precompute";
  static constexpr const char* template_name = "netra::contracts::gdn_precompute";
  static constexpr u32 max_batch = MaxBatch;
  static constexpr u32 tokens = Tokens;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u64 workspace_bytes = 0;
  static constexpr i64 template_args[] = {MaxBatch, Tokens};

  static decision admits(const gdn_precompute_signature& s) {
    constexpr i64 D = gdn::channels, H = gdn::heads_qk, HV = gdn::heads_v, K = gdn::key_dim;
    if (const decision d = gdn::admit_target<Target>(s.target); !d.admitted()) return d;
    if (const decision d = require_tensor(s.y, {"y", dtype::bf16, 2, {-1, D}, "[B T, 8192]", layout::rows, 16}, s.device); !d.admitted()) return d;
    const i64 R = s.rows();
    if (R < Tokens || R > i64{MaxBatch} * Tokens || R % Tokens != 0) return refuse("rows", "B T with B in [1, MaxBatch] (T = Tokens)", R);
    if (const decision d = gdn::admit_row_stride("y row stride", s.y); !d.admitted()) return d;
    if (const decision d = require_tensor(s.a, {"a", dtype::bf16, 2, {R, HV}, "[B T, 32]", layout::rows, 2}, s.device); !d.admitted()) return d;
    if (const decision d = admit_gate_stride("a row stride", s.a); !d.admitted()) return d;
    if (const decision d = require_tensor(s.b, {"b", dtype::bf16, 2, {R, HV}, "[B T, 32]", layout::rows, 2}, s.device); !d.admitted()) return d;
    if (const decision d = admit_gate_stride("b row stride", s.b); !d.admitted()) return d;
    if (const decision d = require_tensor(s.a_log, {"A_log", dtype::f32, 1, {HV}, "[32]", layout::compact, 4}, s.device); !d.admitted()) return d;
    if (const decision d = require_tensor(s.dt_bias, {"dt_bias", dtype::f32, 1, {HV}, "[32]", layout::compact, 4}, s.device); !d.admitted()) return d;
    if (const decision d = require_tensor(s.q, {"q", dtype::f32, 3, {R, H, K}, "[B T, 16, 128]", layout::compact, 16}, s.device); !d.admitted()) return d;
    if (const decision d = require_tensor(s.k, {"k", dtype::f32, 3, {R, H, K}, "[B T, 16, 128]", layout::compact, 16}, s.device); !d.admitted()) return d;
    if (const decision d = require_tensor(s.decay, {"decay", dtype::f32, 2, {R, HV}, "[B T, 32]", layout::compact, 4}, s.device); !d.admitted())
      return d;
    if (const decision d = require_tensor(s.beta, {"beta", dtype::f32, 2, {R, HV}, "[B T, 32]", layout::compact, 4}, s.device); !d.admitted()) return d;
    return admit();
  }

  /// a, b: rows that do not overlap (row stride >= 32 elements; gdn::row_stride of a one-row tensor is 32).
  static decision admit_gate_stride(const char* field, const tensor_arg& t) {
    const i64 s = gdn::row_stride(t);
    return s >= gdn::heads_v ? admit() : refuse(field, ">= 32 elements (rows that do not overlap)", s);
  }

  static constexpr resource_budget budget() {
    if constexpr (is_amd_v<Target>) {  // gfx950, gfx942 (measured 22 VGPRs), gfx1151 (15)
      resource_budget b;
      b.max_vgprs = 48;  // the article's precompute: 44 VGPRs, 48 SGPRs
      b.max_sgprs = 48;
      b.max_code_bytes = 16384;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 64;
      b.max_code_bytes = 32768;
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::gdn_precompute: no resource budget for this target");
    }
  }
};

}  // namespace contracts
}  // namespace netra
