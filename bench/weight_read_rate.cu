// weight-read-rate: how fast the H200 reads a decode MoE block's weight bytes when nothing else
// happens — the bandwidth a weight-streaming kernel can reach, against which the block's
// roofline (weight bytes over the device-to-device copy bandwidth) and its kernels are read.
// One call reads `bytes` contiguous bytes of a 2 GiB buffer (each call of a burst its own
// window, so the burst covers 3x the L2 or more) and keeps nothing but an xor of a few words.
// Readers:
//   bulk   the decode kernels' way: workgroups of 128 threads, each with `stages` LDS stages of
//          `chunk` bytes filled by one cp.async.bulk each (one mbarrier per stage); `per_sm`
//          workgroups per SM, all resident, chunk c read by workgroup c % grid; a stage is refilled
//          as soon as its bytes have landed. (gate_up stages 32 KiB tiles, 1 per workgroup, 4 per
//          SM; down 8 KiB units, 24 per SM.)
//   loads  plain 16-byte loads (ld.global.nc.L1::no_allocate), `per_thread` in flight per thread,
//          512 threads per workgroup, `per_sm` workgroups per SM.
// Timing: bench/cuda_graph_timing.cuh (a burst of calls captured once into a graph, median of 30
// replays, per call); no programmatic dependent launch, so each call also pays a kernel boundary,
// which the 1 GiB calls amortise. Prints one JSON object per (reader, shape, bytes).
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"
#include "netra/dsl/arch/sm90a/bulk_copy.hpp"

#include <cstdio>

namespace {

using floor_bench::check;
using netra::u32;
using netra::u64;

constexpr u64 buffer_bytes = u64{2} << 30;

// Chunk c of the call's window (chunk bytes each) goes to workgroup c % gridDim.x; a stage is
// refilled right after its bytes have landed and one word of them has been read.
template <u32 Stages, u32 Chunk>
__global__ void __launch_bounds__(128) read_bulk(const unsigned char* window, u64 chunks, unsigned* sink) {
  extern __shared__ __align__(128) unsigned char stage[];
  __shared__ u64 ready[Stages];
  if (threadIdx.x == 0)
    for (u32 s = 0; s < Stages; ++s) netra::sm90a_isa::mbarrier_init(&ready[s], 1);
  __syncthreads();
  const u64 first = blockIdx.x, step = gridDim.x;
  auto issue = [&](u64 c, u32 s) {
    netra::sm90a_isa::mbarrier_arrive_expect_tx(&ready[s], Chunk);
    netra::sm90a_isa::cp_async_bulk_shared_global(stage + s * Chunk, window + c * Chunk, Chunk, &ready[s]);
  };
  unsigned acc = 0;
  if (threadIdx.x == 0) {
    for (u32 s = 0; s < Stages && first + s * step < chunks; ++s) issue(first + s * step, s);
    u32 use = 0;
    for (u64 c = first; c < chunks; c += step, ++use) {
      const u32 s = use % Stages;
      netra::sm90a_isa::mbarrier_wait_parity(&ready[s], (use / Stages) & 1u);
      acc ^= *reinterpret_cast<const unsigned*>(stage + s * Chunk + (use % 64) * 4);
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      const u64 next = c + static_cast<u64>(Stages) * step;
      if (next < chunks) issue(next, s);
    }
    if (acc == 0x9e3779b9u) sink[blockIdx.x] = acc;  // keeps the reads live; never true in practice
  }
}

template <u32 PerThread> __global__ void __launch_bounds__(512) read_loads(const uint4* window, u64 vectors, unsigned* sink) {
  const u64 threads = static_cast<u64>(gridDim.x) * blockDim.x;
  const u64 t = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (u64 base = t; base < vectors; base += threads * PerThread) {
    uint4 v[PerThread];
#pragma unroll
    for (u32 i = 0; i < PerThread; ++i) {
      const u64 at = base + i * threads;
      v[i] = make_uint4(0, 0, 0, 0);
      if (at < vectors)
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v[i].x), "=r"(v[i].y), "=r"(v[i].z), "=r"(v[i].w)
                     : "l"(window + at));
    }
#pragma unroll
    for (u32 i = 0; i < PerThread; ++i) acc ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
  }
  if (acc == 0x9e3779b9u) sink[t] = acc;
}

int sms() {
  int device = 0, count = 0;
  check(cudaGetDevice(&device), "device");
  check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "attribute");
  return count;
}

