// act-quant-copy-floor: the measured floor under act_quant on this GPU. A kernel that moves the
// same bytes as act_quant — reads each [R, 1024] BF16 row (gate and up), writes [R, 512] bytes and
// [R, 4] FP32 — with no arithmetic beyond an xor that keeps every load live, timed exactly as
// netra-bench-moe-routing times act_quant: a burst of back-to-back calls, each on its own input and
// output set (the sets cover 3x the L2 once a set reaches 50 KiB, else 1.5x), captured once into a
// graph and replayed, median of 30. So no kernel that reads every input value after its producer
// completes and writes act_quant's outputs can beat it on the same GPU and launch path.
// Variants, each reading the rows after griddepcontrol.wait:
//  - lanes: act_quant's own mapping family (L = 64 / V threads per row, thread j of a row owns the
//    V chunks of 8 values at 8j + 8Lc; RowsPerBlock rows per block), V = 1, 2, 4 with 1 to 16 rows
//    per block, 16-byte loads either streaming (ld.global.cs) or with the 256-byte L2 fetch hint
//    (ld.global.nc.L1::no_allocate.L2::256B);
//  - bulk: the copy engine brings a block's RowsPerBlock rows (2 KiB each, contiguous) into shared
//    memory by one cp.async.bulk completing on an mbarrier; one thread per 16-byte gate/up pair.
// Stores: plain (as act_quant's), streaming (st.global.cs, evict-first), or for bulk variants through
// shared memory and one cp.async.bulk per range back to global memory. Launch modes: programmatic
// dependent launch releasing the successor at once, before the wait (as netra's act_quant does for
// calls of up to 144 rows), or after the thread's stores (as act_quant does above 144 rows), or no
// programmatic dependent launch (streaming loads with plain stores only). Every loading mechanism
// also runs read-only (no output stores: every loaded word folds into one value that is stored only
// if it equals a constant), a lower bound on any kernel that reads act_quant's input. Prints one
// JSON object per (variant, rows, launch mode).
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"
#include "netra/dsl/arch/sm90a/bulk_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

using floor_bench::check;

enum class release { at_start, after_stores, none };  // none: launched without the attribute
const char* name(release r) { return r == release::at_start ? "at_start" : r == release::after_stores ? "after_stores" : "none"; }

enum class load_hint { streaming, l2_256b };
const char* name(load_hint h) { return h == load_hint::streaming ? "streaming" : "l2_256b"; }

template <load_hint Hint> __device__ uint4 load16(const uint4* p) {
  if constexpr (Hint == load_hint::streaming) {
    return __ldcs(p);
  } else {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
  }
}

/// How a variant stores its outputs: not at all (read-only: every loaded word folds into one value
/// that is stored only if it equals `sink_key`), by plain or streaming (st.global.cs) stores, or
/// (bulk variants) into shared memory and from there by cp.async.bulk shared -> global.
enum class store_kind { none, plain, streaming, bulk };
const char* name(store_kind k) {
  return k == store_kind::none ? "none" : k == store_kind::plain ? "plain" : k == store_kind::streaming ? "streaming" : "bulk";
}
constexpr unsigned sink_key = 0x9E3779B9u;

