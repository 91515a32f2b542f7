// lab/gdn/decode_access_floor.cu — the state-traffic floor of the one-token decode core's access
// pattern (not run yet). The decode core (contracts/gdn/decode.hpp) measured 2.2x its state-bytes
// roofline with every mapping candidate (bench/results/gdn_h200.json, decode records), while the
// replay's memory floor (bench/gdn_floor.cu: consecutive 16-byte vectors per thread) moves the same
// state bytes at the roofline. Every map gives a lane 32 consecutive rows of a column (128 B FP32,
// 64 B BF16), so a warp's 16-byte access touches 32 (FP32) or 16 (BF16) separate 128-byte lines.
// This program moves only the state, read then written in place, on the default decode grid
// (16, 32, B) of 32-thread workgroups (the warp's 8 columns: 1024 x state-bytes contiguous), in two
// patterns of the same bytes:
//   lane_rows:  the kernel's — lane l loads its column l % 8, rows 32 (l / 8) .. + 31, 16 B at a time;
//   coalesced:  lane l loads 16-byte vectors l, l + 32, ... of the warp's block.
// Timed as bench/gdn_floor.cu: a burst over pools rotated past 3x the L2, graph-replayed, median of
// 30 (bench/cuda_graph_timing.cuh). One JSON line per (pattern, storage, B).
// Build: nvcc -O3 -std=c++17 -arch=sm_90a -Ibench lab/gdn/decode_access_floor.cu -o gdn-decode-access-floor
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#include "cuda_graph_timing.cuh"

namespace {
constexpr int HV = 32, V = 128, K = 128, columns = 8;
constexpr double l2 = 60.0 * 1024 * 1024;

template <int StateBytes, bool Coalesced> __global__ void __launch_bounds__(32) state_read_write(uint4* pool, unsigned key) {
  constexpr int column_vectors = K * StateBytes / 16, per_lane = columns * column_vectors / 32;  // per_lane: one row group of 32 rows
  const int lane = threadIdx.x;
  const size_t block = ((static_cast<size_t>(blockIdx.z) * HV + blockIdx.y) * V + blockIdx.x * columns) * column_vectors;
  auto at = [&](int v) { return Coalesced ? block + lane + 32 * v : block + (lane % columns) * column_vectors + (lane / columns) * per_lane + v; };
  uint4 s[per_lane];
#pragma unroll
  for (int v = 0; v < per_lane; ++v) s[v] = pool[at(v)];
#pragma unroll
  for (int v = 0; v < per_lane; ++v) pool[at(v)] = make_uint4(s[v].x ^ key, s[v].y, s[v].z, s[v].w);  // key 0: the pool stays as it was
}

template <int StateBytes, bool Coalesced> void run(cudaStream_t stream, int B) {
  const size_t slot = static_cast<size_t>(HV) * V * K * StateBytes, bytes = 2 * B * slot;
  const int n = std::max(2, std::min(64, static_cast<int>(3 * l2 / static_cast<double>(bytes)) + 1));
  uint4* pool = nullptr;
  floor_bench::check(cudaMalloc(&pool, n * B * slot), "cudaMalloc");
  floor_bench::check(cudaMemset(pool, 0x3C, n * B * slot), "cudaMemset");
  const dim3 grid(V / columns, HV, B);
  const double us = floor_bench::graph_median_us(stream, n, [&] {
    for (int i = 0; i < n; ++i) state_read_write<StateBytes, Coalesced><<<grid, 32, 0, stream>>>(pool + i * B * slot / 16, 0u);
  });
  floor_bench::check(cudaGetLastError(), "state_read_write");
  std::printf("{\"floor\": \"decode_state_rw\", \"pattern\": \"%s\", \"batch\": %d, \"state_dtype\": \"%s\", \"graph_us\": %.3f, \"bytes\": %zu}\n",
              Coalesced ? "coalesced" : "lane_rows", B, StateBytes == 4 ? "fp32" : "bf16", us, bytes);
  std::fflush(stdout);
  floor_bench::check(cudaFree(pool), "cudaFree");
}
}  // namespace

int main() {
  cudaStream_t stream;
  floor_bench::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  for (int B : {64, 128, 16, 1}) {
    run<4, false>(stream, B), run<4, true>(stream, B);
    run<2, false>(stream, B), run<2, true>(stream, B);
  }
  return 0;
}
