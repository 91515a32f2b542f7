// moe-grouped-floor: how fast netra's grouped experts (17..768 tokens) could be on this GPU if
// their kernels did no arithmetic — only the weight bytes of the distinct experts a call hits,
// read with the grouped kernels' grids (issue 29 §3: the floor at M = 64, 128, 768 before tuning).
// Per call, from ids drawn on the host per layer (8 distinct routed experts of 256 per token, the
// shared expert 256 as the 9th route), the plan's tiles: routes grouped by expert in ascending id,
// `tile` routes per tile (16 up to 256 tokens, 32 above: the sm90a configurations), then
//   grouped  gate_up's grid (4, max_expert_tiles): workgroup (g, j) of 256 threads reads W13 rows
//            [128 g, +128) and [512 + 128 g, +128) of tile j's expert over all of K (512 KiB), then
//            down's grid (RowTiles x KParts, max_expert_tiles): workgroup (x, j) reads W2 rows
//            [128 (x / KParts), +128), K part x % KParts (KParts 1: 64 KiB; 2 at M = 768, the
//            split-K pair); the workgroups past the call's tiles exit after reading the count, as
//            netra's do (programmatic dependent launch between the two, as netra's).
//   stream   the same distinct experts' bytes once each, 128 KiB per workgroup (the ideal grid:
//            no expert read twice, no tail of exiting workgroups), both matrices in one kernel;
//   gate_up, down  each of the grouped structure's two grids alone (the per-stage floors).
// Every workgroup folds its bytes into one word (xor), so nothing is skipped. 8 layers of 257
// experts rotate, so a burst of calls reads past the L2. Timing: bench/cuda_graph_timing.cuh
// (burst captured once, median of 30 replays, per call). One JSON object per (tokens, structure).
#include <cuda_runtime.h>

#include <cstdio>
#include <random>
#include <vector>

#include "cuda_graph_timing.cuh"

