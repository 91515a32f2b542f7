// netra/dsl/arch/sm90a/mma.hpp — the matrix instructions of sm_90a netra uses (E4M3, and FP16 for E4M3 values
// converted exactly), one raw wrapper per PTX instruction, named after it.
//
// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (warp32, registers only). On Hopper ptxas
//   expands it to F2FP.F16.E4M3.UNPACK_B x12 + 2 x HMMA.16816.F32 (docs/target-notes.md §7: emulated
//   through FP16; every E4M3 value is exact in FP16, products are exact in FP32). Layout (checked
//   on the H200 with an exact integer GEMM), g = lane >> 2, t = lane & 3:
//     A byte i of a[0..3]: (row g + 8 * ((i >> 2) & 1), col 4t + (i & 3) + 16 * (i >> 3))
//     B byte i of b[0..1]: (k 4t + (i & 3) + 16 * (i >> 2), col g)
//     D item i of d[0..3]: (row g + 8 * (i >> 1), col 2t + (i & 1))
//
// wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3 (warpgroup of 128 threads, native QGMMA).
//   A from registers (4 words per thread: warp w of the warpgroup holds rows 16w..16w+15 in the
//   m16n8k32 A layout above) and B from shared memory through a matrix descriptor; both K-major
//   (FP8 wgmma has no transpose). Issue order: wgmma_fence_sync_aligned() before the first
//   wgmma that reads registers written since the last fence, then the wgmmas, then
//   wgmma_commit_group_sync_aligned() and wgmma_wait_group_sync_aligned<0>() before reading D.
//   Shared memory written with ordinary stores needs fence_proxy_async_shared_cta() in every
//   writing thread and a barrier before the wgmma reads it. Compiled and disassembled to
//   QGMMA (docs/target-notes.md §7); its layout is checked by tests/gpu/test_moe_fragments_gpu.cpp.
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/sync.hpp"
namespace netra::sm90a_isa {

/// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32: d = A(16x32) * B(32x8) + c.
NETRA_DEVICE void mma_sync_aligned_m16n8k32_row_col_f32_e4m3_e4m3_f32(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2],
                                                                      const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

/// wgmma.fence.sync.aligned: orders register accesses before the following wgmma.mma_async.
NETRA_DEVICE void wgmma_fence_sync_aligned() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
/// wgmma.commit_group.sync.aligned: closes the group of wgmma.mma_async issued so far.
NETRA_DEVICE void wgmma_commit_group_sync_aligned() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
/// wgmma.wait_group.sync.aligned N: waits until at most N groups are pending.
template <u32 N> NETRA_DEVICE void wgmma_wait_group_sync_aligned() {
  static_assert(N <= 7, "netra::sm90a_isa::wgmma_wait_group_sync_aligned: N is a small immediate (0..7 here)");
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/// The 64-bit shared-memory matrix descriptor of wgmma (PTX ISA "Matrix Descriptor Format"):
/// bits 0..13 start address >> 4, 16..29 leading-dimension byte offset >> 4, 32..45
/// stride-dimension byte offset >> 4, 49..51 base offset, 62..63 swizzle (0: none).
/// Without swizzling the operand is a grid of core matrices of 8 rows x 16 bytes (each 128
/// contiguous bytes); for K-major operands the leading-dimension offset is the distance between
/// core matrices adjacent in K and the stride offset the distance between core matrices
/// adjacent in M/N.
NETRA_DEVICE u64 wgmma_descriptor_no_swizzle(u32 shared_address, u32 leading_byte_offset, u32 stride_byte_offset) {
  return (static_cast<u64>((shared_address >> 4) & 0x3FFFu)) | (static_cast<u64>((leading_byte_offset >> 4) & 0x3FFFu) << 16) |
         (static_cast<u64>((stride_byte_offset >> 4) & 0x3FFFu) << 32);
}

/// cvta.to.shared: the 32-bit shared-window address of a generic pointer into shared memory.
NETRA_DEVICE u32 shared_address_of(const void* generic) {
  u32 r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(generic));
  return r;
}

/// wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 with A from registers:
/// d(64x8) = A(64x32) * B(32x8) + (ScaleD ? d : 0). Per thread: a[4] (its warp's 16 rows),
/// d[4] = D items (row 16 * warp + g + 8 * (i >> 1), col 2t + (i & 1)).
template <bool AccumulateD>
NETRA_DEVICE void wgmma_mma_async_sync_aligned_m64n8k32_f32_e4m3_e4m3(float (&d)[4], const u32 (&a)[4], u64 b_descriptor) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %9, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1; }"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_descriptor), "r"(AccumulateD ? 1u : 0u)
      : "memory");
}

/// wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 with A from registers:
/// d(64x16) = A(64x32) * B(32x16) + (ScaleD ? d : 0). d[0..3] cover columns 0..7 and d[4..7]
/// columns 8..15 in the m64n8 item order.
template <bool AccumulateD>
NETRA_DEVICE void wgmma_mma_async_sync_aligned_m64n16k32_f32_e4m3_e4m3(float (&d)[8], const u32 (&a)[4], u64 b_descriptor) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %13, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, p, 1, 1; }"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_descriptor), "r"(AccumulateD ? 1u : 0u)
      : "memory");
}

/// wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 with A from registers (E4M3 converted
/// exactly to FP16 is its use here: every E4M3 value is an FP16 value):
/// d(64x16) = A(64x16) * B(16x16) + (ScaleD ? d : 0). Per thread a[4] = FP16 pairs of its warp's
/// 16 rows in the m16n8k16 A layout (a[0]: row g, k 2t, 2t + 1; a[1]: row g + 8, same k; a[2],
/// a[3]: k + 8), B K-major through the descriptor (core matrices of 8 rows x 8 FP16), d as for
/// m64n16k32. Layout checked by tests/gpu/test_moe_fragments_gpu.cpp; its accumulation of a
/// 128-K scale block stays within the expert contracts' FP32 bound where FP8 wgmma does not
/// (bench/fp8_accumulation.py, bench/results/evidence/fp8_accumulation_h200.json).
template <bool AccumulateD>
NETRA_DEVICE void wgmma_mma_async_sync_aligned_m64n16k16_f32_f16_f16(float (&d)[8], const u32 (&a)[4], u64 b_descriptor) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %13, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, p, 1, 1, 0; }"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_descriptor), "r"(AccumulateD ? 1u : 0u)
      : "memory");
}

}  // namespace netra::sm90a_isa
#endif  // NETRA_COMPILER_CUDA
