// moe-decode-structure-floor: how fast the decode MoE block could be on this GPU if its kernels did
// no arithmetic — only the dependences and the weight bytes of the block (Qwen3.6 shape: W13 2 MiB
// and W2 1 MiB per expert, 257 experts per layer), for the 9 experts of M = 1 and the ~101 distinct
// experts of M = 16 (a unit per distinct expert, as netra's units serve up to 16 routes). Each call:
//   route  one workgroup copies the call's expert ids (drawn on the host per layer; the last is the
//          shared expert 256) into the route buffer and then sets a ready word (release) — a
//          stand-in for the router, timed alone too, so that what follows it can be read as the
//          difference;
// then one of these structures, each reading the ids only after griddepcontrol.wait, except that
// the shared expert's bytes (id 256 is known before the routes) may be put in flight before it:
//   chain  netra's four-kernel shape: gate_up (64 tiles x units, one 32 KiB cp.async.bulk per
//          workgroup, the shared unit's before its wait; it releases its successor after its wait,
//          so that down may read the ids before its own) -> act (a workgroup per unit: one word per
//          gate_up tile in, one out) -> down (128 workgroups, 24 units of 8 KiB in flight as netra's
//          12 waves x 2 stages: all of them before its wait, from ids read with strong loads, then
//          a ring; after the wait it reads the act words). The others release their successors at
//          once (programmatic dependent launch).
//   chain_without_act  the same without the act kernel (down reads gate_up's words);
//   fused  one persistent kernel (2, 4 or 8 workgroups per SM, 128 - 192 KiB of 16 KiB stages per SM): its
//          W13 and W2 pieces stream through one ring from the start; a W2 piece of unit u is folded
//          only after all of u's W13 pieces have been (per-unit arrival counters, release /
//          acquire), which is the least the activations' dependence asks. `fused_free` drops that
//          wait; `fused_polled_ids` replaces griddepcontrol.wait by polling a word the route
//          releases after writing the ids (so the ids are read before the route's grid completes).
// Every kernel folds the bytes it receives into one word per piece (an xor), so nothing is skipped.
// The layers rotate (8 layers x 257 experts x 3 MiB), so a burst of calls reads past the L2.
// Timing: bench/cuda_graph_timing.cuh (burst captured once, median of 30 replays, per call).
// Prints one JSON object per (unit count, structure).
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"
#include "netra/dsl/arch/sm90a/bulk_copy.hpp"
#include "netra/dsl/strong_load.hpp"

#include <cstdio>
#include <random>
#include <vector>

