// fp8-matrix-rate: how many FP8 weight bytes per second the H200's SMs can push through each matrix
// path the sm90a decode expert kernels could use, with the weights already in shared memory (where
// gate_up and down stage them) and the activations fixed: the compute ceiling a kernel streaming
// weights from DRAM has to stay above (the DRAM copy bandwidth, about 4.2 TB/s here).
// Paths (one 16 KiB weight tile per workgroup of 4 warps, every warp reading 16-byte pieces, the
// activation operand of 16 columns fixed, each workgroup sweeping its tile `iterations` times):
//   mma_sync_e4m3      mma.sync m16n8k32 e4m3 x 2 n8 tiles (the shipped kernels' instruction; ptxas
//                      expands it to FP8 -> FP16 conversions and two HMMA each; the activations
//                      are loop-invariant here, so their conversions leave the loop: H200 SASS
//                      20 F2FP per 4 instructions, weights converted once for both tiles)
//   The wgmma paths wait for each instruction group before the next (no pipelining across steps).
//   cvt_mma_sync_f16   the weights converted once per piece (cvt.rn.f16x2.e4m3x2), the activations
//                      kept in FP16, mma.sync m16n8k16 f16 x 2 n8 tiles (the same arithmetic)
//   wgmma_f16          the weights converted in registers, wgmma m64n16k16 f16 with A from
//                      registers and the FP16 activations in shared memory (within the contract:
//                      bench/fp8_accumulation.py)
//   wgmma_e4m3         wgmma m64n16k32 e4m3 with A from registers, no conversion (outside the
//                      contract's accumulation bound: the upper line, not a candidate)
// Prints one JSON object per (path, workgroups per SM): weight bytes per second over all SMs.
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"
#include "netra/dsl/arch/sm90a/mma.hpp"

#include <cstdio>
#include <vector>

