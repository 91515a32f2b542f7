// fp8-block-sum: netra's own FP8 matrix instructions on one 128-K scale block, for
// bench/fp8_accumulation.py (which builds the inputs, runs cuBLASLt on the same ones and compares
// every result with the exact sum). D(64 x 16) = A(64 x 128) * B(128 x 16), E4M3, unit scales,
// FP32 out, computed five ways on one warpgroup (thread t = 32 w + l, warp w owns rows 16w .. 16w
// + 15 of A in the m16n8k32 A layout, dsl/matrix_fragment.hpp):
//   mma_sync       — what the shipped sm90a expert kernels do per block: four chained
//                    mma.sync.m16n8k32 e4m3 per n8 tile (ptxas: FP16 HMMA, FP32 accumulation)
//   wgmma_chain4   — four wgmma.m64n16k32 e4m3 accumulating in the tensor core (as cuBLASLt
//                    does within a block)
//   wgmma_chain2   — two chains of two, their results added in FP32 registers
//   wgmma_chain1   — each k32 wgmma alone (scale-d 0), the four results added in FP32 registers
//                    in K order: promotion to FP32 after every instruction
//   wgmma_f16      — the E4M3 values converted (exactly) to FP16, eight chained
//                    wgmma.m64n16k16.f32.f16.f16: the FP16 tensor-core path, as mma.sync's
//                    emulation, on the warpgroup instruction
// B is staged once into shared memory as four k32 chunks of no-swizzle core matrices (8 rows x 16
// bytes; LBO 128 = along K, SBO 256 = along N: the layout test_moe_fragments_gpu checks; for FP16
// eight k16 chunks, core matrices of 8 rows x 8 values, the same offsets).
// usage: fp8-block-sum IN OUT — IN holds A (64 x 128 bytes, row-major) then B (16 x 128 bytes,
// row n = column n of B, K contiguous); OUT receives the five results, each 64 x 16 FP32 row-major,
// in the order above.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"
#include "netra/dsl/arch/sm90a/mma.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/matrix_fragment.hpp"

#include <cstdio>
#include <vector>