namespace {

using floor_bench::check;
using netra::u32;
using netra::u64;
namespace isa = netra::sm90a_isa;

constexpr int experts = 257, shared_expert = 256, layers = 8, max_units = 128;
constexpr u64 w13_expert_bytes = u64{2} << 20, w2_expert_bytes = u64{1} << 20;
constexpr u32 gate_up_tile = 32768, gate_up_tiles = 64;  // 16 rows x 2 KiB of W13, per unit
constexpr u32 down_unit = 8192, down_tiles = 128;        // 16 rows x 512 B of W2, per unit
constexpr u32 down_stages = 24;                          // netra's down: 12 waves x 2 stages
constexpr u32 piece = 16384;                             // the fused kernel's stage
constexpr u32 w13_pieces_per_unit = w13_expert_bytes / piece, w2_pieces_per_unit = w2_expert_bytes / piece;
constexpr u32 fused_threads = 256;

// A unit is one distinct expert of the call (its routes are served together, as netra's units of up
// to 16 routes): 9 at M = 1, about 101 at M = 16. The shared expert is the last unit.
struct call {
  int units;
  const int* layer_ids;      // [units] this call's experts (host-drawn, the last = 256)
  int* ids;                  // [units] written by the route stand-in
  const unsigned char* w13;  // the layer's W13, [257][2 MiB]
  const unsigned char* w2;   // the layer's W2, [257][1 MiB]
  unsigned* gate_up_out;     // [units][128] (chain: [units][64])
  unsigned* act;             // [units][64]
  unsigned* out;             // [units][64] (chain: [128])
  unsigned* arrivals;        // [units] W13 pieces folded per unit (fused); then the ids' ready word, workgroups done
};
__device__ __host__ inline int ids_ready(const call& c) { return c.units; }
__device__ __host__ inline int workgroups_done(const call& c) { return c.units + 1; }

__device__ int strong_load(const int* p) { return static_cast<int>(netra::load_u32_strong<netra::sm90a>(p)); }

/// This thread's xor of its 16-byte words of `bytes` bytes of shared memory.
__device__ unsigned fold_thread(const unsigned char* stage, u32 bytes) {
  const uint4* v = reinterpret_cast<const uint4*>(stage);
  unsigned x = 0;
  for (u32 i = threadIdx.x; i < bytes / 16; i += blockDim.x) x ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
  return x;
}

/// xor of `bytes` bytes of shared memory over the block, returned to thread 0, with one barrier
/// (after it the stage may be refilled). `partial` holds two sets of per-warp words: consecutive
/// calls alternate `set`, so a set is rewritten only after a later call's barrier.
__device__ unsigned fold_block(const unsigned char* stage, u32 bytes, unsigned (*partial)[32], u32 set) {
  const unsigned x = __reduce_xor_sync(0xffffffffu, fold_thread(stage, bytes));
  if (threadIdx.x % 32 == 0) partial[set][threadIdx.x / 32] = x;
  __syncthreads();
  unsigned all = 0;
  if (threadIdx.x == 0)
    for (u32 w = 0; w < blockDim.x / 32; ++w) all ^= partial[set][w];
  return all;
}

/// The call's unit experts into shared memory (the shared expert's without a load).
__device__ void load_experts(const call& c, int* expert) {
  if (threadIdx.x < c.units) expert[threadIdx.x] = threadIdx.x == c.units - 1 ? shared_expert : strong_load(c.ids + threadIdx.x);
  __syncthreads();
}

// one workgroup of 128 threads
__global__ void route_stand_in(call c) {
  isa::griddepcontrol_launch_dependents();
  isa::griddepcontrol_wait();
  if (threadIdx.x < c.units) c.ids[threadIdx.x] = c.layer_ids[threadIdx.x], c.arrivals[threadIdx.x] = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    isa::fence_acq_rel_gpu();
    asm volatile("st.relaxed.gpu.global.u32 [%0], 1;" ::"l"(c.arrivals + ids_ready(c)) : "memory");
  }
}

// grid (64 tiles, units), 128 threads; tile x of unit u: W13 rows 16x .. 16x + 15 of its expert.
__global__ void __launch_bounds__(128) chain_gate_up(call c) {
  extern __shared__ __align__(128) unsigned char tile[];
  __shared__ u64 ready;
  __shared__ unsigned partial[2][32];
  if (threadIdx.x == 0) isa::mbarrier_init(&ready, 1);
  __syncthreads();
  const u32 x = blockIdx.x, u = blockIdx.y;
  const bool shared = u == c.units - 1;
  auto stage = [&](int expert) {
    isa::mbarrier_arrive_expect_tx(&ready, gate_up_tile);
    isa::cp_async_bulk_shared_global(tile, c.w13 + expert * w13_expert_bytes + u64{x} * gate_up_tile, gate_up_tile, &ready);
  };
  if (threadIdx.x == 0 && shared) stage(shared_expert);
  isa::griddepcontrol_wait();
  isa::griddepcontrol_launch_dependents();  // after the wait, as netra's gate_up: down reads the ids before its own wait
  if (threadIdx.x == 0 && !shared) stage(c.ids[u]);
  isa::mbarrier_wait_parity(&ready, 0);
  const unsigned v = fold_block(tile, gate_up_tile, partial, 0);
  if (threadIdx.x == 0) c.gate_up_out[u * gate_up_tiles + x] = v;
}

// grid units, 64 threads: unit u's act words from its gate_up words.
__global__ void chain_act(call c) {
  isa::griddepcontrol_launch_dependents();
  isa::griddepcontrol_wait();
  c.act[blockIdx.x * gate_up_tiles + threadIdx.x] = c.gate_up_out[blockIdx.x * gate_up_tiles + threadIdx.x] * 2654435761u;
}