// Calls of `bytes` each, windows spaced through the buffer so that a burst covers >= 3x the L2.
struct windows {
  u64 bytes;
  int calls;
  u64 offset(int i) const { return (static_cast<u64>(i) * bytes) % (buffer_bytes - bytes + 1) / 4096 * 4096; }
};

windows burst_for(u64 bytes, int l2_bytes) {
  int calls = static_cast<int>((3 * static_cast<u64>(l2_bytes) + bytes - 1) / bytes);
  calls = calls < 2 ? 2 : calls;
  return {bytes, calls};
}

void report(const char* reader, const char* shape, u64 bytes, double us) {
  std::printf("{\"reader\": \"%s\", \"shape\": \"%s\", \"bytes\": %llu, \"us_per_call\": %.3f, \"bytes_per_s\": %.6e}\n", reader, shape,
              static_cast<unsigned long long>(bytes), us, static_cast<double>(bytes) / (us * 1e-6));
  std::fflush(stdout);
}

template <u32 Stages, u32 Chunk>
void run_bulk(const unsigned char* buffer, unsigned* sink, int per_sm, u64 bytes, int l2_bytes, cudaStream_t stream) {
  const u32 lds = Stages * Chunk;
  check(cudaFuncSetAttribute(read_bulk<Stages, Chunk>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(lds)), "lds");
  check(cudaFuncSetAttribute(read_bulk<Stages, Chunk>, cudaFuncAttributePreferredSharedMemoryCarveout, 100), "carveout");
  int fits = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fits, read_bulk<Stages, Chunk>, 128, lds), "occupancy");
  if (fits < per_sm) {
    std::fprintf(stderr, "weight-read-rate: %d workgroups of %u stages x %u bytes do not fit on an SM (%d do): skipped\n", per_sm, Stages, Chunk, fits);
    return;
  }
  const windows w = burst_for(bytes, l2_bytes);
  const int grid = sms() * per_sm;
  const double us = floor_bench::graph_median_us(stream, w.calls, [&] {
    for (int i = 0; i < w.calls; ++i)
      read_bulk<Stages, Chunk><<<grid, 128, lds, stream>>>(buffer + w.offset(i), bytes / Chunk, sink);
  });
  char shape[96];
  std::snprintf(shape, sizeof shape, "%d per SM x %u stages x %u KiB", per_sm, Stages, Chunk / 1024);
  report("bulk", shape, bytes, us);
}

template <u32 PerThread> void run_loads(const unsigned char* buffer, unsigned* sink, int per_sm, u64 bytes, int l2_bytes, cudaStream_t stream) {
  const windows w = burst_for(bytes, l2_bytes);
  const int grid = sms() * per_sm;
  const double us = floor_bench::graph_median_us(stream, w.calls, [&] {
    for (int i = 0; i < w.calls; ++i)
      read_loads<PerThread><<<grid, 512, 0, stream>>>(reinterpret_cast<const uint4*>(buffer + w.offset(i)), bytes / 16, sink);
  });
  char shape[96];
  std::snprintf(shape, sizeof shape, "%d per SM x 512 threads x %u loads of 16 B", per_sm, PerThread);
  report("loads", shape, bytes, us);
}

}  // namespace

int main() {
  unsigned char* buffer = nullptr;
  unsigned* sink = nullptr;
  check(cudaMalloc(&buffer, buffer_bytes), "malloc");
  check(cudaMemset(buffer, 1, buffer_bytes), "memset");
  check(cudaMalloc(&sink, 1 << 22), "malloc");
  int device = 0, l2 = 0;
  check(cudaGetDevice(&device), "device");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "l2");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  // the decode block's W13 and W2 bytes at 16 tokens (100.75 distinct experts), and a long stream
  for (const u64 bytes : {u64{211} << 20, u64{106} << 20, u64{1} << 30}) {
    run_bulk<1, 32768>(buffer, sink, 4, bytes, l2, stream);  // gate_up's staging
    run_bulk<2, 32768>(buffer, sink, 3, bytes, l2, stream);
    run_bulk<6, 32768>(buffer, sink, 1, bytes, l2, stream);
    run_bulk<24, 8192>(buffer, sink, 1, bytes, l2, stream);  // down's staging
    run_bulk<3, 65536>(buffer, sink, 1, bytes, l2, stream);
    run_loads<4>(buffer, sink, 2, bytes, l2, stream);
    run_loads<8>(buffer, sink, 2, bytes, l2, stream);
    run_loads<8>(buffer, sink, 4, bytes, l2, stream);
  }
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "sync");
  return 0;
}
