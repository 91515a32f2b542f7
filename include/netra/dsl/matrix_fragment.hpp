// netra/dsl/matrix_fragment.hpp — target-neutral matrix fragments: one traits type per matrix
// instruction netra uses (M, N, K, wave size, per-lane register counts, and the lane <-> element
// maps), plus mma<Shape>(d, a, b, c), the device operation that runs it.
//
// Conventions. D(MxN) = A(MxK) * B(KxN) + C, all row-major in the comments. A lane holds
// `a_bytes` FP8 values of A packed little-endian in `a_words` 32-bit registers (byte i of the
// lane's fragment is bits 8(i%4)..8(i%4)+7 of word i/4), likewise B; C and D are `d_items`
// floats. The maps are NETRA_HOST_DEVICE constexpr so host models and tests compose them:
//   a_element(lane, byte) -> (row m, col k)      b_element(lane, byte) -> (row k, col n)
//   d_element(lane, item) -> (row m, col n)
// Facts are tagged as in docs/target-notes.md: [R] checked on hardware, [S] from the cited source,
// [I] inferred (not checked anywhere). tests/models/ holds independent models of each
// instruction written from the ISA documents; tests/dsl/test_matrix_fragments.cpp checks that
// these maps and the models agree with a plain matmul.
//
// What a kernel may rely on for the gfx950 f8f6f4 shapes: for unscaled use, D depends only on
// which A and B bytes are paired, and pairing is by (lane group, byte index) — see the [I] note at
// mfma_f32_16x16x128_e4m3. A kernel that fills A and B with the same K permutation per
// (lane group, byte) is correct whatever the hardware's byte order inside a lane is.
#pragma once
#include "netra/dsl/target.hpp"

namespace netra {

/// One element of an instruction operand: (row, col) of A (m, k), B (k, n) or C/D (m, n).
struct fragment_element {
  u32 row;
  u32 col;
};

/// Per-lane counts derived from the shape (style practice 6): one place, with the invariants.
template <u32 M, u32 N, u32 K, u32 WaveSize, u32 InputBits> struct fragment_shape {
  static constexpr u32 m = M, n = N, k = K, wave_size = WaveSize, input_bits = InputBits;
  static constexpr u32 a_bytes = M * K * InputBits / 8 / WaveSize;  // per lane
  static constexpr u32 b_bytes = K * N * InputBits / 8 / WaveSize;  // per lane
  static constexpr u32 a_words = a_bytes / 4, b_words = b_bytes / 4;
  static constexpr u32 d_items = M * N / WaveSize;  // FP32 accumulators per lane
  static_assert(M * K * InputBits % (8 * WaveSize * 4) == 0 && K * N * InputBits % (8 * WaveSize * 4) == 0,
                "netra::fragment_shape: A and B must fill whole 32-bit registers of every lane");
  static_assert(M * N % WaveSize == 0, "netra::fragment_shape: D must spread evenly over the lanes");
};

// ---- gfx950 (CDNA4, wave64) ---------------------------------------------------------------------

/// v_mfma_f32_16x16x128_f8f6f4 with cbsz = blgp = 0 (E4M3 x E4M3), unscaled.
///   A: lane l holds row l % 16 and the 32 K values of K group g = l / 16 [S: CK
///      WarpGemmAttributeMfmaImpl_f32_16x16x128_f8f6f4; Modular CDNA4 block-scaled docs].
///      [I] byte order inside the lane: by analogy with 32x32x64, bytes 0..15 hold K = 16g + 0..15
///      and bytes 16..31 hold K = 64 + 16g + 0..15 (a_element below). Unscaled products do not
///      depend on it as long as A and B share it (B is laid out like A with rows -> columns,
///      [S] for 32x32x64, [I] here); scaled use would (which 32-wide K block a scale covers).
///   B: lane l holds column l % 16, same K split as A.
///   D: item i of lane l is D[4 * (l / 16) + i][l % 16] [S: CK, AMD matrix-core blog].
struct mfma_f32_16x16x128_e4m3 : fragment_shape<16, 16, 128, 64, 8> {
  using target = gfx950;
  static constexpr const char* instruction = "v_mfma_f32_16x16x128_f8f6f4 (cbsz 0, blgp 0)";
  NETRA_HOST_DEVICE static constexpr u32 k_of(u32 lane, u32 byte) { return 16 * (lane / 16) + 64 * (byte / 16) + byte % 16; }
  NETRA_HOST_DEVICE static constexpr fragment_element a_element(u32 lane, u32 byte) { return {lane % 16, k_of(lane, byte)}; }
  NETRA_HOST_DEVICE static constexpr fragment_element b_element(u32 lane, u32 byte) { return {k_of(lane, byte), lane % 16}; }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 item) { return {4 * (lane / 16) + item, lane % 16}; }
};

