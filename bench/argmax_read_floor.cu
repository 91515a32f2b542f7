// argmax-read-floor: the measured floor under any single-pass argmax on this GPU. A kernel that
// only reads the same [M, 248320] FP32 rows (16-byte streaming loads, one warp per chunk, the
// same grid shape as argmax stage one) and writes one max per chunk — no index, no second stage —
// timed exactly as netra-bench-argmax times argmax: a burst of back-to-back calls, each reading its
// own input set (the sets cover 3x the L2), captured once into a graph and replayed, median of 30.
// Each launch uses programmatic dependent launch, like netra's stages. No exact argmax that reads
// every value after its producer completes can beat this on the same GPU. Variants: chunks per
// row (how the row is split over warps: 128 to 1280), and launches without programmatic dependent
// launch (128 chunks); and two one-kernel shapes that split a row over a few wide blocks
// ("read_max_wide": 8 or 16 blocks of 512 or 1024 threads per row, every load of a thread issued
// first, one max per block) and the same with the blocks of a row in one thread-block cluster
// whose block 0 reduces the blocks' maxima through distributed shared memory ("read_max_cluster":
// an exact argmax could finish in one kernel that way, without a key workspace).
// Prints one JSON object per (kernel, chunks, threads, rows, pdl) on stdout.
//
// Mapping: grid (chunks / 4, rows), 128 threads; warp w of block (x, r) reads chunk 4x + w of row r:
// 16-byte vectors [c * V, min((c + 1) * V, N / 4)), V = ceil(N / 4 / chunks), lane l takes
// vectors l, l + 32, ...; all loads issued before the first use.
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

using floor_bench::check;

constexpr int n = 248320;
constexpr int vectors_per_row = n / 4;
constexpr int warps_per_block = 4;

template <int Chunks> __global__ void __launch_bounds__(128) read_max(const float4* x, float* out) {
  constexpr int chunk_vectors = (vectors_per_row + Chunks - 1) / Chunks;
  constexpr int per_lane = (chunk_vectors + 31) / 32;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int lane = threadIdx.x % 32;
  const int chunk = blockIdx.x * warps_per_block + threadIdx.x / 32;
  const int first = chunk * chunk_vectors;
  const int end = min(first + chunk_vectors, vectors_per_row);
  const float4* row = x + static_cast<long>(blockIdx.y) * vectors_per_row;
  float4 v[per_lane];
#pragma unroll
  for (int k = 0; k < per_lane; ++k)
    if (first + lane + 32 * k < end) v[k] = __ldcs(row + first + lane + 32 * k);
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < per_lane; ++k)
    if (first + lane + 32 * k < end) m = fmaxf(fmaxf(fmaxf(m, v[k].x), fmaxf(v[k].y, v[k].z)), v[k].w);
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, mask));
  if (lane == 0) out[blockIdx.y * Chunks + chunk] = m;
}

/// Blocks (x, r), x < Blocks, of Threads threads: block x reads vectors [x V, min((x + 1) V, N / 4))
/// of row r, V = ceil(N / 4 / Blocks), thread t takes vectors t, t + Threads, ... (all loads first);
/// warp maxima meet in shared memory. Cluster: the row's Blocks blocks form one cluster and block 0
/// takes the max of their maxima (written into its shared memory by each block) and stores it.
template <int Blocks, int Threads, bool Cluster> __global__ void __launch_bounds__(Threads) read_max_wide(const float4* x, float* out) {
  constexpr int block_vectors = (vectors_per_row + Blocks - 1) / Blocks;
  constexpr int per_thread = (block_vectors + Threads - 1) / Threads;
  __shared__ float warp_max[Threads / 32];
  __shared__ float block_max[Blocks];
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int first = blockIdx.x * block_vectors;
  const int end = min(first + block_vectors, vectors_per_row);
  const float4* row = x + static_cast<long>(blockIdx.y) * vectors_per_row;
  float4 v[per_thread];
#pragma unroll
  for (int k = 0; k < per_thread; ++k)
    if (first + threadIdx.x + Threads * k < end) v[k] = __ldcs(row + first + threadIdx.x + Threads * k);
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < per_thread; ++k)
    if (first + threadIdx.x + Threads * k < end) m = fmaxf(fmaxf(fmaxf(m, v[k].x), fmaxf(v[k].y, v[k].z)), v[k].w);
  auto warp_reduce = [](float a) {
#pragma unroll
    for (int mask = 16; mask > 0; mask /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, mask));
    return a;
  };
  m = warp_reduce(m);
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) m = warp_reduce(threadIdx.x < Threads / 32 ? warp_max[threadIdx.x] : -INFINITY);
  if constexpr (Cluster) {
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    if (threadIdx.x == 0) *cluster.map_shared_rank(&block_max[cluster.block_rank()], 0) = m;
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x < 32) {
      m = warp_reduce(threadIdx.x < Blocks ? block_max[threadIdx.x] : -INFINITY);
      if (threadIdx.x == 0) out[blockIdx.y] = m;
    }
  } else if (threadIdx.x == 0) {
    out[blockIdx.y * Blocks + blockIdx.x] = m;
  }
}

