// gdn-conv-floor: the conv update's SiLU-issue floor with its shipped division against the IEEE one
// (issue 27): on the conv's grid (4, B, G), 256 threads, each thread 8 channels x T / G tokens of
// the kernel's per-output arithmetic — 4 taps (mul, 3 fma), then netra's silu_f32 (exp_f32 and one
// IEEE division) or the conv's gdn_conv_silu::silu (the same exp, the branch-free division: its
// reciprocal from the integer seed or from the instruction, contract field Division; or the lean
// form, silu_lean with the instruction's seed, contract field Silu), BF16
// packing — from registers, no memory traffic but one 16-byte store a thread. MinBlocks: the
// launch bound. Timed as gdn-floor and netra-bench-gdn time (cuda_graph_timing.cuh); B 64, T 12.
// Prints one JSON object per floor.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"
#include "netra/kernels/gdn/conv_silu.hpp"

namespace {
constexpr int D = 8192, T = 12, Threads = 256;

enum division { ieee, integer_seed, instruction_seed, lean_instruction_seed };
template <int Groups, int MinBlocks, division Division> __global__ void __launch_bounds__(Threads, MinBlocks) silu_issue(uint4* out, unsigned seed) {
  const int c8 = blockIdx.x * Threads + threadIdx.x;
  float h[8][4];
  for (int c = 0; c < 8; ++c)
    for (int j = 0; j < 4; ++j) h[c][j] = __uint_as_float(0x3F000000u + ((seed * (c8 + 1) * (c + 3) * (j + 5)) & 0x7FFFFu));
  unsigned f = 0;
#pragma unroll
  for (int t = 0; t < T / Groups; ++t) {
    float o[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      float acc = netra::mul_rn(h[c][3], h[c][0]);
      acc = netra::fma_rn(h[c][2], h[c][1], acc), acc = netra::fma_rn(h[c][1], h[c][2], acc), acc = netra::fma_rn(h[c][0], h[c][3], acc);
      namespace cs = netra::kernels::gdn_conv_silu;
      if constexpr (Division == ieee) o[c] = netra::silu_f32(acc);
      else if constexpr (Division == integer_seed) o[c] = cs::silu(acc);
      else if constexpr (Division == instruction_seed) o[c] = cs::silu(acc, cs::two_steps_from_instruction{});
      else o[c] = cs::silu_lean(acc, cs::two_steps_from_instruction{});
      h[c][t % 4] = netra::add_rn(h[c][t % 4], 1.0f);  // the next token's inputs (independent of this token's output, as in the kernel)
    }
#pragma unroll
    for (int c = 0; c < 8; c += 2) {
      __nv_bfloat162 v = __floats2bfloat162_rn(o[c], o[c + 1]);
      f ^= *reinterpret_cast<unsigned*>(&v);
    }
  }
  out[(static_cast<size_t>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x * Threads + c8] = make_uint4(f, 0, 0, 0);
}

template <int Groups, int MinBlocks, division Division> void run(cudaStream_t stream, int B) {
  const dim3 grid(D / 8 / Threads, B, Groups);
  uint4* out = nullptr;
  floor_bench::check(cudaMalloc(&out, static_cast<size_t>(grid.x) * grid.y * grid.z * Threads * 16), "cudaMalloc");
  const double us = floor_bench::graph_median_us(stream, 8, [&] {
    for (int i = 0; i < 8; ++i) silu_issue<Groups, MinBlocks, Division><<<grid, Threads, 0, stream>>>(out, 7u + i);
  });
  floor_bench::check(cudaGetLastError(), "silu_issue");
  std::printf("{\"floor\": \"conv_silu_issue\", \"division\": \"%s\", \"mapping\": \"grid (4, B, %d), 256 threads, %d tokens a thread, %d workgroups a SM\", "
              "\"batch\": %d, \"t\": %d, \"graph_us\": %.3f, \"outputs\": %d}\n",
              Division == ieee ? "ieee" : Division == integer_seed ? "branch_free" : Division == instruction_seed ? "branch_free_instruction_seed" : "lean_instruction_seed", Groups, T / Groups, MinBlocks, B, T, us, B * T * D);
  floor_bench::check(cudaFree(out), "cudaFree");
}
}  // namespace

int main() {
  cudaStream_t stream;
  floor_bench::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  run<2, 2, ieee>(stream, 64), run<2, 2, integer_seed>(stream, 64);
  run<3, 3, ieee>(stream, 64), run<3, 3, integer_seed>(stream, 64), run<3, 3, instruction_seed>(stream, 64), run<3, 3, lean_instruction_seed>(stream, 64);
  return 0;
}
