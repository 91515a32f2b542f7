// moe-decode-structure-floor: how fast the M = 1 decode MoE block could be on this GPU if its
// kernels did no arithmetic — only the dependences and the weight bytes of the block (Qwen3.6 shape:
// 9 routes, W13 2 MiB and W2 1 MiB per expert, 257 experts per layer). Each call:
//   route  one warp copies the call's 9 expert ids (8 chosen + the shared expert 256, drawn on the
//          host per layer) into the route buffer and then sets a ready word (release) — a stand-in
//          for the router, timed alone too, so that what follows it can be read as the difference;
// then one of two structures, both reading the ids only after griddepcontrol.wait, except that the
// shared expert's bytes (id 256 is known before the routes) may be put in flight before it:
//   chain  netra's four-kernel shape: gate_up (64 tiles x 9 routes, one 32 KiB cp.async.bulk per
//          workgroup, route 8 before its wait; it releases its successor after its wait, so that
//          down may read the ids before its own) -> act (9 workgroups: one word per gate_up tile in,
//          one out) -> down (128 workgroups, each its 9 units of 8 KiB in flight before its wait,
//          from ids read with strong loads; after the wait it reads the act words). The others release
//          their successors at once (programmatic dependent launch).
//   chain_without_act  the same without the act kernel (down reads gate_up's words);
//   fused  one persistent kernel (2, 4 or 8 workgroups per SM, 96 - 192 KiB of 16 KiB stages per SM): its W13 and W2
//          pieces stream through one ring from the start; a W2 piece of route r is folded only after
//          all 128 W13 pieces of route r have been (per-route arrival counters, release / acquire),
//          which is the least the activations' dependence asks. `fused_free` drops that wait;
//          `*_polled_ids` replace griddepcontrol.wait by polling a word the route releases after
//          writing the ids (so the ids are read before the route's grid has completed).
// Every kernel folds the bytes it receives into one word per piece (an xor), so nothing is skipped.
// The layers rotate (8 layers x 257 experts x 3 MiB), so a burst of calls reads past the L2.
// Timing: bench/cuda_graph_timing.cuh (burst captured once, median of 30 replays, per call).
// Prints one JSON object per structure.
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"
#include "netra/dsl/arch/sm90a/bulk_copy.hpp"

#include <cstdio>
#include <random>
#include <vector>