template <store_kind Store, class T> __device__ void store(T* p, T v) {
  if constexpr (Store == store_kind::streaming) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

/// The outputs of one 16-byte gate/up pair: 8 output bytes at out[o]; `fold` gathers the words a
/// read-only variant does not store and the scale word.
template <store_kind Store> __device__ void emit_pair(const uint4& gate, const uint4& up, uint2* out, long o, unsigned& fold) {
  const uint2 bytes = make_uint2(gate.x ^ up.y ^ gate.z, gate.y ^ up.x ^ up.w);
  if constexpr (Store == store_kind::none) {
    fold ^= bytes.x + bytes.y;
  } else {
    store<Store>(out + o, bytes);
  }
  fold ^= gate.w ^ up.z;
}

template <int Vectors, int RowsPerBlock, bool ReleaseAtStart, load_hint Hint, store_kind Store>
__global__ void __launch_bounds__(RowsPerBlock * 64 / Vectors) copy_rows(const uint4* in, uint2* out, unsigned* scales, int rows) {
  constexpr int lanes = 64 / Vectors;  // threads per row
  if (ReleaseAtStart) netra::sm90a_isa::griddepcontrol_launch_dependents();
  netra::sm90a_isa::griddepcontrol_wait();
  const int row = blockIdx.x * RowsPerBlock + threadIdx.x / lanes;
  if (row >= rows) {
    if (!ReleaseAtStart) netra::sm90a_isa::griddepcontrol_launch_dependents();
    return;
  }
  const int j = threadIdx.x % lanes;
  const uint4* x = in + static_cast<long>(row) * 128;  // 1024 BF16 = 128 vectors of 16 bytes
  uint4 gate[Vectors], up[Vectors];
#pragma unroll
  for (int c = 0; c < Vectors; ++c) {
    gate[c] = load16<Hint>(x + j + lanes * c);
    up[c] = load16<Hint>(x + 64 + j + lanes * c);
  }
  unsigned fold = 0;
#pragma unroll
  for (int c = 0; c < Vectors; ++c) emit_pair<Store>(gate[c], up[c], out, static_cast<long>(row) * 64 + j + lanes * c, fold);
  if constexpr (Store != store_kind::none) {
    if (j % 16 == 0)
#pragma unroll
      for (int c = 0; c < Vectors; ++c) store<Store>(scales + row * 4 + (j + lanes * c) / 16, fold + c);
  } else if (fold == sink_key) {
    scales[row * 4] = fold;
  }
  if (!ReleaseAtStart) netra::sm90a_isa::griddepcontrol_launch_dependents();
}

/// One cp.async.bulk per block of RowsPerBlock contiguous rows into shared memory (dynamic, 2 KiB
/// per row), then thread t takes pair t % 64 of row t / 64 from there. Releases its successor at once.
/// With store_kind::bulk the outputs go into shared memory (after the rows: 512 bytes, then 16 bytes
/// of scales per row) and thread 0 copies both ranges out by cp.async.bulk.
template <int RowsPerBlock, store_kind Store>
__global__ void __launch_bounds__(RowsPerBlock * 64) copy_rows_bulk(const uint4* in, uint2* out, unsigned* scales, int rows) {
  extern __shared__ __align__(128) uint4 stage[];
  __shared__ uint64_t ready;
  uint2* out_stage = reinterpret_cast<uint2*>(stage + RowsPerBlock * 128);
  unsigned* scale_stage = reinterpret_cast<unsigned*>(out_stage + RowsPerBlock * 64);
  netra::sm90a_isa::griddepcontrol_launch_dependents();
  if (threadIdx.x == 0) netra::sm90a_isa::mbarrier_init(&ready, 1);
  __syncthreads();
  netra::sm90a_isa::griddepcontrol_wait();
  const int first = blockIdx.x * RowsPerBlock, count = min(RowsPerBlock, rows - first);
  if (threadIdx.x == 0) {
    netra::sm90a_isa::mbarrier_arrive_expect_tx(&ready, count * 2048u);
    netra::sm90a_isa::cp_async_bulk_shared_global(stage, in + static_cast<long>(first) * 128, count * 2048u, &ready);
  }
  netra::sm90a_isa::mbarrier_wait_parity(&ready, 0);
  const int r = threadIdx.x / 64, j = threadIdx.x % 64;
  unsigned fold = 0;
  if constexpr (Store == store_kind::bulk) {
    if (r < count) {
      emit_pair<store_kind::plain>(stage[r * 128 + j], stage[r * 128 + 64 + j], out_stage, r * 64 + j, fold);
      if (j % 16 == 0) scale_stage[r * 4 + j / 16] = fold;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the copy engine reads what these threads wrote
    __syncthreads();
    if (threadIdx.x == 0) {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out + static_cast<long>(first) * 64),
                   "r"(netra::sm90a_isa::shared_address(out_stage)), "r"(count * 512u)
                   : "memory");
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(scales + first * 4),
                   "r"(netra::sm90a_isa::shared_address(scale_stage)), "r"(count * 16u)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read 0;" ::: "memory");  // shared memory lives until read
    }
  } else if (r < count) {
    emit_pair<Store>(stage[r * 128 + j], stage[r * 128 + 64 + j], out, static_cast<long>(first + r) * 64 + j, fold);
    if constexpr (Store != store_kind::none) {
      if (j % 16 == 0) store<Store>(scales + (first + r) * 4 + j / 16, fold);
    } else if (fold == sink_key) {
      scales[(first + r) * 4] = fold;
    }
  }
}

int input_sets(size_t bytes_per_set, int l2) {  // netra-bench-moe-routing's rule
  const double factor = bytes_per_set >= 50 * 1024 ? 3.0 : 1.5;
  return static_cast<int>(std::clamp<size_t>(static_cast<size_t>(factor * l2 / static_cast<double>(bytes_per_set)) + 1, 2, 4096));
}

using copy_kernel = void (*)(const uint4*, uint2*, unsigned*, int);

struct variant {
  copy_kernel kernel;
  const char* mechanism;  // "lanes" or "bulk"
  const char* load;       // "streaming", "l2_256b" or "bulk"
  store_kind store;
  int vectors, rows_per_block, threads, shared_bytes;
};

