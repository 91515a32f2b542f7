// Test kernels for tests/gpu/test_moe_fragments_gpu.cpp (compiled to an sm_90a cubin by
// tests/moe_experts.cmake): the DSL matrix fragments on the H200.
//   netra_test_mma_m16n8k32: one warp; lane l reads its A (4 words), B (2 words) and C (4 floats)
//     registers from a[l], b[l], c[l] (the host filled them with the traits' maps), runs
//     netra::mma<mma_m16n8k32_e4m3> and writes its D registers to d[l].
//   netra_test_wgmma_m64nNk32 (N = 8, 16): one warpgroup; thread i reads its A words from a[i];
//     B (N x 32, K-major) is staged from b_smem_image (the host laid it out as core matrices of
//     8 rows x 16 bytes: core matrix (n / 8, k / 16) at offset (n / 8) * sbo + (k / 16) * lbo)
//     into shared memory; one wgmma with the descriptor (lbo, sbo); thread i writes its D items.
//   netra_test_wgmma_m64n16k16_f16: one warpgroup; thread i reads its 4 FP16-pair A words from
//     a[i] (its warp's 16 rows in the m16n8k16 A layout), B (16 x 16 FP16, K-major) staged like
//     the E4M3 case (core matrix (n / 8, k / 8) of 8 rows x 8 values at (n / 8) * sbo + (k / 8) *
//     lbo); one wgmma.m64n16k16.f32.f16.f16; thread i writes its 8 D items.
//   netra_test_bulk_copy: one workgroup of 128 threads, the gate_up staging pattern of
//     dsl/bulk_copy.hpp: LDS rows of 2048 + 64 bytes pre-filled with 0xA5, thread 0 initialises
//     the barrier, a workgroup barrier, thread 0 announces rows x 2048 bytes, lanes 0 .. rows / 4
//     - 1 of each warp copy one row (source row stride `stride` bytes), every thread waits, then
//     the workgroup writes the whole LDS image (padding included) to out.
//   netra_test_cluster_push: one cluster of C workgroups of 32 threads (dsl/cluster.hpp, as the
//     cluster router pushes its logits): thread 0 initialises its barrier for C x 16 bytes, every
//     thread arrives, waits; lane j < C pushes {rank, j, 0xC0DE, 100 rank + j} into workgroup j's
//     slot `rank`; after its own barrier's wait lane j writes slot j to out[rank][j].
#include "netra/dsl/arch/sm90a/mma.hpp"
#include "netra/dsl/bulk_copy.hpp"
#include "netra/dsl/cluster.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/dsl/matrix_fragment.hpp"

using namespace netra;

extern "C" __global__ void netra_test_mma_m16n8k32(const u32* a, const u32* b, const float* c, float* d) {
  const u32 l = threadIdx.x;
  const u32 ra[4] = {a[4 * l], a[4 * l + 1], a[4 * l + 2], a[4 * l + 3]};
  const u32 rb[2] = {b[2 * l], b[2 * l + 1]};
  const float rc[4] = {c[4 * l], c[4 * l + 1], c[4 * l + 2], c[4 * l + 3]};
  float rd[4];
  mma<mma_m16n8k32_e4m3>(rd, ra, rb, rc);
  for (int i = 0; i < 4; ++i) d[4 * l + i] = rd[i];
}

/// One warpgroup, one wgmma issued by `issue(d, a, descriptor)` with A from a[] and B staged from
/// the host's shared-memory image; thread t writes its Items D items to d[Items t ..].
template <u32 Items, class Issue>
__device__ void wgmma_test(const u32* a, const u8* b_smem_image, u32 image_bytes, u32 lbo, u32 sbo, float* d, Issue issue) {
  __shared__ alignas(128) u8 smem[1024];
  const u32 t = threadIdx.x;
  for (u32 i = t; i < image_bytes; i += 128) smem[i] = b_smem_image[i];
  sm90a_isa::fence_proxy_async_shared_cta();
  __syncthreads();
  const u32 ra[4] = {a[4 * t], a[4 * t + 1], a[4 * t + 2], a[4 * t + 3]};
  const u64 desc = sm90a_isa::wgmma_descriptor_no_swizzle(sm90a_isa::shared_address_of(smem), lbo, sbo);
  float rd[Items];
  for (u32 i = 0; i < Items; ++i) rd[i] = 0.0f;
  sm90a_isa::wgmma_fence_sync_aligned();
  issue(rd, ra, desc);
  sm90a_isa::wgmma_commit_group_sync_aligned();
  sm90a_isa::wgmma_wait_group_sync_aligned<0>();
  for (u32 i = 0; i < Items; ++i) d[Items * t + i] = rd[i];
}