// grid 128, 128 threads: tile x (W2 rows 16x .. 16x + 15) of every unit. Up to 24 units (netra's
// 12 waves x 2 stages of 8 KiB) all go out before the wait on one mbarrier and are folded together
// after it; more go through a ring of 24 stages, the first 24 before the wait, each refilled once
// every thread has folded it. After the wait it reads the act words (or, without the act kernel,
// gate_up's).
template <bool AfterAct>
__global__ void __launch_bounds__(128) chain_down(call c) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ u64 ready[down_stages];
  __shared__ unsigned partial[2][32];
  __shared__ int expert[max_units];
  const u32 x = blockIdx.x, units = c.units;
  const bool all_at_once = units <= down_stages;
  const u32 stages = all_at_once ? units : down_stages;
  auto issue = [&](u32 u) {
    const u32 s = u % stages;
    u64* barrier = &ready[all_at_once ? 0 : s];
    if (!all_at_once) isa::mbarrier_arrive_expect_tx(barrier, down_unit);
    isa::cp_async_bulk_shared_global(ring + s * down_unit, c.w2 + expert[u] * w2_expert_bytes + u64{x} * down_unit, down_unit, barrier);
  };
  isa::griddepcontrol_launch_dependents();
  if (threadIdx.x < down_stages) isa::mbarrier_init(&ready[threadIdx.x], 1);
  load_experts(c, expert);
  if (threadIdx.x == 0) {
    if (all_at_once) isa::mbarrier_arrive_expect_tx(&ready[0], units * down_unit);
    for (u32 u = 0; u < stages; ++u) issue(u);
  }
  isa::griddepcontrol_wait();
  unsigned a = 0;
  for (u32 i = threadIdx.x; i < units * gate_up_tiles; i += blockDim.x) a ^= AfterAct ? c.act[i] : c.gate_up_out[i];
  if (all_at_once) {
    isa::mbarrier_wait_parity(&ready[0], 0);
    a ^= fold_thread(ring, units * down_unit);
  } else {
    for (u32 u = 0; u < units; ++u) {
      isa::mbarrier_wait_parity(&ready[u % stages], (u / stages) & 1u);
      a ^= fold_thread(ring + (u % stages) * down_unit, down_unit);
      if (u + stages < units) {
        __syncthreads();  // every thread has read the stage
        if (threadIdx.x == 0) issue(u + stages);
      }
    }
  }
  a = __reduce_xor_sync(0xffffffffu, a);
  if (threadIdx.x % 32 == 0) partial[0][threadIdx.x / 32] = a;
  __syncthreads();
  if (threadIdx.x == 0) c.out[x] = partial[0][0] ^ partial[0][1] ^ partial[0][2] ^ partial[0][3];
}