/// v_mfma_f32_32x32x64_f8f6f4 with cbsz = blgp = 0 (E4M3 x E4M3), unscaled [S: AMD matrix-core
/// blog, Fig. 9 code; docs/target-notes.md §2].
///   A: row l % 32; bytes 0..15 hold K = 16 * (l / 32) + 0..15, bytes 16..31 K = 32 + 16 * (l / 32) + 0..15.
///   B: column l % 32, same K split.
///   D: item 4i + r (i = 0..3, r = 0..3) is D[8i + 4 * (l / 32) + r][l % 32].
struct mfma_f32_32x32x64_e4m3 : fragment_shape<32, 32, 64, 64, 8> {
  using target = gfx950;
  static constexpr const char* instruction = "v_mfma_f32_32x32x64_f8f6f4 (cbsz 0, blgp 0)";
  NETRA_HOST_DEVICE static constexpr u32 k_of(u32 lane, u32 byte) { return 16 * (lane / 32) + 32 * (byte / 16) + byte % 16; }
  NETRA_HOST_DEVICE static constexpr fragment_element a_element(u32 lane, u32 byte) { return {lane % 32, k_of(lane, byte)}; }
  NETRA_HOST_DEVICE static constexpr fragment_element b_element(u32 lane, u32 byte) { return {k_of(lane, byte), lane % 32}; }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 item) {
    return {8 * (item / 4) + 4 * (lane / 32) + item % 4, lane % 32};
  }
};

/// v_mfma_f32_16x16x32_fp8_fp8 (cbsz = abid = blgp = 0) [S: CDNA3 ISA layout for 16x16 with
/// 8-byte operands; AMD matrix-core blog].
///   A: row l % 16, byte b holds K = 8 * (l / 16) + b.   B: column l % 16, same K.
///   D: item i is D[4 * (l / 16) + i][l % 16].
struct mfma_f32_16x16x32_fp8_fp8 : fragment_shape<16, 16, 32, 64, 8> {
  using target = gfx950;
  static constexpr const char* instruction = "v_mfma_f32_16x16x32_fp8_fp8";
  NETRA_HOST_DEVICE static constexpr fragment_element a_element(u32 lane, u32 byte) { return {lane % 16, 8 * (lane / 16) + byte}; }
  NETRA_HOST_DEVICE static constexpr fragment_element b_element(u32 lane, u32 byte) { return {8 * (lane / 16) + byte, lane % 16}; }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 item) { return {4 * (lane / 16) + item, lane % 16}; }
};

// ---- sm90a (Hopper, warp32) ---------------------------------------------------------------------

/// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 [R: docs/target-notes.md §7, exact integer GEMM on
/// the H200, 0 of 128 results mismatched]. g = lane >> 2 (group), t = lane & 3 (thread in group).
///   A byte i: row g + 8 * ((i >> 2) & 1), col 4t + (i & 3) + 16 * (i >> 3).
///   B byte i: row (k) 4t + (i & 3) + 16 * (i >> 2), col g.
///   D item i: row g + 8 * (i >> 1), col 2t + (i & 1).
struct mma_m16n8k32_e4m3 : fragment_shape<16, 8, 32, 32, 8> {
  using target = sm90a;
  static constexpr const char* instruction = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32";
  NETRA_HOST_DEVICE static constexpr fragment_element a_element(u32 lane, u32 byte) {
    return {(lane >> 2) + 8 * ((byte >> 2) & 1), 4 * (lane & 3) + (byte & 3) + 16 * (byte >> 3)};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element b_element(u32 lane, u32 byte) {
    return {4 * (lane & 3) + (byte & 3) + 16 * (byte >> 2), lane >> 2};
  }
  NETRA_HOST_DEVICE static constexpr fragment_element d_element(u32 lane, u32 item) {
    return {(lane >> 2) + 8 * (item >> 1), 2 * (lane & 3) + (item & 1)};
  }
};

/// The fragment shapes netra knows (closed set; style practice 3).
template <class Shape>
inline constexpr bool is_fragment_shape_v = same_v<Shape, mfma_f32_16x16x128_e4m3> || same_v<Shape, mfma_f32_32x32x64_e4m3> ||
                                           same_v<Shape, mfma_f32_16x16x32_fp8_fp8> || same_v<Shape, mma_m16n8k32_e4m3>;

/// The device operation of a shape, specialised next to the raw wrappers of its target
/// (dsl/arch/gfx950/mfma_fragment.hpp, dsl/arch/sm90a/mma_fragment.hpp).
template <class Shape> struct fragment_mma {
  static_assert(is_fragment_shape_v<Shape>, "netra::fragment_mma: not a fragment shape netra knows (see dsl/matrix_fragment.hpp)");
  static_assert(dependent_false_v<Shape>,
                "netra::fragment_mma: this compiler cannot run the shape's instruction (gfx950 shapes need clang -x hip "
                "--offload-arch=gfx950, sm90a shapes nvcc -gencode=arch=compute_90a,code=sm_90a)");
};

}  // namespace netra

#if defined(NETRA_COMPILER_HIP)
#include "netra/dsl/arch/gfx950/mfma_fragment.hpp"
#endif
#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/mma_fragment.hpp"
#endif

namespace netra {
/// d = A * B + c for one instruction of `Shape` (unscaled). Registers as described by the traits.
template <class Shape>
NETRA_DEVICE void mma(float (&d)[Shape::d_items], const u32 (&a)[Shape::a_words], const u32 (&b)[Shape::b_words],
                      const float (&c)[Shape::d_items]) {
  fragment_mma<Shape>::run(d, a, b, c);
}
}  // namespace netra
