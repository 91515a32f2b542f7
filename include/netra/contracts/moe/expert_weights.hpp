// netra/contracts/moe/expert_weights.hpp — the expert weights, block scales and block-FP8
// arithmetic that the decode expert contracts (expert_gate_up.hpp, expert_down.hpp) share.
//
// Model contract (Qwen3.6-35B-A3B): hidden 2048, 256 routed experts + 1 shared expert (id 256),
// intermediate 512, FP8 E4M3 (OCP E4M3FN) weights with one FP32 scale per 128 x 128 block.
// A contract names its FP8 format (dsl/fp8_format.hpp; OCP E4M3FN unless it says E4M3FNUZ, the
// gfx942 checkpoints: max 240, NaN 0x80 only); "E4M3" below is that format, 448 its maximum.
//
//   W13 E4M3 [257, 1024, 2048]  row-major, W13[e][n][k]; rows 0..511 = gate, 512..1023 = up
//   S13 FP32 [257,    8,   16]  S13[e][n / 128][k / 128]
//   W2  E4M3 [257, 2048,  512]  row-major, W2[e][n][k]
//   S2  FP32 [257,   16,    4]  S2[e][n / 128][k / 128]
// Expert e = 256 is the shared expert (route slot 8, route_layout.hpp). Weight encodings 0x7F /
// 0xFF (NaN) propagate NaN into every output that reads them; weights are otherwise arbitrary
// finite E4M3 values (±448 included), scales arbitrary FP32 (0 included).
//
// Comparison policy of the expert GEMMs (vs an FP64 reference of the dequantized math).
//   Let a block product be P = sum over the 128 k of one scale block of qa_k * qw_k (E4M3 values).
//   Each product is exact in FP32 (4 x 4 significant bits) and the FP64 reference computes every
//   P exactly (|terms| in [2^-18, 2^17.6], 128 of them: < 53 bits). The device accumulates P on
//   the matrix unit in FP32 with a vendor-specific order and alignment/rounding, bounded here as
//   recursive summation with unit roundoff 2^-23 (round-toward-zero allowed):
//       |P_dev - P| <= 127 * 2^-23 * A,   A = sum |qa_k * qw_k|.
//   Block scales s_b = sa_b * sw_b are one FP32 product (2^-24 relative); blocks, waves and routes
//   are combined by at most 24 further FP32 fma/add steps (2^-24 relative each on the running
//   absolute sum), and the result is rounded once to BF16 (RNE, 2^-8 relative). Hence, with
//   E = sum over blocks (and routes, weighted by |w|) of |s_b| * A_b computed in FP64:
//       |out - ref| <= 2^-8 * |ref| + 2^-15 * E + 2^-120
//   (2^-15 > (1 + 2^-8) * (127 * 2^-23 + 25 * 2^-24); 2^-120 absorbs FP32 underflow of tiny
//   scales). The bound depends only on the dtypes and on the reduction length (128 per block);
//   it is checked element by element, and NaN must match NaN exactly.
#pragma once
#include "netra/contracts/common.hpp"
#include "netra/contracts/moe/route_layout.hpp"
#include "netra/dsl/math.hpp"

namespace netra::moe {

struct expert_weights {
  static constexpr u32 experts = route_layout::experts;  // 257: 256 routed + the shared expert
  static constexpr u32 hidden = 2048;
  static constexpr u32 intermediate = 512;
  static constexpr u32 gate_up_rows = 2 * intermediate;  // W13 rows: gate | up
  static constexpr u32 block = 128;                      // scale block edge (rows and K)
  static constexpr u32 w13_scale_rows = gate_up_rows / block;  // 8
  static constexpr u32 w13_scale_cols = hidden / block;        // 16
  static constexpr u32 w2_scale_rows = hidden / block;         // 16
  static constexpr u32 w2_scale_cols = intermediate / block;   // 4
  static constexpr u64 w13_expert_bytes = u64{gate_up_rows} * hidden;  // 2 MiB
  static constexpr u64 w2_expert_bytes = u64{hidden} * intermediate;   // 1 MiB
  static_assert(gate_up_rows % block == 0 && hidden % block == 0 && intermediate % block == 0,
                "netra::moe::expert_weights: every matrix edge is a whole number of scale blocks");