namespace {

using floor_bench::check;
using netra::u32;
using netra::u64;
namespace isa = netra::sm90a_isa;

constexpr int routes = 9, experts = 257, shared_expert = 256, layers = 8;
constexpr u64 w13_expert_bytes = u64{2} << 20, w2_expert_bytes = u64{1} << 20;
constexpr u32 gate_up_tile = 32768, gate_up_tiles = 64;  // 16 rows x 2 KiB of W13, per route
constexpr u32 down_unit = 8192, down_tiles = 128;        // 16 rows x 512 B of W2, per route
constexpr u32 piece = 16384;                              // the fused kernel's stage
constexpr u32 w13_pieces = routes * (w13_expert_bytes / piece), w2_pieces = routes * (w2_expert_bytes / piece);
constexpr u32 w13_pieces_per_route = w13_expert_bytes / piece;
constexpr u32 fused_threads = 256;
constexpr int ids_ready = routes, workgroups_done = routes + 1;  // words of call::arrivals

struct call {
  const int* layer_ids;    // [9] this call's experts (host-drawn, route 8 = 256)
  int* ids;                // [9] written by the route stand-in
  const unsigned char* w13;  // the layer's W13, [257][2 MiB]
  const unsigned char* w2;   // the layer's W2, [257][1 MiB]
  unsigned* gate_up_out;   // [9][64] chain, or [w13_pieces] fused
  unsigned* act;           // [9][64]
  unsigned* out;           // [128] chain, or [w2_pieces] fused
  unsigned* arrivals;      // [9] fused: W13 pieces folded per route this call; [9] ids ready, [10] workgroups done
};

__device__ void release_successor() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ void wait_predecessor() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ int strong_load(const int* p) {
  int v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

/// xor of `bytes` bytes of shared memory over the block, returned to thread 0.
__device__ unsigned fold_block(const unsigned char* stage, u32 bytes, unsigned* partial) {
  const uint4* v = reinterpret_cast<const uint4*>(stage);
  unsigned x = 0;
  for (u32 i = threadIdx.x; i < bytes / 16; i += blockDim.x) x ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
  x = __reduce_xor_sync(0xffffffffu, x);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = x;
  __syncthreads();
  unsigned all = 0;
  if (threadIdx.x == 0)
    for (u32 w = 0; w < blockDim.x / 32; ++w) all ^= partial[w];
  __syncthreads();
  return all;
}

__global__ void route_stand_in(call c) {
  release_successor();
  wait_predecessor();
  if (threadIdx.x < routes) c.ids[threadIdx.x] = c.layer_ids[threadIdx.x], c.arrivals[threadIdx.x] = 0;
  __syncwarp();
  if (threadIdx.x == 0) asm volatile("fence.acq_rel.gpu;\n\tst.relaxed.gpu.global.u32 [%0], 1;" ::"l"(c.arrivals + ids_ready) : "memory");
}

// grid (64 tiles, 9 routes), 128 threads; tile x of route r: W13 rows 16x .. 16x + 15 of its expert.
__global__ void __launch_bounds__(128) chain_gate_up(call c) {
  extern __shared__ __align__(128) unsigned char tile[];
  __shared__ u64 ready;
  __shared__ unsigned partial[4];
  if (threadIdx.x == 0) isa::mbarrier_init(&ready, 1);
  __syncthreads();
  const u32 x = blockIdx.x, r = blockIdx.y;
  auto stage = [&](int expert) {
    isa::mbarrier_arrive_expect_tx(&ready, gate_up_tile);
    isa::cp_async_bulk_shared_global(tile, c.w13 + expert * w13_expert_bytes + u64{x} * gate_up_tile, gate_up_tile, &ready);
  };
  if (threadIdx.x == 0 && r == routes - 1) stage(shared_expert);
  wait_predecessor();
  release_successor();  // after the wait, as netra's gate_up: down reads the ids before its own wait
  if (threadIdx.x == 0 && r != routes - 1) stage(c.ids[r]);
  isa::mbarrier_wait_parity(&ready, 0);
  const unsigned v = fold_block(tile, gate_up_tile, partial);
  if (threadIdx.x == 0) c.gate_up_out[r * gate_up_tiles + x] = v;
}

// grid 9, 64 threads: route r's act words from its gate_up words.
__global__ void chain_act(call c) {
  release_successor();
  wait_predecessor();
  c.act[blockIdx.x * gate_up_tiles + threadIdx.x] = c.gate_up_out[blockIdx.x * gate_up_tiles + threadIdx.x] * 2654435761u;
}

// grid 128, 128 threads: tile x's 9 units (W2 rows 16x .. 16x + 15 of each route's expert) in flight
// before the wait, then the act words (or, without the act kernel, gate_up's), then the fold.
template <bool AfterAct>
__global__ void __launch_bounds__(128) chain_down(call c) {
  extern __shared__ __align__(128) unsigned char units[];
  __shared__ u64 ready;
  __shared__ unsigned partial[4];
  __shared__ int expert[routes];
  release_successor();
  if (threadIdx.x == 0) isa::mbarrier_init(&ready, 1);
  if (threadIdx.x < routes) expert[threadIdx.x] = threadIdx.x == routes - 1 ? shared_expert : strong_load(c.ids + threadIdx.x);
  __syncthreads();
  const u32 x = blockIdx.x;
  if (threadIdx.x == 0) {
    isa::mbarrier_arrive_expect_tx(&ready, routes * down_unit);
    for (int r = 0; r < routes; ++r)
      isa::cp_async_bulk_shared_global(units + r * down_unit, c.w2 + expert[r] * w2_expert_bytes + u64{x} * down_unit, down_unit, &ready);
  }
  wait_predecessor();
  unsigned a = 0;
  for (u32 i = threadIdx.x; i < routes * gate_up_tiles; i += blockDim.x) a ^= AfterAct ? c.act[i] : c.gate_up_out[i];
  isa::mbarrier_wait_parity(&ready, 0);
  const unsigned v = fold_block(units, routes * down_unit, partial);
  a = __reduce_xor_sync(0xffffffffu, a);
  if (threadIdx.x == 0) c.out[x] = v ^ a;
}

// Piece p < w13_pieces is W13 piece p % 128 of route p / 128; the others W2 piece (p - w13_pieces)
// % 64 of route (p - w13_pieces) / 64. Workgroup w takes the W13 pieces w, w + G, .. then the W2
// pieces likewise, through a ring of fused_stages stages.
// PollIds: instead of griddepcontrol.wait, thread 0 polls the route's ready word (acquire); the last
// workgroup to finish clears it for the next call.
template <bool WaitForRoute, u32 Stages, bool PollIds>
__global__ void __launch_bounds__(fused_threads) fused(call c) {
  constexpr u32 fused_stages = Stages;
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ u64 ready[fused_stages];
  __shared__ unsigned partial[fused_threads / 32];
  __shared__ int expert[routes];
  const u32 w = blockIdx.x, grid = gridDim.x;
  const u32 own_w13 = (w13_pieces - w + grid - 1) / grid, own_w2 = (w2_pieces - w + grid - 1) / grid, own = own_w13 + own_w2;
  auto piece_of = [&](u32 i) { return i < own_w13 ? w + i * grid : w13_pieces + w + (i - own_w13) * grid; };
  auto route_of = [&](u32 p) { return p < w13_pieces ? p / w13_pieces_per_route : (p - w13_pieces) / (w2_expert_bytes / piece); };
  auto source = [&](u32 p, int expert) {
    return p < w13_pieces ? c.w13 + expert * w13_expert_bytes + u64{p % w13_pieces_per_route} * piece
                          : c.w2 + expert * w2_expert_bytes + u64{(p - w13_pieces) % (w2_expert_bytes / piece)} * piece;
  };
  auto issue = [&](u32 i, int expert) {
    const u32 s = i % fused_stages;
    isa::mbarrier_arrive_expect_tx(&ready[s], piece);
    isa::cp_async_bulk_shared_global(ring + s * piece, source(piece_of(i), expert), piece, &ready[s]);
  };
  release_successor();
  if (threadIdx.x == 0)
    for (u32 s = 0; s < fused_stages; ++s) isa::mbarrier_init(&ready[s], 1);
  __syncthreads();
  const u32 first = own < fused_stages ? own : fused_stages;
  if (threadIdx.x == 0)
    for (u32 i = 0; i < first; ++i)
      if (route_of(piece_of(i)) == routes - 1) issue(i, shared_expert);
  if constexpr (PollIds) {
    if (threadIdx.x == 0) {
      unsigned ready;
      do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(ready) : "l"(c.arrivals + ids_ready) : "memory");
      while (ready == 0);
    }
    __syncthreads();
  } else {
    wait_predecessor();
  }
  if (threadIdx.x < routes) expert[threadIdx.x] = threadIdx.x == routes - 1 ? shared_expert : strong_load(c.ids + threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0)
    for (u32 i = 0; i < first; ++i)
      if (route_of(piece_of(i)) != routes - 1) issue(i, expert[route_of(piece_of(i))]);
  for (u32 i = 0; i < own; ++i) {
    const u32 p = piece_of(i), r = route_of(p), s = i % fused_stages;
    if (WaitForRoute && p >= w13_pieces && threadIdx.x == 0) {
      unsigned done;
      do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(done) : "l"(c.arrivals + r) : "memory");
      while (done < w13_pieces_per_route);
    }
    if (WaitForRoute && p >= w13_pieces) __syncthreads();
    isa::mbarrier_wait_parity(&ready[s], (i / fused_stages) & 1u);
    const unsigned v = fold_block(ring + s * piece, piece, partial);  // ends with a barrier: the stage is free
    if (threadIdx.x == 0) {
      if (p < w13_pieces) {
        c.gate_up_out[p] = v;
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(c.arrivals + r) : "memory");
      } else {
        c.out[p - w13_pieces] = v;
      }
      if (i + fused_stages < own) {
        issue(i + fused_stages, expert[route_of(piece_of(i + fused_stages))]);
      }
    }
  }
  if (PollIds && threadIdx.x == 0) {
    unsigned before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(c.arrivals + workgroups_done) : "memory");
    if (before == gridDim.x - 1) c.arrivals[ids_ready] = 0, c.arrivals[workgroups_done] = 0;
  }
}