void measure(const variant& v, int rows, release mode, int l2, const std::vector<uint16_t>& host) {
  const size_t in_bytes = static_cast<size_t>(rows) * 2048, out_bytes = static_cast<size_t>(rows) * 512, scale_bytes = static_cast<size_t>(rows) * 16;
  const int sets = input_sets(in_bytes + out_bytes + scale_bytes, l2);
  std::vector<void*> in(sets), out(sets), scales(sets);
  for (int s = 0; s < sets; ++s) {
    check(cudaMalloc(&in[s], in_bytes), "cudaMalloc");
    check(cudaMalloc(&out[s], out_bytes), "cudaMalloc");
    check(cudaMalloc(&scales[s], scale_bytes), "cudaMalloc");
    check(cudaMemcpy(in[s], host.data(), in_bytes, cudaMemcpyHostToDevice), "upload");
  }
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3((rows + v.rows_per_block - 1) / v.rows_per_block, 1, 1);
  config.blockDim = dim3(v.threads, 1, 1);
  config.dynamicSmemBytes = v.shared_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = mode == release::none ? 0 : 1;
  auto burst = [&] {
    for (int s = 0; s < sets; ++s)
      check(cudaLaunchKernelEx(&config, v.kernel, static_cast<const uint4*>(in[s]), static_cast<uint2*>(out[s]), static_cast<unsigned*>(scales[s]), rows),
            "launch");
  };
  const double us = floor_bench::graph_median_us(stream, sets, burst);
  const bool writes = v.store != store_kind::none;
  std::printf("{\"kernel\": \"act_quant_copy_floor\", \"mechanism\": \"%s\", \"load\": \"%s\", \"store\": \"%s\", \"writes\": %s, "
              "\"vectors_per_lane\": %d, \"rows_per_block\": %d, \"rows\": %d, \"pdl\": %s, \"release\": \"%s\", \"input_sets\": %d, "
              "\"bytes\": %zu, \"graph_us\": %.3f}\n",
              v.mechanism, v.load, name(v.store), writes ? "true" : "false", v.vectors, v.rows_per_block, rows,
              mode == release::none ? "false" : "true", name(mode), sets, writes ? in_bytes + out_bytes + scale_bytes : in_bytes, us);
  std::fflush(stdout);
  cudaStreamDestroy(stream);
  for (int s = 0; s < sets; ++s) cudaFree(in[s]), cudaFree(out[s]), cudaFree(scales[s]);
}

template <int Vectors, int RowsPerBlock, bool ReleaseAtStart, load_hint Hint, store_kind Store> variant lanes() {
  return {copy_rows<Vectors, RowsPerBlock, ReleaseAtStart, Hint, Store>, "lanes", name(Hint), Store, Vectors, RowsPerBlock, RowsPerBlock * 64 / Vectors, 0};
}
template <int RowsPerBlock, store_kind Store> variant bulk() {
  return {copy_rows_bulk<RowsPerBlock, Store>, "bulk", "bulk", Store, 1, RowsPerBlock, RowsPerBlock * 64, RowsPerBlock * (2048 + 512 + 16)};
}

template <int Vectors, int RowsPerBlock> void measure_mapping(int rows, int l2, const std::vector<uint16_t>& host) {
  constexpr load_hint streaming = load_hint::streaming, l2_256b = load_hint::l2_256b;
  constexpr store_kind plain = store_kind::plain, none = store_kind::none;
  measure(lanes<Vectors, RowsPerBlock, true, streaming, plain>(), rows, release::at_start, l2, host);
  measure(lanes<Vectors, RowsPerBlock, false, streaming, plain>(), rows, release::after_stores, l2, host);
  measure(lanes<Vectors, RowsPerBlock, true, streaming, plain>(), rows, release::none, l2, host);
  measure(lanes<Vectors, RowsPerBlock, true, streaming, store_kind::streaming>(), rows, release::at_start, l2, host);
  measure(lanes<Vectors, RowsPerBlock, false, streaming, store_kind::streaming>(), rows, release::after_stores, l2, host);
  measure(lanes<Vectors, RowsPerBlock, true, l2_256b, plain>(), rows, release::at_start, l2, host);
  measure(lanes<Vectors, RowsPerBlock, true, streaming, none>(), rows, release::at_start, l2, host);
  measure(lanes<Vectors, RowsPerBlock, true, l2_256b, none>(), rows, release::at_start, l2, host);
}

template <int RowsPerBlock> void measure_bulk(int rows, int l2, const std::vector<uint16_t>& host) {
  for (const variant& v : {bulk<RowsPerBlock, store_kind::plain>(), bulk<RowsPerBlock, store_kind::streaming>(),
                           bulk<RowsPerBlock, store_kind::bulk>(), bulk<RowsPerBlock, store_kind::none>()})
    measure(v, rows, release::at_start, l2, host);
}

}  // namespace

int main() {
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  std::vector<uint16_t> host(static_cast<size_t>(4608) * 1024);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint16_t>((i * 2654435761u) >> 7);
  for (int rows : {9, 144, 1152, 4608}) {
    measure_mapping<1, 1>(rows, l2, host);
    measure_mapping<1, 4>(rows, l2, host);
    measure_mapping<2, 4>(rows, l2, host);
    measure_mapping<2, 8>(rows, l2, host);
    measure_mapping<4, 8>(rows, l2, host);
    measure_mapping<4, 16>(rows, l2, host);
    measure_bulk<2>(rows, l2, host);
    measure_bulk<4>(rows, l2, host);
    measure_bulk<8>(rows, l2, host);
    measure_bulk<16>(rows, l2, host);
  }
  return 0;
}
