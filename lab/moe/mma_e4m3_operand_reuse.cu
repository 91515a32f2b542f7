// lab/moe/mma_e4m3_operand_reuse.cu — probe (no GPU needed): does ptxas convert an E4M3 operand
// once when several mma.sync.m16n8k32.e4m3 share its registers? On sm_90a each such instruction
// is emulated (F2FP.F16.E4M3.UNPACK_B conversions of A and B, then two HMMA.16816.F32), so the
// grouped gate_up / down kernels pay one conversion per distinct fragment only if ptxas reuses them.
// Each kernel issues N instructions: k_same shares A (distinct B), k_sameb shares B (distinct A),
// k_diff shares neither. Build: nvcc -cubin -arch=sm_90a -O3 -DNN=N; the SASS instruction count
// of each kernel is its .text size / 16 (llvm-readelf -S; sizes are padded to 128 bytes).
#include <cstdint>

template <int N, bool SameA, bool SameB>
__device__ void body(const uint4* a, const uint2* b, float4* d) {
  const int t = threadIdx.x;
  float acc[N][4];
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const uint4 A = a[SameA ? t : t + 32 * n];
    const uint2 B = b[SameB ? t : t + 32 * n];
    acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(acc[n][0]), "+f"(acc[n][1]), "+f"(acc[n][2]), "+f"(acc[n][3])
                 : "r"(A.x), "r"(A.y), "r"(A.z), "r"(A.w), "r"(B.x), "r"(B.y));
  }
#pragma unroll
  for (int n = 0; n < N; ++n) d[t + 32 * n] = make_float4(acc[n][0], acc[n][1], acc[n][2], acc[n][3]);
}
extern "C" __global__ void k_same(const uint4* a, const uint2* b, float4* d) { body<NN, true, false>(a, b, d); }
extern "C" __global__ void k_sameb(const uint4* a, const uint2* b, float4* d) { body<NN, false, true>(a, b, d); }
extern "C" __global__ void k_diff(const uint4* a, const uint2* b, float4* d) { body<NN, false, false>(a, b, d); }
