// act-quant-copy-floor: the measured floor under act_quant on this GPU. A kernel that moves the
// same bytes as act_quant — reads each [R, 1024] BF16 row (16-byte streaming loads of gate and
// up), writes [R, 512] bytes and [R, 4] FP32 — with no arithmetic beyond an xor that keeps every
// load live, timed exactly as netra-bench-moe-routing times act_quant: a burst of back-to-back
// calls, each on its own input and output set (the sets cover 3x the L2 once a set reaches
// 50 KiB, else 1.5x), captured once into a graph and replayed, median of 30. So no kernel that
// reads every input value after its producer completes and writes act_quant's outputs can beat it
// on the same GPU and launch path.
// Variants: act_quant's own mapping family (L = 64 / V threads per row, thread j of a row owns the
// V chunks of 8 values at 8j + 8Lc; RowsPerBlock rows per block), V = 1, 2, 4 with 1 to 16 rows per
// block, each in three launch modes: programmatic dependent launch releasing the successor at once,
// before the wait (as netra's act_quant does for calls of up to 144 rows), releasing it after the
// thread's stores (as act_quant does above 144 rows), and no programmatic dependent launch. Prints
// one JSON object per (variant, rows, mode) on stdout.
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

using floor_bench::check;

enum class release { at_start, after_stores, none };  // none: launched without the attribute
const char* name(release r) { return r == release::at_start ? "at_start" : r == release::after_stores ? "after_stores" : "none"; }

template <int Vectors, int RowsPerBlock, bool ReleaseAtStart>
__global__ void __launch_bounds__(RowsPerBlock * 64 / Vectors) copy_rows(const uint4* in, uint2* out, unsigned* scales, int rows) {
  constexpr int lanes = 64 / Vectors;  // threads per row
  if (ReleaseAtStart) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int row = blockIdx.x * RowsPerBlock + threadIdx.x / lanes;
  if (row >= rows) {
    if (!ReleaseAtStart) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    return;
  }
  const int j = threadIdx.x % lanes;
  const uint4* x = in + static_cast<long>(row) * 128;  // 1024 BF16 = 128 vectors of 16 bytes
  uint4 gate[Vectors], up[Vectors];
#pragma unroll
  for (int c = 0; c < Vectors; ++c) {
    gate[c] = __ldcs(x + j + lanes * c);
    up[c] = __ldcs(x + 64 + j + lanes * c);
  }
  unsigned s = 0;
#pragma unroll
  for (int c = 0; c < Vectors; ++c) {
    out[static_cast<long>(row) * 64 + j + lanes * c] = make_uint2(gate[c].x ^ up[c].y ^ gate[c].z, gate[c].y ^ up[c].x ^ up[c].w);
    s ^= gate[c].w ^ up[c].z;
  }
  if (j % 16 == 0)
#pragma unroll
    for (int c = 0; c < Vectors; ++c) scales[row * 4 + (j + lanes * c) / 16] = s + c;
  if (!ReleaseAtStart) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

int input_sets(size_t bytes_per_set, int l2) {  // netra-bench-moe-routing's rule
  const double factor = bytes_per_set >= 50 * 1024 ? 3.0 : 1.5;
  return static_cast<int>(std::clamp<size_t>(static_cast<size_t>(factor * l2 / static_cast<double>(bytes_per_set)) + 1, 2, 4096));
}

using copy_kernel = void (*)(const uint4*, uint2*, unsigned*, int);
void measure(copy_kernel kernel, int vectors, int rows_per_block, int rows, release mode, int l2, const std::vector<uint16_t>& host) {
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
  config.gridDim = dim3((rows + rows_per_block - 1) / rows_per_block, 1, 1);
  config.blockDim = dim3(rows_per_block * 64 / vectors, 1, 1);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = mode == release::none ? 0 : 1;
  auto burst = [&] {
    for (int s = 0; s < sets; ++s)
      check(cudaLaunchKernelEx(&config, kernel, static_cast<const uint4*>(in[s]), static_cast<uint2*>(out[s]), static_cast<unsigned*>(scales[s]), rows),
            "launch");
  };
  const double us = floor_bench::graph_median_us(stream, sets, burst);
  std::printf("{\"kernel\": \"act_quant_copy_floor\", \"vectors_per_lane\": %d, \"rows_per_block\": %d, \"rows\": %d, \"pdl\": %s, "
              "\"release\": \"%s\", \"input_sets\": %d, \"bytes\": %zu, \"graph_us\": %.3f}\n",
              vectors, rows_per_block, rows, mode == release::none ? "false" : "true", name(mode), sets, in_bytes + out_bytes + scale_bytes, us);
  std::fflush(stdout);
  cudaStreamDestroy(stream);
  for (int s = 0; s < sets; ++s) cudaFree(in[s]), cudaFree(out[s]), cudaFree(scales[s]);
}

template <int Vectors, int RowsPerBlock> void measure_mapping(int rows, int l2, const std::vector<uint16_t>& host) {
  measure(copy_rows<Vectors, RowsPerBlock, true>, Vectors, RowsPerBlock, rows, release::at_start, l2, host);
  measure(copy_rows<Vectors, RowsPerBlock, false>, Vectors, RowsPerBlock, rows, release::after_stores, l2, host);
  measure(copy_rows<Vectors, RowsPerBlock, true>, Vectors, RowsPerBlock, rows, release::none, l2, host);
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
  }
  return 0;
}
