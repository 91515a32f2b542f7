// netra/dsl/matrix_fragment_bf16.hpp — BF16 matrix fragments (FP32 accumulation), in the
// conventions of dsl/matrix_fragment.hpp: a traits type per instruction with its lane <-> element
// maps, and fragment_mma<Shape> specialised next to the raw wrappers of its target, so
// mma<Shape>(d, a, b, c) runs it. A lane holds its BF16 values of A packed two per 32-bit word,
// value i in bits 16 (i % 2) .. 16 (i % 2) + 15 of word i / 2 (likewise B); C and D are floats.
//   a_element(lane, value) -> (row m, col k)   b_element(lane, value) -> (row k, col n)
//   d_element(lane, item)  -> (row m, col n)
// Products of two BF16 values are exact in FP32; the order and internal precision of the sums
// inside one instruction are the vendor's (not host-reproducible), so contracts built on these
// state an error bound (contracts/moe/router.hpp). Tags as in docs/target-notes.md: [S] source,
// [I] inferred; tests/models/matrix_bf16.hpp models each instruction from the ISA documents and
// tests/dsl/test_matrix_fragments_bf16.cpp checks maps, models and a plain matmul agree.
#pragma once
#include "netra/dsl/matrix_fragment.hpp"

namespace netra {

/// v_mfma_f32_16x16x32_bf16 (gfx950, wave64): D(16x16) = A(16x32) * B(32x16) + C.
///   A: lane l holds row l % 16 and the 8 K values of K group q = l / 16 [S: CDNA3/4 ISA 16x16
///      layouts, CK WarpGemmAttributeMfmaImpl_f32_16x16x32_bf16]; [I] value i is K = 8q + i.
///      D does not depend on the K order inside a lane as long as A and B share it (B is laid
///      out like A with rows -> columns), which is how netra kernels load them.
///   B: lane l holds column l % 16, same K split.
///   D: item i of lane l is D[4 * (l / 16) + i][l % 16] [S: as for every 16x16 MFMA].
struct mfma_f32_16x16x32_bf16 : fragment_shape<16, 16, 32, 64, 16> {
  using target = gfx950;
  static constexpr const char* instruction = "v_mfma_f32_16x16x32_bf16";
  static constexpr u32 a_values = a_bytes / 2, b_values = b_bytes / 2;
  NETRA_HOST_DEVICE static constexpr fragment_element a_element(u32 lane, u32 value) { return {lane % 16, 8 * (lane / 16) + value}; }
  NETRA_HOST_DEVICE static constexpr fragment_element b_element(u32 lane, u32 value) { return {8 * (lane / 16) + value, lane % 16}; }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 item) { return {4 * (lane / 16) + item, lane % 16}; }
};

/// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (sm90a, warp32) [S: PTX ISA, "Matrix
/// Fragments for mma.m16n8k16 with floating point type"]. g = lane >> 2, t = lane & 3.
///   A value i (word i / 2): row g + 8 * ((i >> 1) & 1), col 2t + (i & 1) + 8 * (i >> 2).
///   B value i (word i / 2): row (k) 2t + (i & 1) + 8 * (i >> 1), col g.
///   D item i: row g + 8 * (i >> 1), col 2t + (i & 1).
struct mma_m16n8k16_bf16 : fragment_shape<16, 8, 16, 32, 16> {
  using target = sm90a;
  static constexpr const char* instruction = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
  static constexpr u32 a_values = a_bytes / 2, b_values = b_bytes / 2;
  NETRA_HOST_DEVICE static constexpr fragment_element a_element(u32 lane, u32 value) {
    return {(lane >> 2) + 8 * ((value >> 1) & 1), 2 * (lane & 3) + (value & 1) + 8 * (value >> 2)};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element b_element(u32 lane, u32 value) {
    return {2 * (lane & 3) + (value & 1) + 8 * (value >> 1), lane >> 2};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 item) {
    return {(lane >> 2) + 8 * (item >> 1), 2 * (lane & 3) + (item & 1)};
  }
};

template <class Shape> inline constexpr bool is_bf16_fragment_shape_v = same_v<Shape, mfma_f32_16x16x32_bf16> || same_v<Shape, mma_m16n8k16_bf16>;

}  // namespace netra

#if defined(NETRA_COMPILER_HIP)
#include "netra/dsl/arch/gfx950/mfma_bf16.hpp"
#endif
#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/mma_bf16.hpp"
#endif
