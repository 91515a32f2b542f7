// netra/dsl/convert_e4m3_bf16.hpp — four OCP E4M3 values (one 32-bit word, byte i = value i) to
// four BF16 values (two words: value 0 in bits 0..15 of the first, value 1 in bits 16..31, values
// 2, 3 likewise in the second). Exact: every E4M3 value (±448, subnormals m * 2^-9, ±0) is a BF16
// value; E4M3 NaN (S.1111.111) becomes the BF16 NaN 0x7FFF (netra's canonical NaN).
//   host:   e4m3x4_to_bf16x4_reference (f32_from_e4m3, then bf16_from_f32_reference)
//   sm90a:  cvt.rn.f16x2.e4m3x2 (exact), cvt.f32.f16 (exact), cvt.rn.bf16x2.f32 (exact here); or
//           integer operations and fma.rn.bf16x2 (arch/sm90a/convert_e4m3.hpp; a chunk uses both)
//   gfx950: v_cvt_pk_f32_fp8 (exact), v_cvt_pk_bf16_f32 (exact here; NaN canonicalised)
#pragma once
#include "netra/dsl/convert.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/convert_e4m3.hpp"
#endif
#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_cvt_pk_f32_fp8))
#include "netra/dsl/arch/gfx950/convert_e4m3.hpp"
#endif

namespace netra {

struct bf16x4 {
  u32 lo;  // values 0 (bits 0..15) and 1 (bits 16..31)
  u32 hi;  // values 2 and 3
};

NETRA_HOST_DEVICE constexpr bf16x4 e4m3x4_to_bf16x4_reference(u32 word) {
  u32 w[2] = {0, 0};
  for (u32 i = 0; i < 4; ++i) w[i / 2] |= static_cast<u32>(bf16_from_f32_reference(f32_from_e4m3(static_cast<u8>(word >> (8 * i))))) << (16 * (i % 2));
  return {w[0], w[1]};
}

template <class Target> struct e4m3_widen_ops {
  static_assert(dependent_false_v<Target>, "netra::e4m3_widen_ops: this compiler cannot generate code for the target");
};
#if defined(NETRA_COMPILER_CUDA)
template <> struct e4m3_widen_ops<sm90a> {
  /// One BF16 pair word of bytes 2 Pair, 2 Pair + 1: through cvt (Integer false) or the integer form.
  template <u32 Pair, bool Integer> static NETRA_DEVICE u32 pair(u32 word) {
    if constexpr (Integer) {
      return sm90a_isa::widen_e4m3x2_bf16x2_integer<Pair>(word, (word & 0x7F7F7F7Fu) + 0x01010101u);
    } else {
      const u32 h = sm90a_isa::cvt_rn_f16x2_e4m3x2(Pair == 0 ? word : word >> 16);
      return pack_bf16x2<sm90a>(sm90a_isa::cvt_f32_f16(h), sm90a_isa::cvt_f32_f16(h >> 16));
    }
  }
  static NETRA_DEVICE bf16x4 run(u32 word) { return {pair<0, false>(word), pair<1, false>(word)}; }
  static NETRA_DEVICE bf16x4 run_integer(u32 word) { return {pair<0, true>(word), pair<1, true>(word)}; }
  /// A chunk's 8 pairs, IntegerPairs of them (spread over the words) through the integer form and
  /// the rest through cvt: the integer and conversion pipes share the work.
  template <u32 IntegerPairs> static NETRA_DEVICE void run_chunk(const u32x4& x, bf16x4 (&w)[4]) {
    static_assert(IntegerPairs == 0 || IntegerPairs == 2 || IntegerPairs == 3 || IntegerPairs == 4 || IntegerPairs == 8,
                  "netra::e4m3_widen_ops<sm90a>: IntegerPairs must be 0, 2, 3, 4 or 8");
    constexpr u32 mask = IntegerPairs == 0 ? 0x00u : IntegerPairs == 2 ? 0x88u : IntegerPairs == 3 ? 0x92u : IntegerPairs == 4 ? 0xAAu : 0xFFu;
    w[0] = {pair<0, (mask & 0x01u) != 0>(x.x), pair<1, (mask & 0x02u) != 0>(x.x)};
    w[1] = {pair<0, (mask & 0x04u) != 0>(x.y), pair<1, (mask & 0x08u) != 0>(x.y)};
    w[2] = {pair<0, (mask & 0x10u) != 0>(x.z), pair<1, (mask & 0x20u) != 0>(x.z)};
    w[3] = {pair<0, (mask & 0x40u) != 0>(x.w), pair<1, (mask & 0x80u) != 0>(x.w)};
  }
  /// The split the kernels use (bench/attention_read_floor.cu measures every split on the H200).
  static constexpr u32 chunk_integer_pairs = 2;
};
#endif
#if defined(NETRA_COMPILER_HIP) && (!defined(NETRA_DEVICE_PASS) || __has_builtin(__builtin_amdgcn_permlane16_swap))  // gfx950 only (target_ops<gfx950>)
template <> struct e4m3_widen_ops<gfx950> {
  static NETRA_DEVICE bf16x4 run(u32 word) {
    float v0, v1, v2, v3;
    gfx950_isa::v_cvt_pk_f32_fp8<false>(word, v0, v1);
    gfx950_isa::v_cvt_pk_f32_fp8<true>(word, v2, v3);
    return {pack_bf16x2<gfx950>(v0, v1), pack_bf16x2<gfx950>(v2, v3)};
  }
  template <u32> static NETRA_DEVICE void run_chunk(const u32x4& x, bf16x4 (&w)[4]) { w[0] = run(x.x), w[1] = run(x.y), w[2] = run(x.z), w[3] = run(x.w); }
  static constexpr u32 chunk_integer_pairs = 0;
};
#endif

/// The device form of e4m3x4_to_bf16x4_reference (the same bits).
template <class Target> NETRA_DEVICE bf16x4 e4m3x4_to_bf16x4(u32 word) { return e4m3_widen_ops<Target>::run(word); }
/// The 16 E4M3 values of a chunk (word i's four in w[i]; the same bits as e4m3x4_to_bf16x4 of each
/// word). sm90a widens IntegerPairs of its 8 pairs by the integer form, the rest by cvt (both exact).
template <class Target, u32 IntegerPairs = e4m3_widen_ops<Target>::chunk_integer_pairs>
NETRA_DEVICE void e4m3x16_to_bf16x16(const u32x4& x, bf16x4 (&w)[4]) {
  e4m3_widen_ops<Target>::template run_chunk<IntegerPairs>(x, w);
}

}  // namespace netra