extern "C" __global__ void netra_test_wgmma_m64n8k32(const u32* a, const u8* b, u32 bytes, u32 lbo, u32 sbo, float* d) {
  wgmma_test<4>(a, b, bytes, lbo, sbo, d, [](float (&rd)[4], const u32 (&ra)[4], u64 desc) {
    sm90a_isa::wgmma_mma_async_sync_aligned_m64n8k32_f32_e4m3_e4m3<false>(rd, ra, desc);
  });
}
extern "C" __global__ void netra_test_wgmma_m64n16k32(const u32* a, const u8* b, u32 bytes, u32 lbo, u32 sbo, float* d) {
  wgmma_test<8>(a, b, bytes, lbo, sbo, d, [](float (&rd)[8], const u32 (&ra)[4], u64 desc) {
    sm90a_isa::wgmma_mma_async_sync_aligned_m64n16k32_f32_e4m3_e4m3<false>(rd, ra, desc);
  });
}
extern "C" __global__ void netra_test_wgmma_m64n16k16_f16(const u32* a, const u8* b, u32 bytes, u32 lbo, u32 sbo, float* d) {
  wgmma_test<8>(a, b, bytes, lbo, sbo, d, [](float (&rd)[8], const u32 (&ra)[4], u64 desc) {
    sm90a_isa::wgmma_mma_async_sync_aligned_m64n16k16_f32_f16_f16<false>(rd, ra, desc);
  });
}

extern "C" __global__ void netra_test_bulk_copy(const u8* src, u32 stride, u32 rows, u8* out) {
  constexpr u32 row_bytes = 2048, lds_stride = row_bytes + 64, max_rows = 16;
  __shared__ alignas(16) u8 image[max_rows][lds_stride];
  __shared__ lds_copy_barrier ready;
  using copy = bulk_copy_ops<sm90a>;
  const u32 t = threadIdx.x, lane = t % 32, w = t / 32;
  for (u32 i = t; i < max_rows * lds_stride; i += 128) image[i / lds_stride][i % lds_stride] = 0xA5;
  if (t == 0) copy::init(ready);
  workgroup_barrier<sm90a>();
  if (t == 0) copy::expect_bytes(ready, rows * row_bytes);
  const u32 per_wave = rows / 4, row = w * per_wave + lane;
  if (lane < per_wave) copy::copy(&image[row][0], src + static_cast<u64>(row) * stride, row_bytes, ready);
  copy::wait(ready);
  for (u32 i = t; i < max_rows * lds_stride; i += 128) out[i] = image[i / lds_stride][i % lds_stride];
}

extern "C" __global__ void netra_test_cluster_push(u32x4* out) {
  constexpr u32 max_cluster = 16;
  __shared__ u32x4 slots[max_cluster];
  __shared__ lds_copy_barrier arrived;
  using cluster = cluster_ops<sm90a>;
  using copy = bulk_copy_ops<sm90a>;
  const u32 lane = threadIdx.x, rank = cluster::rank(), size = gridDim.x;
  if (lane == 0) {
    copy::init(arrived);
    copy::expect_bytes(arrived, size * 16);
  }
  cluster::arrive();
  cluster::wait();
  if (lane < size) cluster::push_16B(&slots[rank], lane, u32x4{rank, lane, 0xC0DEu, 100 * rank + lane}, arrived);
  copy::wait(arrived);
  if (lane < size) out[rank * max_cluster + lane] = slots[lane];
}
