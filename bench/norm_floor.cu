// norm-floor: the measured floor under the normalization kernels (contracts/norm/norm.hpp) on this
// GPU. A kernel that moves exactly the bytes of one norm call — reads x (and r for add_rms, z for
// gated) and the weight, writes the BF16 output (or E4M3 + one FP32 scale per 128) and, for
// add_rms, r' over r — with the mapping of a contracts::norm instance: the same grid, workgroup,
// rows per workgroup, threads per row, chunk-to-thread map (chunk q_p + S k of the row, 16-byte
// accesses), the same load and store instructions (dsl/arch/sm90a/memory.hpp), the weight read
// before griddepcontrol.wait, the release of the successor at start for calls of at most 64
// tokens (16 for a gated workgroup of several warps) and after the stores above (one row per
// thread group: Resident 0; the looping mappings measured at cde6c96 are in lab/norm). No arithmetic: every output word is an input word xor
// the weight, xor one fold of all the thread's loaded words, so no output leaves before all of
// its thread's loads arrived (as in the norm, whose sum needs the whole row). Variant `reduce` also
// runs the row's xor butterfly of that fold across the row's threads (through LDS and a barrier
// for two warps per row) and, for E4M3, the 16-thread group butterfly: the norm's communication
// without its FP32 arithmetic. Timed as netra-bench-norm times netra: a burst of back-to-back
// calls, each on its own input and output set (sets >= 3x the L2, at most 4096), captured once
// into a graph and replayed, median of 30, programmatic dependent launch between the calls; a
// cudaMemcpyAsync of the call's read bytes (device to device) in the same burst shape is the
// copy reference. Prints one JSON object per (operation, fp8_out, mapping, tokens, variant).
// --prefill-mappings: the copy references, then only the rms / add_rms prefill mappings (below).
// --bulk-ring: the copy references, then the rms / add_rms floor of a structure no contracts::norm
// mapping has yet: a persistent grid whose workgroups walk rows through an LDS ring filled by
// whole-row bulk copies (below).
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"
#include "netra/contracts/norm/norm.hpp"
#include "netra/dsl/arch/sm90a/bulk_copy.hpp"
#include "netra/dsl/arch/sm90a/memory.hpp"
#include "netra/dsl/arch/sm90a/sync.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