  NETRA_HOST_DEVICE static constexpr bool valid_expert(i32 id) { return id >= 0 && static_cast<u32>(id) < experts; }

  /// A contract's check of one weight matrix set: `w` FP8 of `Format` [257, rows, cols] (the shared
  /// expert's slice included; the other FP8 format refused) and its block scales `s` float32
  /// [257, rows / 128, cols / 128], both compact (texts: "[257 experts (256 routed + shared), rows,
  /// cols]", "[257, rows / 128, cols / 128]").
  template <fp8_format Format = fp8::e4m3fn>
  NETRA_HOST_DEVICE static decision require(const tensor_arg& w, const char* w_field, const char* w_shape, const tensor_arg& s, const char* s_field,
                                            const char* s_shape, i64 rows, i64 cols, device_ref device) {
    if (const decision d = require_tensor(w, {w_field, fp8_dtype_v<Format>, 3, {experts, rows, cols}, w_shape, layout::compact, 16}, device);
        !d.admitted())
      return d;
    return require_tensor(s, {s_field, dtype::f32, 3, {experts, rows / block, cols / block}, s_shape, layout::compact, 4}, device);
  }
};

/// Hidden-activation quantization of the gate_up contract (per token, per 128 contiguous values
/// of the BF16 hidden row), exactly as the kernels do it (dsl/math.hpp operations, one rounding
/// each), with m = max over the block of (bits(x_k) & 0x7FFF) taken as integers (so any NaN >
/// +Inf > every finite magnitude):
///   m > 0x7F80 (a NaN)   scale = NaN (0x7FC00000), every q_k = 0x7F
///   m = 0x7F80 (an Inf)  scale = +Inf,             every q_k = 0x7F
///   otherwise            amax = float(m), scale = amax / 448, r = 448 / amax (IEEE divisions);
///                        r = +Inf (amax = 0 or amax < 448 / FLT_MAX): every q_k = 0x00;
///                        else q_k = e4m3(x_k * r) (one rounded multiply, then dsl/convert.hpp:
///                        RNE, saturating to ±448).
/// Dequantized value: q_k * scale. A block holding NaN or ±Inf thus poisons every output of its
/// token (NaN through the matrix unit). Multiplying by the reciprocal (not dividing by the scale,
/// as act_quant does) is this contract's choice: each workgroup re-quantizes the rows it needs,
/// and one multiply per value keeps that cheap; the bits are defined either way.
/// For an FP8 format F: F's maximum for 448 (E4M3FNUZ: 240) and F's NaN byte for 0x7F (0x80).
template <fp8_format Format> struct hidden_block_quant_of {
  static constexpr float e4m3_max = fp8_max_v<Format>;
  static constexpr u32 poison_word = 0x01010101u * Format::nan_code;  // four NaN bytes
  static constexpr u32 nan_magnitude = 0x7F80u;  // magnitudes above are NaN, equal is Inf
  struct block {
    float scale;       // stored / applied dequantization scale
    float reciprocal;  // multiplier before the E4M3 conversion (finite blocks only)
    bool poison;       // every q_k = 0x7F
    bool zero;         // every q_k = 0x00
  };
  NETRA_HOST_DEVICE static block of(u32 magnitude) {
    if (magnitude > nan_magnitude) return {bit_cast<float>(0x7FC00000u), 0.0f, true, false};
    if (magnitude == nan_magnitude) return {bit_cast<float>(0x7F800000u), 0.0f, true, false};
    const float amax = bit_cast<float>(magnitude << 16);
    const float scale = div_rn(amax, e4m3_max);
    const float r = div_rn(e4m3_max, amax);
    const bool zero = !(r <= 3.4028234663852886e38f);
    return {scale, r, false, zero};
  }
};
using hidden_block_quant = hidden_block_quant_of<fp8::e4m3fn>;

}  // namespace netra::moe