/// One variant: `kernel` on grid (blocks_per_row, rows) of `threads` threads (clusters of
/// blocks_per_row blocks when `cluster`), timed as described above; one JSON line unless `print` is false.
using read_kernel = void (*)(const float4*, float*);
void measure(const char* name, read_kernel kernel, int blocks_per_row, int chunks, int threads, bool cluster, int rows, bool pdl, int l2,
             const std::vector<float>& host, bool print = true) {
  const size_t bytes = static_cast<size_t>(rows) * n * 4;
  const int sets = static_cast<int>(std::max<size_t>(2, (3ull * l2 + bytes - 1) / bytes));
  std::vector<float*> in(sets), out(sets);
  for (int s = 0; s < sets; ++s) {
    check(cudaMalloc(&in[s], bytes), "cudaMalloc");
    check(cudaMalloc(&out[s], static_cast<size_t>(rows) * chunks * 4), "cudaMalloc");
    check(cudaMemcpy(in[s], host.data(), bytes, cudaMemcpyHostToDevice), "upload");
  }
  if (cluster && blocks_per_row > 8) check(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), "cluster size");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaLaunchAttribute attributes[2]{};
  int count = 0;
  if (pdl) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count++].val.clusterDim = {static_cast<unsigned>(blocks_per_row), 1, 1};
  }
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks_per_row, rows, 1);
  config.blockDim = dim3(threads, 1, 1);
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = count;
  auto burst = [&] {
    for (int s = 0; s < sets; ++s)
      check(cudaLaunchKernelEx(&config, kernel, static_cast<const float4*>(static_cast<const void*>(in[s])), out[s]), "launch");
  };
  const double us = floor_bench::graph_median_us(stream, sets, burst);
  if (print)
    std::printf("{\"kernel\": \"%s\", \"chunks\": %d, \"threads\": %d, \"rows\": %d, \"pdl\": %s, \"input_sets\": %d, \"bytes\": %zu, "
                "\"graph_us\": %.3f}\n",
                name, chunks, threads, rows, pdl ? "true" : "false", sets, bytes, us);
  cudaStreamDestroy(stream);
  for (int s = 0; s < sets; ++s) cudaFree(in[s]), cudaFree(out[s]);
}

/// The warp-per-chunk variant with Chunks chunks per row.
template <int Chunks> void measure_chunks(int rows, bool pdl, int l2, const std::vector<float>& host, bool print = true) {
  measure("read_max", read_max<Chunks>, Chunks / warps_per_block, Chunks, 32 * warps_per_block, false, rows, pdl, l2, host, print);
}
/// A wide-block variant: Blocks blocks of Threads threads per row, in one cluster or not.
template <int Blocks, int Threads, bool Cluster> void measure_wide(int rows, int l2, const std::vector<float>& host) {
  measure(Cluster ? "read_max_cluster" : "read_max_wide", read_max_wide<Blocks, Threads, Cluster>, Blocks, Blocks, Threads, Cluster,
          rows, true, l2, host);
}

}  // namespace

int main() {
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  std::vector<float> host(static_cast<size_t>(128) * n);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((i * 2654435761u) % 1000003u);
  measure_chunks<128>(16, true, l2, host, false);  // warm-up, not reported
  for (int rows : {1, 16, 64, 128}) {
    measure_chunks<128>(rows, true, l2, host);
    measure_chunks<128>(rows, false, l2, host);
    measure_chunks<256>(rows, true, l2, host);
    measure_chunks<320>(rows, true, l2, host);
    measure_chunks<512>(rows, true, l2, host);
    measure_chunks<640>(rows, true, l2, host);
    measure_chunks<1280>(rows, true, l2, host);
    measure_wide<8, 1024, false>(rows, l2, host);
    measure_wide<16, 512, false>(rows, l2, host);
    measure_wide<8, 1024, true>(rows, l2, host);
    measure_wide<16, 1024, true>(rows, l2, host);
    measure_wide<16, 512, true>(rows, l2, host);
  }
  return 0;
}