namespace {

using namespace netra;
using S = mma_m16n8k32_e4m3;
constexpr int M = 64, K = 128, N = 16, chunks = K / 32;

/// The 4 A words of thread (warp w, lane l) for k32 chunk c.
__device__ void a_words(const u8* a, u32 w, u32 l, u32 c, u32 (&ra)[4]) {
  for (u32 i = 0; i < 4; ++i) ra[i] = 0;
  for (u32 i = 0; i < S::a_bytes; ++i) {
    const fragment_element e = S::a_element(l, i);
    ra[i / 4] |= static_cast<u32>(a[(16 * w + e.row) * K + 32 * c + e.col]) << (8 * (i % 4));
  }
}

template <int Chain> __global__ void wgmma_block(const u8* a, const u8* b, float* d) {
  __shared__ alignas(128) u8 image[chunks][512];
  const u32 t = threadIdx.x, w = t / 32, l = t % 32;
  for (u32 i = t; i < N * K; i += 128) {
    const u32 n = i / K, k = i % K, kk = k % 32;
    image[k / 32][(n / 8) * 256 + (kk / 16) * 128 + (n % 8) * 16 + kk % 16] = b[i];
  }
  sm90a_isa::fence_proxy_async_shared_cta();
  __syncthreads();
  float total[8], part[8];
  for (u32 c = 0; c < chunks; ++c) {
    u32 ra[4];
    a_words(a, w, l, c, ra);
    const u64 desc = sm90a_isa::wgmma_descriptor_no_swizzle(sm90a_isa::shared_address_of(image[c]), 128, 256);
    sm90a_isa::wgmma_fence_sync_aligned();
    if (c % Chain == 0) sm90a_isa::wgmma_mma_async_sync_aligned_m64n16k32_f32_e4m3_e4m3<false>(part, ra, desc);
    else sm90a_isa::wgmma_mma_async_sync_aligned_m64n16k32_f32_e4m3_e4m3<true>(part, ra, desc);
    sm90a_isa::wgmma_commit_group_sync_aligned();
    sm90a_isa::wgmma_wait_group_sync_aligned<0>();
    if (c % Chain == Chain - 1)
      for (u32 i = 0; i < 8; ++i) total[i] = c == Chain - 1 ? part[i] : __fadd_rn(total[i], part[i]);
  }
  const u32 g = l >> 2, q = l & 3;
  for (u32 i = 0; i < 8; ++i) d[(16 * w + g + 8 * ((i >> 1) & 1)) * N + 8 * (i >> 2) + 2 * q + (i & 1)] = total[i];
}

__device__ u32 f16x2_of_e4m3(u8 lo, u8 hi) {
  return static_cast<u32>(__half_as_ushort(__float2half_rn(f32_from_e4m3(lo)))) |
         (static_cast<u32>(__half_as_ushort(__float2half_rn(f32_from_e4m3(hi)))) << 16);
}

__global__ void wgmma_f16_block(const u8* a, const u8* b, float* d) {
  constexpr u32 k16_chunks = K / 16;
  __shared__ alignas(128) __half image[k16_chunks][256];
  const u32 t = threadIdx.x, w = t / 32, l = t % 32, g = l >> 2, q = l & 3;
  for (u32 i = t; i < N * K; i += 128) {
    const u32 n = i / K, k = i % K, kk = k % 16;
    image[k / 16][(n / 8) * 128 + (kk / 8) * 64 + (n % 8) * 8 + kk % 8] = __float2half_rn(f32_from_e4m3(b[i]));
  }
  sm90a_isa::fence_proxy_async_shared_cta();
  __syncthreads();
  float acc[8];
  for (u32 c = 0; c < k16_chunks; ++c) {
    const u8* r0 = a + (16 * w + g) * K + 16 * c + 2 * q;
    const u8* r8 = r0 + 8 * K;
    const u32 ra[4] = {f16x2_of_e4m3(r0[0], r0[1]), f16x2_of_e4m3(r8[0], r8[1]), f16x2_of_e4m3(r0[8], r0[9]), f16x2_of_e4m3(r8[8], r8[9])};
    const u64 desc = sm90a_isa::wgmma_descriptor_no_swizzle(sm90a_isa::shared_address_of(image[c]), 128, 256);
    sm90a_isa::wgmma_fence_sync_aligned();
    if (c == 0) sm90a_isa::wgmma_mma_async_sync_aligned_m64n16k16_f32_f16_f16<false>(acc, ra, desc);
    else sm90a_isa::wgmma_mma_async_sync_aligned_m64n16k16_f32_f16_f16<true>(acc, ra, desc);
    sm90a_isa::wgmma_commit_group_sync_aligned();
    sm90a_isa::wgmma_wait_group_sync_aligned<0>();
  }
  for (u32 i = 0; i < 8; ++i) d[(16 * w + g + 8 * ((i >> 1) & 1)) * N + 8 * (i >> 2) + 2 * q + (i & 1)] = acc[i];
}

__global__ void mma_sync_block(const u8* a, const u8* b, float* d) {
  const u32 t = threadIdx.x, w = t / 32, l = t % 32;
  for (u32 tile = 0; tile < N / 8; ++tile) {
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (u32 c = 0; c < chunks; ++c) {
      u32 ra[4], rb[2] = {0, 0};
      a_words(a, w, l, c, ra);
      for (u32 i = 0; i < S::b_bytes; ++i) {
        const fragment_element e = S::b_element(l, i);
        rb[i / 4] |= static_cast<u32>(b[(8 * tile + e.col) * K + 32 * c + e.row]) << (8 * (i % 4));
      }
      mma<S>(acc, ra, rb, acc);
    }
    for (u32 i = 0; i < 4; ++i) {
      const fragment_element e = S::d_element(l, i);
      d[(16 * w + e.row) * N + 8 * tile + e.col] = acc[i];
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  using floor_bench::check;
  if (argc != 3) {
    std::fprintf(stderr, "usage: fp8-block-sum IN OUT\n");
    return 2;
  }
  std::vector<u8> host(M * K + N * K);
  FILE* in = std::fopen(argv[1], "rb");
  if (!in || std::fread(host.data(), 1, host.size(), in) != host.size()) {
    std::fprintf(stderr, "fp8-block-sum: cannot read %zu bytes from %s\n", host.size(), argv[1]);
    return 1;
  }
  std::fclose(in);
  constexpr int ways = 5;
  u8* dev_in = nullptr;
  float* dev_out = nullptr;
  check(cudaMalloc(&dev_in, host.size()), "cudaMalloc");
  check(cudaMalloc(&dev_out, ways * M * N * sizeof(float)), "cudaMalloc");
  check(cudaMemcpy(dev_in, host.data(), host.size(), cudaMemcpyHostToDevice), "upload");
  const u8 *a = dev_in, *b = dev_in + M * K;
  mma_sync_block<<<1, 128>>>(a, b, dev_out);
  wgmma_block<4><<<1, 128>>>(a, b, dev_out + 1 * M * N);
  wgmma_block<2><<<1, 128>>>(a, b, dev_out + 2 * M * N);
  wgmma_block<1><<<1, 128>>>(a, b, dev_out + 3 * M * N);
  wgmma_f16_block<<<1, 128>>>(a, b, dev_out + 4 * M * N);
  check(cudaGetLastError(), "launch");
  std::vector<float> out(ways * M * N);
  check(cudaMemcpy(out.data(), dev_out, ways * M * N * sizeof(float), cudaMemcpyDeviceToHost), "download");
  FILE* o = std::fopen(argv[2], "wb");
  if (!o || std::fwrite(out.data(), sizeof(float), ways * M * N, o) != static_cast<size_t>(ways * M * N)) {
    std::fprintf(stderr, "fp8-block-sum: cannot write %s\n", argv[2]);
    return 1;
  }
  std::fclose(o);
  return 0;
}
