// netra/contracts/norm/signature.hpp — what a call to a normalization kernel has: the tensors
// (built from the caller's DLTensors, runtime/tensor.hpp), eps, and which of the three
// operations, weight forms and output formats it asks for.
//
// Tensors (T tokens; C = the token's width: H = 2048 for rms / add_rms, 32 heads x 128 for gated):
//   x:        bfloat16 [T, C], last dimension contiguous, any token stride (gated: o)
//   residual: bfloat16 [T, C], last dimension contiguous, any token stride; add_rms only, read and
//             written (r' replaces r)
//   gate:     bfloat16 [T, C], last dimension contiguous, its own token stride; gated only (z)
//   weight:   bfloat16 [H] (gated: [128]), compact
//   out:      bfloat16 [T, C] or E4M3 (float8_e4m3fn or uint8) [T, C], compact; may be x itself
//             (in place) when x is compact; no other overlap with an input
//   scales:   float32 [T, C / 128], compact; FP8 output only
#pragma once
#include "netra/contracts/common.hpp"

namespace netra {

/// The three operations of the family.
enum class norm_kind : u8 { rms = 0, add_rms = 1, gated = 2 };
/// The weight as the checkpoint stores it: y uses w, or (1 + w) for zero-centred weights
/// (Qwen3-Next's RMSNorm; w is then stored near 0).
enum class norm_weight : u8 { plain = 0, zero_centred = 1 };

NETRA_HOST_DEVICE constexpr const char* norm_kind_name(norm_kind k) {
  return k == norm_kind::rms ? "rms_norm" : k == norm_kind::add_rms ? "add_rms_norm" : "gated_rms_norm";
}

struct norm_signature {
  target_id target;
  device_ref device;
  norm_kind kind = norm_kind::rms;
  norm_weight weight_form = norm_weight::plain;
  bool fp8_out = false;
  float eps = 0.0f;
  tensor_arg x;
  tensor_arg residual;
  tensor_arg gate;
  tensor_arg weight;
  tensor_arg out;
  tensor_arg scales;
  NETRA_HOST_DEVICE constexpr i64 tokens() const { return x.rank == 2 ? x.shape[0] : 0; }
  /// The token stride of a [T, C] tensor in elements (a single token's does not matter).
  NETRA_HOST_DEVICE static constexpr i64 token_stride(const tensor_arg& t) { return t.rank == 2 && t.shape[0] == 1 ? t.shape[1] : t.strides[0]; }
};

}  // namespace netra