namespace {

using floor_bench::check;
using netra::u32x4;

enum class op { rms, add_rms, gated };
const char* name(op o) { return o == op::rms ? "rms_norm" : o == op::add_rms ? "add_rms_norm" : "gated_rms_norm"; }

/// The mapping of contracts::norm<sm90a, Kind, *, *, *, WavesPerRow, RowsPerWorkgroup, 0, Split, SlicesPerThread>
/// (Split > 1: workgroup g is part g % Split of row g / Split, loading the whole row, storing
/// the chunks q + S k of its part's K / Split; add_rms: a cluster of the parts, r' after its wait;
/// SlicesPerThread P > 0, gated: a head over 16 / P threads, P chunks each).
template <op Op, int WavesPerRow, int RowsPerWorkgroup, int Split = 1, int SlicesPerThread = 0> struct mapping {
  static constexpr int n = Op == op::gated ? 128 : 2048, heads = Op == op::gated ? 32 : 1, cols = n * heads;
  static constexpr int row_chunks = n / 8, slices = row_chunks < 64 ? row_chunks : 64, per_slice = row_chunks / slices;
  static constexpr int threads_per_row = SlicesPerThread > 0 ? slices / SlicesPerThread : (slices < 32 ? slices : 32) * WavesPerRow;
  static constexpr int group_threads = threads_per_row < 16 ? threads_per_row : 16;  // threads of an E4M3 group
  static constexpr int per_thread = slices / threads_per_row, chunks = per_thread * per_slice;
  static constexpr int threads = RowsPerWorkgroup * threads_per_row;
  /// The instance's release point (contracts::norm: the successor released at start up to this many tokens).
  static constexpr int release_at_start_max_tokens =
      netra::contracts::norm<netra::sm90a, static_cast<netra::u32>(Op), 0, 0, 8192, WavesPerRow, RowsPerWorkgroup, 0, Split, SlicesPerThread>::release_at_start_max_tokens;
  static constexpr int split = Split;
  static int grid(int rows) { return (rows + RowsPerWorkgroup - 1) / RowsPerWorkgroup * Split; }
  __device__ static bool owns(int part, int i) { return (i % per_slice) / (per_slice / Split) == part; }
  __device__ static int chunk_of(int j, int i) { return j + threads_per_row * (i / per_slice) + slices * (i % per_slice); }
  __device__ static long row_offset(int row) { return static_cast<long>(row / heads) * cols + static_cast<long>(row % heads) * n; }
};

struct call_args {
  const uint16_t* x;
  uint16_t* residual;
  const uint16_t* gate;
  const uint16_t* weight;
  void* out;
  unsigned* scales;
  int rows;
  bool release_at_start;
};

template <class M> struct row_words {
  u32x4 v[M::chunks], second[M::chunks];  // x, and r (add_rms) or z (gated)
};

template <class M, op Op> __device__ void load_row(const call_args& a, int j, int row, row_words<M>& in) {
  const long o = M::row_offset(row);
#pragma unroll
  for (int i = 0; i < M::chunks; ++i) in.v[i] = netra::sm90a_isa::ld_global_nc_v4_b32<netra::cache_policy::streaming_early>(a.x + o + 8 * M::chunk_of(j, i));
  if constexpr (Op != op::rms) {
    const uint16_t* s = Op == op::add_rms ? a.residual : a.gate;
#pragma unroll
    for (int i = 0; i < M::chunks; ++i) in.second[i] = netra::sm90a_isa::ld_global_nc_v4_b32<netra::cache_policy::streaming_early>(s + o + 8 * M::chunk_of(j, i));
  }
}

__device__ unsigned fold_of(const u32x4& v) { return v.x ^ v.y ^ v.z ^ v.w; }
__device__ u32x4 xor_of(const u32x4& a, const u32x4& b, unsigned f) { return u32x4{a.x ^ b.x ^ f, a.y ^ b.y ^ f, a.z ^ b.z ^ f, a.w ^ b.w ^ f}; }

/// The row's xor butterfly of `fold` over its threads (LDS and a barrier for two warps per row).
template <class M, int WavesPerRow> __device__ unsigned row_butterfly(unsigned fold, int t) {
#pragma unroll
  for (int mask = 1; mask < (M::threads_per_row < 32 ? M::threads_per_row : 32); mask <<= 1) fold ^= __shfl_xor_sync(0xFFFFFFFFu, fold, mask);
  if constexpr (WavesPerRow == 2) {
    __shared__ unsigned halves[M::threads / 64][2];
    const int r = t / M::threads_per_row, w = (t % M::threads_per_row) / 32;
    if (t % 32 == 0) halves[r][w] = fold;
    __syncthreads();
    fold = halves[r][0] ^ halves[r][1];
  }
  return fold;
}

template <class M, op Op, bool Fp8, int WavesPerRow, bool Reduce>
__device__ void finish_row(const call_args& a, int t, int row, int part, bool live, row_words<M>& in, const u32x4 (&w)[M::chunks]) {
  const int j = t % M::threads_per_row;
  const long o = M::row_offset(row);
  constexpr bool clustered = Op == op::add_rms && M::split > 1;
  unsigned fold = 0;
#pragma unroll
  for (int i = 0; i < M::chunks; ++i) {
    if constexpr (Op == op::add_rms) {
      in.v[i] = xor_of(in.v[i], in.second[i], 0);
      if (!clustered && live && M::owns(part, i)) netra::sm90a_isa::st_global_v4_b32(a.residual + o + 8 * M::chunk_of(j, i), in.v[i]);
    }
    fold ^= fold_of(in.v[i]);
  }
  if constexpr (clustered) asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  if constexpr (Reduce) fold = row_butterfly<M, WavesPerRow>(fold, t);
  const long out_offset = static_cast<long>(row) * M::n;
#pragma unroll
  for (int i = 0; i < M::chunks; ++i) {
    if (!M::owns(part, i)) continue;
    const u32x4 y = xor_of(in.v[i], w[i], Op == op::gated ? fold ^ fold_of(in.second[i]) : fold);
    const int c = M::chunk_of(j, i);
    if constexpr (!Fp8) {
      if (live) netra::sm90a_isa::st_global_v4_b32(static_cast<uint16_t*>(a.out) + out_offset + 8 * c, y);
    } else {
      unsigned amax = y.x ^ y.w;
      if constexpr (Reduce)  // one butterfly per group (a gated head over < 16 threads: one per thread)
        if (M::group_threads == 16 || i == 0)
#pragma unroll
          for (int mask = 1; mask < M::group_threads; mask <<= 1) amax ^= __shfl_xor_sync(0xFFFFFFFFu, amax, mask);
      if (live) {
        *reinterpret_cast<uint2*>(static_cast<uint8_t*>(a.out) + out_offset + 8 * c) = make_uint2(y.x ^ y.y, y.z ^ amax);
        if (c % 16 == 0) a.scales[static_cast<long>(row) * (M::n / 128) + c / 16] = amax;
      }
    }
  }
  if constexpr (clustered) {
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#pragma unroll
    for (int i = 0; i < M::chunks; ++i)
      if (live && M::owns(part, i)) netra::sm90a_isa::st_global_v4_b32(a.residual + o + 8 * M::chunk_of(j, i), in.v[i]);
  }
}

template <class M, op Op, bool Fp8, int WavesPerRow, bool Reduce>
__global__ void __launch_bounds__(M::threads) floor_kernel(call_args a) {
  const int t = threadIdx.x, j = t % M::threads_per_row, part = static_cast<int>(blockIdx.x) % M::split;
  u32x4 w[M::chunks] = {};
#pragma unroll
  for (int i = 0; i < M::chunks; ++i)
    if (M::owns(part, i)) w[i] = netra::sm90a_isa::ld_global_nc_v4_b32(a.weight + 8 * M::chunk_of(j, i));
  if (a.release_at_start) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int row = static_cast<int>(blockIdx.x) / M::split * (M::threads / M::threads_per_row) + t / M::threads_per_row;
  const int clamped = row < a.rows ? row : a.rows - 1;  // rows past the last: load the last, store nothing
  row_words<M> in;
  load_row<M, Op>(a, j, clamped, in);
  finish_row<M, Op, Fp8, WavesPerRow, Reduce>(a, t, clamped, part, row < a.rows, in, w);
  if (!a.release_at_start) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

/// The bulk-ring floor (rms / add_rms, BF16 out): grid Blocks x SMs workgroups of 256 threads;
/// workgroup g takes rows g, g + grid, ...; each row's x (and r) lands in one of Slots LDS slots by
/// one 4 KiB bulk copy per tensor, issued by thread 0 Slots rows ahead on an mbarrier per slot;
/// thread t reads chunk t of the slot (16 bytes), writes out (and r') with 16-byte stores, and the
/// slot is refilled after a workgroup barrier. Bytes in flight cost no registers: Blocks x Slots
/// rows a SM. The same xor as `move` (no arithmetic); every output leaves after its row arrived.
template <op Op, int Slots> __global__ void __launch_bounds__(256) bulk_ring_kernel(call_args a) {
  constexpr int inputs = Op == op::add_rms ? 2 : 1, row_bytes = 4096;
  extern __shared__ __align__(128) unsigned char ring[];  // [Slots][inputs][4096], then the barriers
  uint64_t* full = reinterpret_cast<uint64_t*>(ring + Slots * inputs * row_bytes);
  const int t = threadIdx.x;
  const u32x4 w = netra::sm90a_isa::ld_global_nc_v4_b32(a.weight + 8 * t);
  if (t == 0)
    for (int s = 0; s < Slots; ++s) netra::sm90a_isa::mbarrier_init(&full[s], 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncthreads();
  if (a.release_at_start) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int grid = static_cast<int>(gridDim.x);
  auto issue = [&](int k) {  // row blockIdx.x + k * grid into slot k % Slots
    const int row = static_cast<int>(blockIdx.x) + k * grid;
    if (row >= a.rows) return;
    const int s = k % Slots;
    netra::sm90a_isa::mbarrier_arrive_expect_tx(&full[s], inputs * row_bytes);
    netra::sm90a_isa::cp_async_bulk_shared_global(ring + (s * inputs) * row_bytes, a.x + static_cast<long>(row) * 2048, row_bytes, &full[s]);
    if constexpr (Op == op::add_rms)
      netra::sm90a_isa::cp_async_bulk_shared_global(ring + (s * inputs + 1) * row_bytes, a.residual + static_cast<long>(row) * 2048, row_bytes, &full[s]);
  };
  if (t == 0)
    for (int k = 0; k < Slots; ++k) issue(k);
  for (int k = 0; static_cast<int>(blockIdx.x) + k * grid < a.rows; ++k) {
    const int row = static_cast<int>(blockIdx.x) + k * grid, s = k % Slots;
    netra::sm90a_isa::mbarrier_wait_parity(&full[s], (k / Slots) & 1);
    u32x4 v = *reinterpret_cast<const u32x4*>(ring + (s * inputs) * row_bytes + 16 * t);
    const long o = static_cast<long>(row) * 2048 + 8 * t;
    if constexpr (Op == op::add_rms) {
      v = xor_of(v, *reinterpret_cast<const u32x4*>(ring + (s * inputs + 1) * row_bytes + 16 * t), 0);
      netra::sm90a_isa::st_global_v4_b32(a.residual + o, v);
    }
    netra::sm90a_isa::st_global_v4_b32(static_cast<uint16_t*>(a.out) + o, xor_of(v, w, 0));
    netra::sm90a_isa::fence_proxy_async_shared_cta();
    __syncthreads();  // every thread has read slot s
    if (t == 0) issue(k + Slots);
  }
  if (!a.release_at_start) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

__global__ void fill(uint32_t* p, size_t words, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = (static_cast<uint32_t>(i) * 2654435761u + seed) | 0x00010001u;
}

/// Device memory of `sets` input and output sets of one (operation, fp8_out, tokens) shape; the
/// set count is netra-bench-norm's rule.
struct shape_sets {
  op o;
  bool fp8;
  int tokens, n, cols, sets = 0;
  size_t in_elems, out_bytes, scale_elems;
  std::vector<void*> buffers;
  uint16_t *x = nullptr, *residual = nullptr, *gate = nullptr, *weight = nullptr;
  uint8_t* out = nullptr;
  unsigned* scales = nullptr;
  shape_sets(op o_, bool fp8_, int tokens_, int l2) : o(o_), fp8(fp8_), tokens(tokens_) {
    n = o == op::gated ? 128 : 2048;
    cols = o == op::gated ? 4096 : 2048;
    in_elems = static_cast<size_t>(tokens) * cols;
    out_bytes = in_elems * (fp8 ? 1 : 2);
    scale_elems = fp8 ? in_elems / 128 : 0;
    const size_t per_set = in_elems * 2 * (o == op::rms ? 1 : 2) + out_bytes + scale_elems * 4;
    sets = static_cast<int>(std::max<long>(2, std::min<long>(4096, static_cast<long>(3.0 * l2 / static_cast<double>(per_set)) + 1)));
    x = alloc<uint16_t>(in_elems * 2 * sets, 1);
    if (o == op::add_rms) residual = alloc<uint16_t>(in_elems * 2 * sets, 2);
    if (o == op::gated) gate = alloc<uint16_t>(in_elems * 2 * sets, 3);
    weight = alloc<uint16_t>(n * 2, 4);
    out = alloc<uint8_t>(out_bytes * sets, 5);
    if (fp8) scales = alloc<unsigned>(scale_elems * 4 * sets, 6);
  }
  ~shape_sets() {
    for (void* b : buffers) cudaFree(b);
  }
  template <class T> T* alloc(size_t bytes, uint32_t seed) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    fill<<<264, 256>>>(static_cast<uint32_t*>(p), bytes / 4, seed);
    check(cudaGetLastError(), "fill");
    buffers.push_back(p);
    return static_cast<T*>(p);
  }
  call_args args(int s, int release_at_start_max_tokens) const {
    return {x + in_elems * s, residual ? residual + in_elems * s : nullptr, gate ? gate + in_elems * s : nullptr, weight, out + out_bytes * s,
            scales ? scales + scale_elems * s : nullptr, tokens * (o == op::gated ? 32 : 1), tokens <= release_at_start_max_tokens};
  }
  size_t read_bytes() const { return in_elems * 2 * (o == op::rms ? 1 : 2) + static_cast<size_t>(n) * 2; }
  size_t bytes() const { return read_bytes() + out_bytes + scale_elems * 4 + (o == op::add_rms ? in_elems * 2 : 0); }
};

void print(const shape_sets& s, const char* mapping, const char* variant, int grid, int threads, double us) {
  std::printf("{\"kernel\": \"norm_floor\", \"contract\": \"%s%s\", \"mapping\": \"%s\", \"variant\": \"%s\", \"tokens\": %d, \"fp8_out\": %s, "
              "\"grid\": %d, \"workgroup\": %d, \"input_sets\": %d, \"bytes\": %zu, \"graph_us\": %.3f}\n",
              name(s.o), s.fp8 ? "_fp8" : "", mapping, variant, s.tokens, s.fp8 ? "true" : "false", grid, threads, s.sets, s.bytes(), us);
  std::fflush(stdout);
}

template <class M, op Op, bool Fp8, int WavesPerRow, bool Reduce> void time_kernel(const shape_sets& s, cudaStream_t stream, const char* mapping) {
  cudaLaunchAttribute attributes[2]{};
  attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[0].val.programmaticStreamSerializationAllowed = 1;
  attributes[1].id = cudaLaunchAttributeClusterDimension;
  attributes[1].val.clusterDim.x = M::split, attributes[1].val.clusterDim.y = 1, attributes[1].val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  const int rows = s.tokens * M::heads;
  config.gridDim = dim3(M::grid(rows), 1, 1);
  config.blockDim = dim3(M::threads, 1, 1);
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = Op == op::add_rms && M::split > 1 ? 2 : 1;
  auto burst = [&] {
    for (int set = 0; set < s.sets; ++set) check(cudaLaunchKernelEx(&config, floor_kernel<M, Op, Fp8, WavesPerRow, Reduce>, s.args(set, M::release_at_start_max_tokens)), "launch");
  };
  const double us = floor_bench::graph_median_us(stream, s.sets, burst);
  print(s, mapping, Reduce ? "move_reduce" : "move", M::grid(rows), M::threads, us);
}

/// The floor of contracts::norm<sm90a, Op, *, Fp8, *, WavesPerRow, R, 0, Split, P> at each token count.
template <op Op, bool Fp8, int WavesPerRow, int R, int Split = 1, int P = 0>
void measure(std::initializer_list<int> tokens_list, cudaStream_t stream, int l2, bool reduce) {
  using M = mapping<Op, WavesPerRow, R, Split, P>;
  char mapping_name[64];  // the instance name's last fields
  if (P > 0) std::snprintf(mapping_name, sizeof mapping_name, "%d-%d-0-%d-%d", WavesPerRow, R, Split, P);
  else if (Split == 1) std::snprintf(mapping_name, sizeof mapping_name, "%d-%d-0", WavesPerRow, R);
  else std::snprintf(mapping_name, sizeof mapping_name, "%d-%d-0-%d", WavesPerRow, R, Split);
  for (int tokens : tokens_list) {
    const shape_sets s(Op, Fp8, tokens, l2);
    time_kernel<M, Op, Fp8, WavesPerRow, false>(s, stream, mapping_name);
    if (reduce) time_kernel<M, Op, Fp8, WavesPerRow, true>(s, stream, mapping_name);
  }
}

template <op Op, int Slots> void time_bulk_ring(const shape_sets& s, cudaStream_t stream, int blocks_per_sm, int sms) {
  const int lds = Slots * (Op == op::add_rms ? 2 : 1) * 4096 + Slots * 8;
  check(cudaFuncSetAttribute(bulk_ring_kernel<Op, Slots>, cudaFuncAttributeMaxDynamicSharedMemorySize, lds), "lds");
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks_per_sm * sms, 1, 1);
  config.blockDim = dim3(256, 1, 1);
  config.dynamicSmemBytes = lds;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  auto burst = [&] {
    for (int set = 0; set < s.sets; ++set) check(cudaLaunchKernelEx(&config, bulk_ring_kernel<Op, Slots>, s.args(set, 64)), "launch");
  };
  const double us = floor_bench::graph_median_us(stream, s.sets, burst);
  char mapping_name[64];
  std::snprintf(mapping_name, sizeof mapping_name, "bulk-ring-%dx%d", blocks_per_sm, Slots);
  print(s, mapping_name, "move", blocks_per_sm * sms, 256, us);
}

/// --bulk-ring: the bulk-ring floor at 512 and 8192 tokens, blocks a SM x slots, beside the served
/// 2-1-0 floor (first and last: the drift over the run).
template <op Op> void measure_bulk_ring(cudaStream_t stream, int l2, int sms) {
  measure<Op, false, 2, 1>({512, 8192}, stream, l2, false);
  for (int tokens : {512, 8192}) {
    const shape_sets s(Op, false, tokens, l2);
    time_bulk_ring<Op, 4>(s, stream, 4, sms);
    time_bulk_ring<Op, 8>(s, stream, 2, sms);
    time_bulk_ring<Op, 6>(s, stream, 4, sms);
    time_bulk_ring<Op, 12>(s, stream, 2, sms);
    time_bulk_ring<Op, 24>(s, stream, 1, sms);
    if constexpr (Op == op::rms) time_bulk_ring<Op, 16>(s, stream, 3, sms);
  }
  measure<Op, false, 2, 1>({8192}, stream, l2, false);
}

/// The copy reference: the call's read bytes copied device to device, one copy per set, burst-timed.
void measure_copy(op o, int tokens, cudaStream_t stream, int l2) {
  const shape_sets s(o, false, tokens, l2);
  const size_t half = s.bytes() / 2 / 16 * 16;
  std::vector<void*> src(s.sets), dst(s.sets);
  for (int set = 0; set < s.sets; ++set) check(cudaMalloc(&src[set], half), "cudaMalloc"), check(cudaMalloc(&dst[set], half), "cudaMalloc");
  auto burst = [&] {
    for (int set = 0; set < s.sets; ++set) check(cudaMemcpyAsync(dst[set], src[set], half, cudaMemcpyDeviceToDevice, stream), "copy");
  };
  const double us = floor_bench::graph_median_us(stream, s.sets, burst);
  print(s, "cudaMemcpyAsync", "copy_half_the_bytes_each_way", 0, 0, us);
  for (int set = 0; set < s.sets; ++set) cudaFree(src[set]), cudaFree(dst[set]);
}

template <op Op, bool Fp8> void measure_operation(cudaStream_t stream, int l2) {
  // The dispatched mappings (contracts::norm_decode / norm_prefill; on sm90a rms and add_rms use
  // the two-warp mapping at every size, add_rms FP8 at decode sizes with Split 2), then the
  // mappings the driver compares at the sizes it times them: catalog::norm_alternatives at 512
  // tokens, catalog::norm_gated_alternatives. The butterflies (move_reduce) where a decode target
  // is missed: the gated norm's decode mapping.
  if constexpr (Op == op::gated) {
    measure<Op, Fp8, 1, 2>({1, 16, 64}, stream, l2, true);
    if constexpr (Fp8) measure<Op, Fp8, 1, 8>({16, 64}, stream, l2, true);  // the sm90a FP8 decode from 17 tokens
    measure<Op, Fp8, 1, 16>({64, 512, 8192}, stream, l2, false);
    measure<Op, Fp8, 1, 16, 1, 2>({512, 8192}, stream, l2, false);  // catalog::norm_gated_alternatives
    measure<Op, Fp8, 1, 8>({512}, stream, l2, false);
  } else {
    if constexpr (Op == op::add_rms && Fp8) measure<Op, Fp8, 2, 1, 2>({1, 16, 64}, stream, l2, false);  // its decode mapping (Split 2)
    measure<Op, Fp8, 2, 1>({1, 16, 64, 512, 8192}, stream, l2, false);
    measure<Op, Fp8, 1, 4>({512}, stream, l2, false);
  }
}

/// --prefill-mappings: every Resident-0 mapping of contracts::norm a 2048-wide rms / add_rms row
/// takes on sm90a (WavesPerRow 1 or 2, RowsPerWorkgroup 1 .. 16 / 1 .. 8), at 512 and 8192 tokens
/// (8192 also with the butterflies), the served 2-1-0 first and again last (the drift over the run).
template <op Op, bool Fp8> void measure_prefill_mappings(cudaStream_t stream, int l2) {
  measure<Op, Fp8, 2, 1>({512, 8192}, stream, l2, true);
  measure<Op, Fp8, 2, 2>({512, 8192}, stream, l2, false), measure<Op, Fp8, 2, 2>({8192}, stream, l2, true);
  measure<Op, Fp8, 2, 4>({512, 8192}, stream, l2, false), measure<Op, Fp8, 2, 4>({8192}, stream, l2, true);
  measure<Op, Fp8, 2, 8>({512, 8192}, stream, l2, false), measure<Op, Fp8, 2, 8>({8192}, stream, l2, true);
  measure<Op, Fp8, 1, 1>({512, 8192}, stream, l2, false), measure<Op, Fp8, 1, 1>({8192}, stream, l2, true);
  measure<Op, Fp8, 1, 2>({512, 8192}, stream, l2, false), measure<Op, Fp8, 1, 2>({8192}, stream, l2, true);
  measure<Op, Fp8, 1, 4>({512, 8192}, stream, l2, false), measure<Op, Fp8, 1, 4>({8192}, stream, l2, true);
  measure<Op, Fp8, 1, 8>({512, 8192}, stream, l2, false), measure<Op, Fp8, 1, 8>({8192}, stream, l2, true);
  measure<Op, Fp8, 1, 16>({512, 8192}, stream, l2, false), measure<Op, Fp8, 1, 16>({8192}, stream, l2, true);
  measure<Op, Fp8, 2, 1>({512, 8192}, stream, l2, true);
}

}  // namespace

int main(int argc, char** argv) {
  const bool prefill_mappings = argc > 1 && std::string_view(argv[1]) == "--prefill-mappings";
  const bool bulk_ring = argc > 1 && std::string_view(argv[1]) == "--bulk-ring";
  int l2 = 0, sms = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  for (op o : {op::rms, op::add_rms, op::gated}) measure_copy(o, 8192, stream, l2);
  if (bulk_ring) {
    measure_bulk_ring<op::rms>(stream, l2, sms);
    measure_bulk_ring<op::add_rms>(stream, l2, sms);
    check(cudaStreamSynchronize(stream), "sync");
    check(cudaGetLastError(), "last error");
    return 0;
  }
  if (prefill_mappings) {
    measure_prefill_mappings<op::rms, false>(stream, l2);
    measure_prefill_mappings<op::add_rms, false>(stream, l2);
    measure_prefill_mappings<op::rms, true>(stream, l2);
    measure_prefill_mappings<op::add_rms, true>(stream, l2);
    check(cudaStreamSynchronize(stream), "sync");
    check(cudaGetLastError(), "last error");
    return 0;
  }
  measure_operation<op::gated, true>(stream, l2);  // the order of bench/norm.py (a run cut short keeps the first)
  measure_operation<op::gated, false>(stream, l2);
  measure_operation<op::add_rms, true>(stream, l2);
  measure_operation<op::add_rms, false>(stream, l2);
  measure_operation<op::rms, true>(stream, l2);
  measure_operation<op::rms, false>(stream, l2);
  check(cudaStreamSynchronize(stream), "sync");
  check(cudaGetLastError(), "last error");
  cudaStreamDestroy(stream);
  return 0;
}