namespace {

constexpr int experts = 257, layers = 8;
constexpr size_t w13_bytes = 2u << 20, w2_bytes = 1u << 20, expert_bytes = w13_bytes + w2_bytes;
constexpr int max_tiles = 768 * 9 / 16 + 257;

struct call {
  const unsigned char* w13;  // [257][1024][2048]
  const unsigned char* w2;   // [257][2048][512]
  const int* tile_expert;    // [tiles]
  const int* tile_count;     // one word: the call's tiles
  const int* experts_hit;    // [distinct]
  unsigned* words;           // one per workgroup
};

__device__ __forceinline__ uint4 load_stream(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

/// Folds `rows` rows of `row_bytes` (stride `stride`) from `base` over the workgroup's 256 threads.
__device__ __forceinline__ unsigned fold_rows(const unsigned char* base, int rows, int row_bytes, size_t stride) {
  const int vectors = row_bytes / 16, total = rows * vectors;
  unsigned acc = 0;
#pragma unroll 8
  for (int i = threadIdx.x; i < total; i += 256) {
    const uint4 v = load_stream(base + static_cast<size_t>(i / vectors) * stride + 16 * (i % vectors));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  return acc;
}

__device__ __forceinline__ void keep(unsigned* words, unsigned acc) {
  __shared__ unsigned s;
  if (threadIdx.x == 0) s = 0;
  __syncthreads();
  atomicXor(&s, acc);
  __syncthreads();
  if (threadIdx.x == 0) words[blockIdx.y * gridDim.x + blockIdx.x] = s;
}

__global__ void __launch_bounds__(256) gate_up_floor(call c) {
  asm volatile("griddepcontrol.launch_dependents;");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int j = blockIdx.y;
  if (j >= *c.tile_count) return;
  const unsigned char* e = c.w13 + static_cast<size_t>(c.tile_expert[j]) * w13_bytes;
  const int g = blockIdx.x;
  const unsigned acc = fold_rows(e + static_cast<size_t>(128 * g) * 2048, 128, 2048, 2048) ^
                       fold_rows(e + static_cast<size_t>(512 + 128 * g) * 2048, 128, 2048, 2048);
  keep(c.words, acc);
}

template <int KParts> __global__ void __launch_bounds__(256) down_floor(call c) {
  asm volatile("griddepcontrol.launch_dependents;");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int j = blockIdx.y;
  if (j >= *c.tile_count) return;
  const int rows = 128, part = blockIdx.x % KParts, row0 = rows * (blockIdx.x / KParts);
  const unsigned char* e = c.w2 + static_cast<size_t>(c.tile_expert[j]) * w2_bytes;
  keep(c.words + max_tiles * 32, fold_rows(e + static_cast<size_t>(row0) * 512 + part * (512 / KParts), rows, 512 / KParts, 512));
}

/// The ideal grid: blockIdx.y = distinct expert, blockIdx.x = its 24 pieces of 128 KiB (16 of W13, 8 of W2).
__global__ void __launch_bounds__(256) stream_floor(call c) {
  const int e = c.experts_hit[blockIdx.y], piece = blockIdx.x;
  const unsigned char* base = piece < 16 ? c.w13 + static_cast<size_t>(e) * w13_bytes + (static_cast<size_t>(piece) << 17)
                                         : c.w2 + static_cast<size_t>(e) * w2_bytes + (static_cast<size_t>(piece - 16) << 17);
  keep(c.words, fold_rows(base, 64, 2048, 2048));
}

void launch(cudaLaunchConfig_t& cfg, cudaLaunchAttribute* attr, dim3 grid, cudaStream_t s) {
  cfg.gridDim = grid;
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
}

}  // namespace

int main() {
  using floor_bench::check;
  unsigned char* weights;
  check(cudaMalloc(&weights, layers * experts * expert_bytes), "weights");
  check(cudaMemset(weights, 0x5A, layers * experts * expert_bytes), "weights");
  int *tile_expert, *tile_count, *hit;
  unsigned* words;
  check(cudaMalloc(&tile_expert, layers * max_tiles * sizeof(int)), "tiles");
  check(cudaMalloc(&tile_count, layers * sizeof(int)), "tiles");
  check(cudaMalloc(&hit, layers * experts * sizeof(int)), "hit");
  check(cudaMalloc(&words, layers * max_tiles * 64 * sizeof(unsigned)), "words");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  std::mt19937 rng(29);
  for (const int tokens : {64, 128, 768}) {
    const int tile = tokens <= 256 ? 16 : 32, routes = 9 * tokens;
    const int grid_tiles = routes / tile + (routes < experts ? routes : experts);  // max_expert_tiles(9M) (no invalid ids here)
    std::vector<call> calls(layers);
    std::vector<int> distinct(layers);
    double mean_distinct = 0, mean_tiles = 0;
    for (int l = 0; l < layers; ++l) {
      std::vector<int> count(experts, 0);
      for (int t = 0; t < tokens; ++t) {
        std::vector<int> pool(256);
        for (int e = 0; e < 256; ++e) pool[e] = e;
        for (int s = 0; s < 8; ++s) {
          std::uniform_int_distribution<int> pick(s, 255);
          std::swap(pool[s], pool[pick(rng)]);
          ++count[pool[s]];
        }
        ++count[256];
      }
      std::vector<int> te, he;
      for (int e = 0; e < experts; ++e) {
        if (count[e] == 0) continue;
        he.push_back(e);
        for (int r = 0; r < count[e]; r += tile) te.push_back(e);
      }
      const int n = static_cast<int>(te.size());
      distinct[l] = static_cast<int>(he.size());
      mean_distinct += distinct[l] / double(layers);
      mean_tiles += n / double(layers);
      check(cudaMemcpy(tile_expert + l * max_tiles, te.data(), n * sizeof(int), cudaMemcpyHostToDevice), "tiles");
      check(cudaMemcpy(tile_count + l, &n, sizeof(int), cudaMemcpyHostToDevice), "tiles");
      check(cudaMemcpy(hit + l * experts, he.data(), he.size() * sizeof(int), cudaMemcpyHostToDevice), "hit");
      const unsigned char* layer = weights + static_cast<size_t>(l) * experts * expert_bytes;
      calls[l] = {layer, layer + experts * w13_bytes, tile_expert + l * max_tiles, tile_count + l, hit + l * experts, words + l * max_tiles * 64};
    }
    const int k_parts = tokens == 768 ? 2 : 1;
    auto stages = [&](bool gate_up, bool down) {
      for (int l = 0; l < layers; ++l) {
        cudaLaunchConfig_t cfg{};
        cudaLaunchAttribute attr[1];
        if (gate_up) {
          launch(cfg, attr, dim3(4, grid_tiles), stream);
          check(cudaLaunchKernelEx(&cfg, gate_up_floor, calls[l]), "gate_up floor");
        }
        if (down) {
          launch(cfg, attr, dim3(16 * k_parts, grid_tiles), stream);
          check(k_parts == 2 ? cudaLaunchKernelEx(&cfg, down_floor<2>, calls[l]) : cudaLaunchKernelEx(&cfg, down_floor<1>, calls[l]), "down floor");
        }
      }
    };
    auto grouped = [&] { stages(true, true); };
    auto streamed = [&] {
      for (int l = 0; l < layers; ++l) stream_floor<<<dim3(24, distinct[l]), 256, 0, stream>>>(calls[l]);
      check(cudaGetLastError(), "stream floor");
    };
    const double bytes = mean_distinct * expert_bytes;
    auto report = [&](const char* structure, const char* shape, double us, double bytes_read = 0) {
      if (bytes_read == 0) bytes_read = bytes;
      std::printf("{\"tokens\": %d, \"structure\": \"%s\", \"shape\": \"%s\", \"tile\": %d, \"k_parts\": %d, \"distinct_experts\": %.2f, "
                  "\"tiles\": %.2f, \"calls\": %d, \"weight_bytes\": %.0f, \"graph_us\": %.3f}\n",
                  tokens, structure, shape, tile, k_parts, mean_distinct, mean_tiles, layers, bytes_read, us);
    };
    report("grouped", "gate_up (4, max_expert_tiles) x 512 KiB, down (16 KParts, max_expert_tiles) x 64 KiB / KParts",
           floor_bench::graph_median_us(stream, layers, grouped));
    report("stream", "(24, distinct experts) x 128 KiB", floor_bench::graph_median_us(stream, layers, streamed));
    report("gate_up", "gate_up (4, max_expert_tiles) x 512 KiB", floor_bench::graph_median_us(stream, layers, [&] { stages(true, false); }),
           mean_distinct * w13_bytes);
    report("down", "down (16 KParts, max_expert_tiles) x 64 KiB / KParts", floor_bench::graph_median_us(stream, layers, [&] { stages(false, true); }),
           mean_distinct * w2_bytes);
  }
  check(cudaStreamSynchronize(stream), "sync");
  return 0;
}