// Piece p < W (W = units x 128) is W13 piece p % 128 of unit p / 128; the others W2 piece
// (p - W) % 64 of unit (p - W) / 64. Workgroup w takes the W13 pieces w, w + G, .. then the W2
// pieces likewise, through a ring of Stages stages; the shared expert's first pieces go out before
// the wait. WaitForUnit: a W2 piece of unit u is folded only once all of u's W13 pieces have been.
// PollIds: instead of griddepcontrol.wait, thread 0 polls the route's ready word (acquire); the last
// workgroup to finish clears it for the next call.
template <bool WaitForUnit, u32 Stages, bool PollIds>
__global__ void __launch_bounds__(fused_threads) fused(call c) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ u64 ready[Stages];
  __shared__ unsigned partial[2][32];
  __shared__ int expert[max_units];
  const u32 w = blockIdx.x, grid = gridDim.x, w13_pieces = c.units * w13_pieces_per_unit, w2_pieces = c.units * w2_pieces_per_unit;
  const u32 own_w13 = w < w13_pieces ? (w13_pieces - w + grid - 1) / grid : 0, own_w2 = w < w2_pieces ? (w2_pieces - w + grid - 1) / grid : 0;
  const u32 own = own_w13 + own_w2;
  auto piece_of = [&](u32 i) { return i < own_w13 ? w + i * grid : w13_pieces + w + (i - own_w13) * grid; };
  auto unit_of = [&](u32 p) { return p < w13_pieces ? p / w13_pieces_per_unit : (p - w13_pieces) / w2_pieces_per_unit; };
  auto issue = [&](u32 i, int e) {
    const u32 p = piece_of(i), s = i % Stages;
    const unsigned char* source = p < w13_pieces ? c.w13 + e * w13_expert_bytes + u64{p % w13_pieces_per_unit} * piece
                                                 : c.w2 + e * w2_expert_bytes + u64{(p - w13_pieces) % w2_pieces_per_unit} * piece;
    isa::mbarrier_arrive_expect_tx(&ready[s], piece);
    isa::cp_async_bulk_shared_global(ring + s * piece, source, piece, &ready[s]);
  };
  const auto shared_unit = static_cast<u32>(c.units - 1);
  isa::griddepcontrol_launch_dependents();
  if (threadIdx.x < Stages) isa::mbarrier_init(&ready[threadIdx.x], 1);
  __syncthreads();
  const u32 first = own < Stages ? own : Stages;
  if (threadIdx.x == 0)
    for (u32 i = 0; i < first; ++i)
      if (unit_of(piece_of(i)) == shared_unit) issue(i, shared_expert);
  if constexpr (PollIds) {
    if (threadIdx.x == 0) {
      unsigned ids;
      do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(ids) : "l"(c.arrivals + ids_ready(c)) : "memory");
      while (ids == 0);
    }
    __syncthreads();
  } else {
    isa::griddepcontrol_wait();
  }
  load_experts(c, expert);
  if (threadIdx.x == 0)
    for (u32 i = 0; i < first; ++i)
      if (unit_of(piece_of(i)) != shared_unit) issue(i, expert[unit_of(piece_of(i))]);
  for (u32 i = 0; i < own; ++i) {
    const u32 p = piece_of(i), u = unit_of(p), s = i % Stages;
    if (WaitForUnit && p >= w13_pieces) {
      if (threadIdx.x == 0) {
        unsigned done;
        do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(done) : "l"(c.arrivals + u) : "memory");
        while (done < w13_pieces_per_unit);
      }
      __syncthreads();
    }
    isa::mbarrier_wait_parity(&ready[s], (i / Stages) & 1u);
    const unsigned v = fold_block(ring + s * piece, piece, partial, i & 1u);  // after its barrier the stage is free
    if (threadIdx.x == 0) {
      if (p < w13_pieces) {
        c.gate_up_out[p] = v;
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(c.arrivals + u) : "memory");
      } else {
        c.out[p - w13_pieces] = v;
      }
      if (i + Stages < own) issue(i + Stages, expert[unit_of(piece_of(i + Stages))]);
    }
  }
  if (PollIds && threadIdx.x == 0) {
    unsigned before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(c.arrivals + workgroups_done(c)) : "memory");
    if (before == gridDim.x - 1) c.arrivals[ids_ready(c)] = 0, c.arrivals[workgroups_done(c)] = 0;
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
  constexpr u32 words_per_call = max_units * (w13_pieces_per_unit + 3 * gate_up_tiles);
  check(cudaMalloc(&layer_ids, layers * max_units * sizeof(int)), "ids");
  check(cudaMalloc(&ids, layers * max_units * sizeof(int)), "ids");
  check(cudaMalloc(&words, layers * words_per_call * sizeof(unsigned)), "words");
  check(cudaMalloc(&arrivals, layers * (max_units + 2) * sizeof(unsigned)), "arrivals");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  launcher launch(stream);
  check(cudaFuncSetAttribute(chain_down<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, down_stages * down_unit), "smem");
  check(cudaFuncSetAttribute(chain_down<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, down_stages * down_unit), "smem");
  std::mt19937 rng(20261201);

  // Units per call: the M = 1 block's 9 experts, and the ~101 distinct experts of M = 16 (the
  // decode block benchmark's routing routes its 16 tokens to 100.75 experts on average).
  for (const auto [tokens, units] : {std::pair{1, 9}, std::pair{16, 101}}) {
    std::vector<int> host_ids(layers * max_units);
    for (int l = 0; l < layers; ++l) {
      std::vector<int> pool(256);
      for (int e = 0; e < 256; ++e) pool[e] = e;
      std::shuffle(pool.begin(), pool.end(), rng);
      for (int u = 0; u < units - 1; ++u) host_ids[l * max_units + u] = pool[u];
      host_ids[l * max_units + units - 1] = shared_expert;
    }
    check(cudaMemcpy(layer_ids, host_ids.data(), host_ids.size() * sizeof(int), cudaMemcpyHostToDevice), "ids");
    std::vector<call> calls(layers);
    for (int l = 0; l < layers; ++l) {
      unsigned* w = words + l * words_per_call;
      calls[l] = {units, layer_ids + l * max_units, ids + l * max_units, weights + l * layer_bytes,
                  weights + l * layer_bytes + experts * w13_expert_bytes, w, w + max_units * w13_pieces_per_unit,
                  w + max_units * (w13_pieces_per_unit + gate_up_tiles), arrivals + l * (max_units + 2)};
    }
    const u32 down_shared = (units < static_cast<int>(down_stages) ? units : down_stages) * down_unit;
    auto route_only = [&] {
      for (const call& c : calls) launch(route_stand_in, dim3(1), 128, 0, c);
    };
    auto chain = [&](bool with_act) {
      return [&, with_act] {
        for (const call& c : calls) {
          launch(route_stand_in, dim3(1), 128, 0, c);
          launch(chain_gate_up, dim3(gate_up_tiles, units), 128, gate_up_tile, c);
          if (with_act) launch(chain_act, dim3(units), gate_up_tiles, 0, c);
          launch(with_act ? chain_down<true> : chain_down<false>, dim3(down_tiles), 128, down_shared, c);
        }
      };
    };
    // A fused shape: `per_sm` workgroups per SM, each with `stages` stages of 16 KiB.
    auto fused_call = [&](void (*kernel)(call), int per_sm, u32 stages) {
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, stages * piece), "smem");
      // The ready words start clear: the route sets them in every call, only the polling kernels clear them.
      check(cudaStreamSynchronize(stream), "sync");
      check(cudaMemset(arrivals, 0, layers * (max_units + 2) * sizeof(unsigned)), "arrivals");
      check(cudaDeviceSynchronize(), "sync");
      return [&, kernel, per_sm, stages] {
        for (const call& c : calls) {
          launch(route_stand_in, dim3(1), 128, 0, c);
          launch(kernel, dim3(per_sm * sms), fused_threads, stages * piece, c);
        }
      };
    };
    const double bytes = units * double(w13_expert_bytes + w2_expert_bytes);
    auto report = [&](const char* structure, const char* shape, double us, double route_us) {
      std::printf("{\"tokens\": %d, \"units\": %d, \"structure\": \"%s\", \"shape\": \"%s\", \"calls\": %d, \"weight_bytes\": %.0f, "
                  "\"graph_us\": %.3f, \"after_route_us\": %.3f}\n",
                  tokens, units, structure, shape, layers, bytes, us, us - route_us);
      std::fflush(stdout);
    };
    const double route_us = floor_bench::graph_median_us(stream, layers, route_only);
    report("route", "1 workgroup", route_us, route_us);
    report("chain", "gate_up 64 x units x 32 KiB, act, down 128 x ring of 8 KiB units", floor_bench::graph_median_us(stream, layers, chain(true)),
           route_us);
    report("chain_without_act", "gate_up 64 x units x 32 KiB, down 128 x ring of 8 KiB units",
           floor_bench::graph_median_us(stream, layers, chain(false)), route_us);
    report("fused", "2 per SM x 6 stages x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<true, 6, false>, 2, 6)), route_us);
    report("fused", "4 per SM x 3 stages x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<true, 3, false>, 4, 3)), route_us);
    report("fused", "8 per SM x 1 stage x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<true, 1, false>, 8, 1)), route_us);
    report("fused_free", "4 per SM x 3 stages x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<false, 3, false>, 4, 3)),
           route_us);
    report("fused_free", "8 per SM x 1 stage x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<false, 1, false>, 8, 1)),
           route_us);
    report("fused_polled_ids", "4 per SM x 3 stages x 16 KiB", floor_bench::graph_median_us(stream, layers, fused_call(fused<true, 3, true>, 4, 3)),
           route_us);
  }
  check(cudaStreamSynchronize(stream), "sync");
  return 0;
}