struct launcher {
  cudaStream_t stream;
  cudaLaunchAttribute pdl{};
  launcher(cudaStream_t s) : stream(s) {
    pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl.val.programmaticStreamSerializationAllowed = 1;
  }
  void operator()(void (*kernel)(call), dim3 grid, u32 threads, u32 shared, const call& c) {
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = dim3(threads, 1, 1);
    config.dynamicSmemBytes = shared;
    config.stream = stream;
    config.attrs = &pdl;
    config.numAttrs = 1;
    check(cudaLaunchKernelEx(&config, kernel, c), "launch");
  }
};

}  // namespace

int main() {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  const u64 layer_bytes = experts * (w13_expert_bytes + w2_expert_bytes);
  unsigned char* weights = nullptr;
  check(cudaMalloc(&weights, layers * layer_bytes), "weights");
  check(cudaMemset(weights, 0x5A, layers * layer_bytes), "weights");
  int *layer_ids = nullptr, *ids = nullptr;
  unsigned *words = nullptr, *arrivals = nullptr;
  check(cudaMalloc(&layer_ids, layers * routes * sizeof(int)), "ids");
  check(cudaMalloc(&ids, layers * routes * sizeof(int)), "ids");
  constexpr u32 words_per_call = w13_pieces + routes * gate_up_tiles + w2_pieces;
  check(cudaMalloc(&words, layers * words_per_call * sizeof(unsigned)), "words");
  check(cudaMalloc(&arrivals, layers * (routes + 2) * sizeof(unsigned)), "arrivals");
  check(cudaMemset(arrivals, 0, layers * (routes + 2) * sizeof(unsigned)), "arrivals");
  std::vector<int> host_ids(layers * routes);
  std::mt19937 rng(20261201);
  for (int l = 0; l < layers; ++l) {
    std::vector<int> pool(256);
    for (int e = 0; e < 256; ++e) pool[e] = e;
    std::shuffle(pool.begin(), pool.end(), rng);
    for (int r = 0; r < routes - 1; ++r) host_ids[l * routes + r] = pool[r];
    host_ids[l * routes + routes - 1] = shared_expert;
  }
  check(cudaMemcpy(layer_ids, host_ids.data(), host_ids.size() * sizeof(int), cudaMemcpyHostToDevice), "ids");
  std::vector<call> calls(layers);
  for (int l = 0; l < layers; ++l) {
    unsigned* w = words + l * words_per_call;
    calls[l] = {layer_ids + l * routes, ids + l * routes, weights + l * layer_bytes, weights + l * layer_bytes + experts * w13_expert_bytes,
                w, w + w13_pieces, w + w13_pieces + routes * gate_up_tiles, arrivals + l * (routes + 2)};
  }
  check(cudaFuncSetAttribute(chain_down<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, routes * down_unit), "smem");
  check(cudaFuncSetAttribute(chain_down<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, routes * down_unit), "smem");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  launcher launch(stream);
  auto route_only = [&] {
    for (const call& c : calls) launch(route_stand_in, dim3(1), 32, 0, c);
  };
  auto chain = [&](bool with_act) {
    return [&, with_act] {
      for (const call& c : calls) {
        launch(route_stand_in, dim3(1), 32, 0, c);
        launch(chain_gate_up, dim3(gate_up_tiles, routes), 128, gate_up_tile, c);
        if (with_act) launch(chain_act, dim3(routes), gate_up_tiles, 0, c);
        launch(with_act ? chain_down<true> : chain_down<false>, dim3(down_tiles), 128, routes * down_unit, c);
      }
    };
  };
  // A fused shape: `per_sm` workgroups per SM, each with Stages stages of 16 KiB.
  auto fused_call = [&](void (*kernel)(call), int per_sm, u32 stages) {
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, stages * piece), "smem");
    // The ready words start clear: the route sets them in every call, only the polling kernels clear them.
    check(cudaStreamSynchronize(stream), "sync");
    check(cudaMemset(arrivals, 0, layers * (routes + 2) * sizeof(unsigned)), "arrivals");
    check(cudaDeviceSynchronize(), "sync");
    return [&, kernel, per_sm, stages] {
      for (const call& c : calls) {
        launch(route_stand_in, dim3(1), 32, 0, c);
        launch(kernel, dim3(per_sm * sms), fused_threads, stages * piece, c);
      }
    };
  };
  const double bytes = routes * double(w13_expert_bytes + w2_expert_bytes);
  auto report = [&](const char* structure, const char* shape, double us, double route_us) {
    std::printf("{\"structure\": \"%s\", \"shape\": \"%s\", \"calls\": %d, \"weight_bytes\": %.0f, \"graph_us\": %.3f, "
                "\"after_route_us\": %.3f}\n",
                structure, shape, layers, bytes, us, us - route_us);
    std::fflush(stdout);
  };
  const double route_us = floor_bench::graph_median_us(stream, layers, route_only);
  report("route", "1 workgroup", route_us, route_us);
  report("chain", "gate_up 576 x 32 KiB, act 9, down 128 x 9 x 8 KiB", floor_bench::graph_median_us(stream, layers, chain(true)), route_us);
  report("chain_without_act", "gate_up 576 x 32 KiB, down 128 x 9 x 8 KiB", floor_bench::graph_median_us(stream, layers, chain(false)), route_us);
  report("fused", "2 per SM x 6 stages x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<true, 6, false>, 2, 6)), route_us);
  report("fused", "4 per SM x 3 stages x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<true, 3, false>, 4, 3)), route_us);
  report("fused", "8 per SM x 1 stage x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<true, 1, false>, 8, 1)), route_us);
  report("fused_free", "4 per SM x 3 stages x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<false, 3, false>, 4, 3)), route_us);
  report("fused_free", "8 per SM x 1 stage x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<false, 1, false>, 8, 1)), route_us);
  report("fused_polled_ids", "4 per SM x 3 stages x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<true, 3, true>, 4, 3)), route_us);
  report("fused_free_polled_ids", "4 per SM x 3 stages x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<false, 3, true>, 4, 3)),
         route_us);
  check(cudaStreamSynchronize(stream), "sync");
  return 0;
}