namespace {

using namespace netra;
constexpr u32 tile_bytes = 16384, warp_bytes = tile_bytes / 4, piece_bytes = 512;  // a warp's 16 rows x 32 K per step

__device__ u32 cvt_f16x2_e4m3x2(u16 v) {
  u32 r;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"(v));
  return r;
}
__device__ void mma_f16(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

enum class path { mma_sync_e4m3, cvt_mma_sync_f16, wgmma_f16, wgmma_e4m3 };
const char* name(path p) {
  return p == path::mma_sync_e4m3 ? "mma_sync_e4m3" : p == path::cvt_mma_sync_f16 ? "cvt_mma_sync_f16" : p == path::wgmma_f16 ? "wgmma_f16" : "wgmma_e4m3";
}

template <path P> __global__ void __launch_bounds__(128) sweep(const u8* weights, u32 iterations, float* sink) {
  __shared__ alignas(128) u8 tile[tile_bytes];
  __shared__ alignas(128) u8 act[1024];  // 16 columns x 32 K (E4M3) or x 16 K (FP16), core-matrix layout
  const u32 t = threadIdx.x, w = t / 32, l = t % 32;
  for (u32 i = t; i < tile_bytes / 16; i += 128) reinterpret_cast<uint4*>(tile)[i] = reinterpret_cast<const uint4*>(weights)[i];
  for (u32 i = t; i < 1024; i += 128) act[i] = static_cast<u8>(0x30 + (i % 7));  // small finite values in either reading
  sm90a_isa::fence_proxy_async_shared_cta();
  __syncthreads();
  const u32 b8[2] = {0x38383838u + l, 0x30303030u + l};  // E4M3 activations of one n8 tile
  const u32 b16[2] = {0x3C003C00u, 0x38003800u};          // FP16 activations of one n8 tile
  float d[2][4] = {};
  float dw[8] = {};
  const u64 desc = sm90a_isa::wgmma_descriptor_no_swizzle(sm90a_isa::shared_address_of(act), 128, 256);
  for (u32 it = 0; it < iterations; ++it) {
#pragma unroll 2
    for (u32 step = 0; step < warp_bytes / piece_bytes; ++step) {
      const uint4 v = *reinterpret_cast<const uint4*>(tile + w * warp_bytes + step * piece_bytes + 16 * l);
      const u32 a[4] = {v.x, v.y, v.z, v.w};
      if constexpr (P == path::mma_sync_e4m3) {
        for (u32 n = 0; n < 2; ++n) sm90a_isa::mma_sync_aligned_m16n8k32_row_col_f32_e4m3_e4m3_f32(d[n], a, b8, d[n]);
      } else if constexpr (P == path::cvt_mma_sync_f16) {
        u32 h[8];
        for (u32 i = 0; i < 4; ++i) h[2 * i] = cvt_f16x2_e4m3x2(static_cast<u16>(a[i])), h[2 * i + 1] = cvt_f16x2_e4m3x2(static_cast<u16>(a[i] >> 16));
        const u32 lo[4] = {h[0], h[1], h[2], h[3]}, hi[4] = {h[4], h[5], h[6], h[7]};
        for (u32 n = 0; n < 2; ++n) mma_f16(d[n], lo, b16), mma_f16(d[n], hi, b16);
      } else if constexpr (P == path::wgmma_f16) {
        u32 h[8];
        for (u32 i = 0; i < 4; ++i) h[2 * i] = cvt_f16x2_e4m3x2(static_cast<u16>(a[i])), h[2 * i + 1] = cvt_f16x2_e4m3x2(static_cast<u16>(a[i] >> 16));
        const u32 lo[4] = {h[0], h[1], h[2], h[3]}, hi[4] = {h[4], h[5], h[6], h[7]};
        sm90a_isa::wgmma_fence_sync_aligned();
        sm90a_isa::wgmma_mma_async_sync_aligned_m64n16k16_f32_f16_f16<true>(dw, lo, desc);
        sm90a_isa::wgmma_mma_async_sync_aligned_m64n16k16_f32_f16_f16<true>(dw, hi, desc);
        sm90a_isa::wgmma_commit_group_sync_aligned();
        sm90a_isa::wgmma_wait_group_sync_aligned<0>();
      } else {
        sm90a_isa::wgmma_fence_sync_aligned();
        sm90a_isa::wgmma_mma_async_sync_aligned_m64n16k32_f32_e4m3_e4m3<true>(dw, a, desc);
        sm90a_isa::wgmma_commit_group_sync_aligned();
        sm90a_isa::wgmma_wait_group_sync_aligned<0>();
      }
    }
  }
  float s = 0.0f;
  for (u32 n = 0; n < 2; ++n)
    for (u32 i = 0; i < 4; ++i) s += d[n][i];
  for (u32 i = 0; i < 8; ++i) s += dw[i];
  sink[blockIdx.x * 128 + t] = s;
}

template <path P> void measure(int sms, int per_sm, const u8* weights, float* sink) {
  const u32 iterations = 4000;
  const int grid = sms * per_sm;
  floor_bench::check(cudaFuncSetAttribute(sweep<P>, cudaFuncAttributePreferredSharedMemoryCarveout, 100), "carveout");
  sweep<P><<<grid, 128>>>(weights, 16, sink);  // warm
  floor_bench::check(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> ms;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(start);
    sweep<P><<<grid, 128>>>(weights, iterations, sink);
    cudaEventRecord(stop);
    floor_bench::check(cudaEventSynchronize(stop), "sweep");
    float m = 0;
    cudaEventElapsedTime(&m, start, stop);
    ms.push_back(m);
  }
  const double bytes = static_cast<double>(grid) * tile_bytes * iterations;
  std::printf("{\"path\": \"%s\", \"workgroups_per_sm\": %d, \"warps_per_sm\": %d, \"weight_bytes_per_s\": %.4e}\n", name(P), per_sm, 4 * per_sm,
              bytes / (floor_bench::median(ms) * 1e-3));
  std::fflush(stdout);
}

}  // namespace

int main() {
  int sms = 0;
  floor_bench::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  u8* weights = nullptr;
  float* sink = nullptr;
  floor_bench::check(cudaMalloc(&weights, tile_bytes), "cudaMalloc");
  floor_bench::check(cudaMalloc(&sink, sizeof(float) * 128 * sms * 8), "cudaMalloc");
  std::vector<u8> host(tile_bytes);
  for (u32 i = 0; i < tile_bytes; ++i) host[i] = static_cast<u8>(((i * 2654435761u) >> 13) & 0x77);  // finite, no NaN encodings
  floor_bench::check(cudaMemcpy(weights, host.data(), tile_bytes, cudaMemcpyHostToDevice), "upload");
  for (int per_sm : {2, 4, 8}) {
    measure<path::mma_sync_e4m3>(sms, per_sm, weights, sink);
    measure<path::cvt_mma_sync_f16>(sms, per_sm, weights, sink);
    measure<path::wgmma_f16>(sms, per_sm, weights, sink);
    measure<path::wgmma_e4m3>(sms, per_sm, weights, sink);
  }
  return 0;
}
