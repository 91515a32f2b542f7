// gdn-floor: the measured floors under the gdn kernels on this GPU (issue 27), timed exactly as
// netra-bench-gdn times them: a burst of back-to-back calls, each on its own input set (the sets
// cover 3x the L2), captured once into a graph and replayed, median of 30 (cuda_graph_timing.cuh).
//  - memory floors, one per kernel mapping, with the kernel's grid and workgroup: only the
//    compulsory bytes move — K0: the state read once, k, q, v, decay, beta of the token block in,
//    the BF16 outputs out; replay: the state read and written (BF16 or FP32), k, v, decay, beta in;
//    conv: weights, the slot's history, x in, y and windows (or the final state) out. No arithmetic
//    beyond an xor fold that keeps every load live (stored as part of the outputs).
//  - the FP32-issue floor of the K0 core: the kernel's grid, workgroup and register cap, and per
//    state element per token the kernel's 4 FP32 operations (the decay mul, the k-dot fma, the
//    update fma, the q-dot fma), with no memory traffic and independent chains (no latency floor).
//  - the replay's FP32-issue floor: the same program with the replay's 3 operations (no q dot).
//  - k0_read_then_issue: the FP32-issue program whose workgroups first read their FP32 state block
//    (the plain grid's order: the read, then the arithmetic, two workgroups a SM) — what the
//    memory and issue floors cost when a workgroup does them one after the other.
//  - --conv-only runs the conv floors alone (its SiLU-issue floor, with either division, is
//    bench/gdn_conv_floor.cu).
//  - --residency-only: the replay's read, issue and commit in one workgroup at 2 and 4 workgroups
//    a SM, K0's read then issue on half heads, the M16 grid's launch floor and memory floor.
//  - the copy bandwidth (a 2 GiB device-to-device copy, bytes read + written), for rooflines.
// Prints one JSON object per floor on stdout.
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using floor_bench::check;
constexpr int HV = 32, H = 16, K = 128, V = 128, D = 8192, T = 12, gdn_floor_tokens = T;
constexpr double l2 = 60.0 * 1024 * 1024;

__device__ unsigned fold(const uint4& v) { return v.x ^ v.y ^ v.z ^ v.w; }

int sets_for(double bytes) { return std::max(2, std::min(64, static_cast<int>(3 * l2 / bytes) + 1)); }

struct buffer {
  void* p = nullptr;
  size_t bytes = 0;
  explicit buffer(size_t n) : bytes(n) {
    check(cudaMalloc(&p, n), "cudaMalloc");
    check(cudaMemset(p, 0x3C, n), "cudaMemset");
  }
  ~buffer() { cudaFree(p); }
  template <class X> X* as(size_t offset_bytes = 0) const { return reinterpret_cast<X*>(static_cast<char*>(p) + offset_bytes); }
};

// ------------------------------------------------------------------------------------ recurrent
/// Workgroup (x, hv, b) of Threads threads owns Columns value columns of v head hv of request b
/// (the kernel's grid (V / Columns, 32, B)); StateBytes 4 (FP32) or 2 (BF16). Commit: the replay
/// (state written back, no q, no outputs); else K0 (outputs, state only read), or with Final M16
/// (outputs and the state written back) over Tokens tokens.
template <int Threads, int Columns, int StateBytes, bool Replay, int T = gdn_floor_tokens, bool Final = false>
__global__ void __launch_bounds__(Threads) recurrent_memory(const uint4* state, uint4* state_out, const uint4* k, const uint4* q, const uint4* v,
                                                            const float* decay, const float* beta, unsigned* out) {
  constexpr int state_vectors = Columns * K * StateBytes / 16 / Threads;  // 16-byte vectors per thread
  const int x = blockIdx.x, hv = blockIdx.y, b = blockIdx.z, t0 = threadIdx.x;
  const size_t head_base = ((static_cast<size_t>(b) * HV + hv) * V + x * Columns) * K * StateBytes / 16;
  uint4 s[state_vectors];
#pragma unroll
  for (int i = 0; i < state_vectors; ++i) s[i] = state[head_base + t0 + i * Threads];
  unsigned f = 0;
  // Token inputs: k (and q) of head hv / 2 for T tokens, v of the columns, decay, beta.
  constexpr int kq_vectors = (Replay ? 1 : 2) * T * K / 4;
  for (int e = t0; e < kq_vectors; e += Threads) {
    const int which = e / (T * K / 4), t = (e / (K / 4)) % T, c = e % (K / 4);
    f ^= fold((which ? q : k)[((static_cast<size_t>(b) * T + t) * H + hv / 2) * (K / 4) + c]);
  }
  for (int e = t0; e < T * Columns / 8; e += Threads) {
    const int t = e / (Columns / 8), c = e % (Columns / 8);
    f ^= fold(v[((static_cast<size_t>(b) * T + t) * D + 4096 + hv * V + x * Columns) / 8 + c]);
  }
  if (t0 < T) f ^= __float_as_uint(decay[(b * T + t0) * HV + hv]) ^ __float_as_uint(beta[(b * T + t0) * HV + hv]);
#pragma unroll
  for (int i = 0; i < state_vectors; ++i) f ^= fold(s[i]);
  if constexpr (Replay || Final) {
#pragma unroll
    for (int i = 0; i < state_vectors; ++i) state_out[head_base + t0 + i * Threads] = make_uint4(s[i].x ^ f, s[i].y, s[i].z, s[i].w);
  }
  if constexpr (!Replay) {
    // Outputs: T x Columns BF16 per workgroup, 4 bytes a thread-store, as the kernel's lanes.
    for (int e = t0; e < T * Columns / 2; e += Threads) {
      const int t = e / (Columns / 2), c = e % (Columns / 2);
      out[((static_cast<size_t>(b) * T + t) * HV * V + hv * V + x * Columns) / 2 + c] = f + e;
    }
  }
}

template <int Threads, int Columns, int StateBytes, bool Replay, int T = gdn_floor_tokens, bool Final = false>
void run_recurrent_memory(cudaStream_t stream, int B, const char* mapping) {
  const double state_bytes = static_cast<double>(B) * HV * V * K * StateBytes;
  const double token_bytes = static_cast<double>(B) * T * ((Replay ? 1 : 2) * H * K * 4.0 + HV * V * 2.0 + 2 * HV * 4.0);
  const double out_bytes = (Replay || Final ? state_bytes : 0) + (Replay ? 0 : static_cast<double>(B) * T * HV * V * 2);
  const double bytes = state_bytes + token_bytes + out_bytes;
  const int n = sets_for(bytes);
  const size_t sb = static_cast<size_t>(state_bytes), kb = static_cast<size_t>(B) * T * H * K * 4, vb = static_cast<size_t>(B) * T * D * 2,
               gb = static_cast<size_t>(B) * T * HV * 4, ob = static_cast<size_t>(B) * T * HV * V * 2;
  constexpr bool writes_state = Replay || Final;
  buffer st(n * sb), so(writes_state ? n * sb : 16), kk(n * kb), qq(n * kb), vv(n * vb), dd(n * gb), bb(n * gb), oo(n * ob);
  const dim3 grid(V / Columns, HV, B);
  const double us = floor_bench::graph_median_us(stream, n, [&] {
    for (int i = 0; i < n; ++i)
      recurrent_memory<Threads, Columns, StateBytes, Replay, T, Final><<<grid, Threads, 0, stream>>>(
          st.as<uint4>(i * sb), so.as<uint4>(writes_state ? i * sb : 0), kk.as<uint4>(i * kb), qq.as<uint4>(i * kb), vv.as<uint4>(i * vb),
          dd.as<float>(i * gb), bb.as<float>(i * gb), oo.as<unsigned>(i * ob));
  });
  check(cudaGetLastError(), "recurrent_memory");
  std::printf("{\"floor\": \"%s_memory\", \"mapping\": \"%s\", \"batch\": %d, \"t\": %d, \"state_dtype\": \"%s\", \"graph_us\": %.3f, \"bytes\": %.0f}\n",
              Replay ? "replay" : Final ? "m16" : "k0", mapping, B, T, StateBytes == 4 ? "fp32" : "bf16", us, bytes);
}

/// The launch floor of a grid: Calls back-to-back launches of an empty kernel (graph-replayed like the kernels).
__global__ void empty_workgroups() {}
void run_launch_floor(cudaStream_t stream, dim3 grid, int threads, const char* mapping) {
  constexpr int calls = 64;
  const double us = floor_bench::graph_median_us(stream, calls, [&] {
    for (int i = 0; i < calls; ++i) empty_workgroups<<<grid, threads, 0, stream>>>();
  });
  check(cudaGetLastError(), "empty_workgroups");
  std::printf("{\"floor\": \"launch\", \"mapping\": \"%s\", \"grid\": [%u, %u, %u], \"threads\": %d, \"graph_us\": %.3f}\n", mapping, grid.x, grid.y,
              grid.z, threads, us);
}

// ------------------------------------------------------------------------------------ FP32 issue
/// E state elements per thread, held in registers; per token t the kernel's 4 FP32 operations per
/// element: s = a s (mul), p = fma(s, k, p) (the k dot), s = fma(k, u, s) (update), o = fma(s, q, o)
/// (the q dot), with 4 independent partials per dot so no chain latency limits issue. a, u and the
/// k, q values are run-time values (a parameter array), so nothing folds.
/// Load (state bytes per element, 0 none, 4 FP32, 2 BF16): the state elements come from the
/// workgroup's state block first (16-byte loads, all in flight, the kernel's read) — the state read,
/// then the arithmetic, in one workgroup, as the kernel's plain grid runs them; with Replay the
/// block is stored back after the last token (the replay's commit, in place).
template <int Threads, int E, int MinBlocks, bool Replay, int Load = 0>
__global__ void __launch_bounds__(Threads, MinBlocks) fp32_issue(const float* in, float* out, uint4* state = nullptr) {
  constexpr int per_vector = Load == 2 ? 8 : 4;
  float s[E];
  const float seed = in[threadIdx.x % 32];
  [[maybe_unused]] const size_t base = ((static_cast<size_t>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * Threads * (E / per_vector);
  if constexpr (Load > 0) {
#pragma unroll
    for (int i = 0; i < E / per_vector; ++i) {
      const uint4 w = state[base + threadIdx.x + static_cast<size_t>(i) * Threads];
      const unsigned u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
      for (int e = 0; e < per_vector; ++e)
        s[per_vector * i + e] = Load == 4 ? __uint_as_float(u[e]) : __uint_as_float(e % 2 ? u[e / 2] & 0xFFFF0000u : u[e / 2] << 16);
    }
  } else {
#pragma unroll
    for (int i = 0; i < E; ++i) s[i] = seed + static_cast<float>(i);
  }
  float kq[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) kq[i] = in[32 + i];
  float o = 0.0f;
#pragma unroll 1
  for (int t = 0; t < T; ++t) {
    const float a = in[64 + t];
    float p[4] = {0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < E; ++i) {
      s[i] = a * s[i];
      p[i % 4] = fmaf(s[i], kq[i % 4], p[i % 4]);
    }
    const float u = (p[0] + p[1]) + (p[2] + p[3]);
    float r[4] = {0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < E; ++i) {
      s[i] = fmaf(kq[4 + i % 4], u, s[i]);
      if constexpr (!Replay) r[i % 4] = fmaf(s[i], kq[i % 4], r[i % 4]);
    }
    if constexpr (!Replay) o += (r[0] + r[1]) + (r[2] + r[3]);
  }
  if constexpr (Replay && Load > 0) {  // the commit: the block back in its storage (BF16: the high halves)
#pragma unroll
    for (int i = 0; i < E / per_vector; ++i) {
      unsigned u[4];
#pragma unroll
      for (int e = 0; e < 4; ++e)
        u[e] = Load == 4 ? __float_as_uint(s[4 * i + e]) : (__float_as_uint(s[8 * i + 2 * e]) >> 16) | (__float_as_uint(s[8 * i + 2 * e + 1]) & 0xFFFF0000u);
      state[base + threadIdx.x + static_cast<size_t>(i) * Threads] = make_uint4(u[0], u[1], u[2], u[3]);
    }
  } else if constexpr (Replay) {  // the state is the result (static indices: a run-time index would put s in local memory)
#pragma unroll
    for (int i = 0; i < E; ++i) o += s[i];
  }
  if (o == 1.2345f) out[blockIdx.x] = o;  // never true: keeps the work live
}

/// Resident > 0: at most that many workgroups a SM (dynamic shared memory that only that many fit
/// beside each other), the residency of the kernel whose registers the program does not need.
template <int Threads, int E, int MinBlocks, bool Replay = false, int Load = 0, int Resident = 0>
void run_fp32_issue(cudaStream_t stream, int B, int grid_x, const char* mapping) {
  buffer in(1024), out(1024);
  const int smem = Resident > 0 ? 200 * 1024 / Resident : 0;
  if (Resident > 0)
    check(cudaFuncSetAttribute(fp32_issue<Threads, E, MinBlocks, Replay, Load>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem attribute");
  const size_t state_bytes = Load > 0 ? static_cast<size_t>(B) * HV * V * K * Load : 16;
  const int sets = Load > 0 ? sets_for(static_cast<double>(state_bytes) * (Replay ? 2 : 1)) : 4;
  buffer st(sets * state_bytes);
  std::vector<float> h(128);
  for (int i = 0; i < 128; ++i) h[i] = 0.5f + 0.001f * static_cast<float>(i);
  check(cudaMemcpy(in.p, h.data(), h.size() * 4, cudaMemcpyHostToDevice), "upload");
  const dim3 grid(grid_x, HV, B);
  const double us = floor_bench::graph_median_us(stream, sets, [&] {
    for (int i = 0; i < sets; ++i)
      fp32_issue<Threads, E, MinBlocks, Replay, Load><<<grid, Threads, smem, stream>>>(in.as<float>(), out.as<float>(), st.as<uint4>(Load > 0 ? i * state_bytes : 0));
  });
  check(cudaGetLastError(), "fp32_issue");
  const double ops = static_cast<double>(B) * HV * V * K * T * (Replay ? 3 : 4);
  const char* name = Replay ? (Load > 0 ? "replay_read_issue_write" : "replay_fp32_issue") : Load > 0 ? "k0_read_then_issue" : "k0_fp32_issue";
  std::printf("{\"floor\": \"%s\", \"mapping\": \"%s\", \"batch\": %d, \"t\": %d, \"state_dtype\": \"%s\", \"graph_us\": %.3f, \"fp32_ops\": %.0f, "
              "\"fp32_ops_per_s\": %.4g, \"workgroups_per_sm\": %d}\n",
              name, mapping, B, T, Load == 2 ? "bf16" : Load == 4 ? "fp32" : "none", us, ops, ops / us * 1e6, Resident);
}


// ------------------------------------------------------------------------------------ conv
/// The conv's grid (D / (8 Threads), B, Groups): thread x of workgroup (w, b, g) owns channels
/// c0 .. c0 + 7 for the T / Groups tokens of group g: weights (4 x 16 B), the history (the slot's
/// 3 x 16 B for group 0, else 3 x-vectors), its x vectors; y per token (16 B), windows per token
/// (3 x 16 B) or the final state (3 x 16 B, last group).
template <int Threads, int Groups, bool Windows> __global__ void __launch_bounds__(Threads) conv_memory(const uint4* x, const uint4* w, const uint4* state, uint4* y,
                                                                                                      uint4* windows, uint4* state_out) {
  constexpr int G = T / Groups;
  const int b = blockIdx.y, g = blockIdx.z, c8 = blockIdx.x * Threads + threadIdx.x;  // 8-channel vector index
  const size_t slot = static_cast<size_t>(b) * 3 * D / 8;
  unsigned f = fold(w[4 * c8]) ^ fold(w[4 * c8 + 1]) ^ fold(w[4 * c8 + 2]) ^ fold(w[4 * c8 + 3]);
  uint4 h[3];
  for (int j = 0; j < 3; ++j) {
    const int pos = g * G - 3 + j;
    h[j] = pos < 0 ? state[slot + 3 * c8 + j] : x[(static_cast<size_t>(b) * T + pos) * (D / 8) + c8];
  }
  uint4 xs[G];
#pragma unroll
  for (int t = 0; t < G; ++t) xs[t] = x[(static_cast<size_t>(b) * T + g * G + t) * (D / 8) + c8];
#pragma unroll
  for (int t = 0; t < G; ++t) {
    const size_t row = static_cast<size_t>(b) * T + g * G + t;
    f ^= fold(xs[t]);
    y[row * (D / 8) + c8] = make_uint4(xs[t].x ^ f, xs[t].y, xs[t].z, xs[t].w);
    h[0] = h[1], h[1] = h[2], h[2] = xs[t];
    if constexpr (Windows)
      for (int j = 0; j < 3; ++j) windows[row * 3 * (D / 8) + 3 * c8 + j] = h[j];
  }
  if constexpr (!Windows)
    if (g == Groups - 1)
      for (int j = 0; j < 3; ++j) state_out[slot + 3 * c8 + j] = h[j];
}

template <int Threads, int Groups, bool Windows> void run_conv_memory(cudaStream_t stream, int B, const char* mapping) {
  const size_t xb = static_cast<size_t>(B) * T * D * 2, sb = static_cast<size_t>(B) * 3 * D * 2, wb = static_cast<size_t>(D) * 4 * 2;
  const double bytes = 2.0 * xb + (Windows ? sb + T * sb : 2.0 * sb) + wb;
  const int n = sets_for(bytes);
  buffer x(n * xb), y(n * xb), w(wb), st(n * sb), win(Windows ? n * T * sb : 16);
  const dim3 grid(D / 8 / Threads, B, Groups);
  const double us = floor_bench::graph_median_us(stream, n, [&] {
    for (int i = 0; i < n; ++i)
      conv_memory<Threads, Groups, Windows><<<grid, Threads, 0, stream>>>(x.as<uint4>(i * xb), w.as<uint4>(), st.as<uint4>(i * sb), y.as<uint4>(i * xb),
                                                                        win.as<uint4>(Windows ? i * T * sb : 0), st.as<uint4>(i * sb));
  });
  check(cudaGetLastError(), "conv_memory");
  std::printf("{\"floor\": \"conv_memory\", \"mapping\": \"%s\", \"batch\": %d, \"t\": %d, \"windows\": %s, \"graph_us\": %.3f, \"bytes\": %.0f}\n", mapping,
              B, T, Windows ? "true" : "false", us, bytes);
}

// ------------------------------------------------------------------------------------ copy
__global__ void __launch_bounds__(256) copy16(const uint4* src, uint4* dst, size_t n) {
  for (size_t i = blockIdx.x * 256ull + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * 256) dst[i] = src[i];
}
void run_copy(cudaStream_t stream) {
  const size_t bytes = size_t{1} << 30;
  buffer a(bytes), b(bytes);
  const double us = floor_bench::graph_median_us(stream, 1, [&] { copy16<<<132 * 16, 256, 0, stream>>>(a.as<uint4>(), b.as<uint4>(), bytes / 16); });
  check(cudaGetLastError(), "copy16");
  std::printf("{\"floor\": \"copy\", \"bytes\": %.0f, \"graph_us\": %.3f, \"bytes_per_s\": %.4g}\n", 2.0 * bytes, us, 2.0 * bytes / us * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  run_copy(stream);
  if (argc > 1 && std::string(argv[1]) == "--residency-only") {
    // The replay B 128 read, issue and commit in one workgroup at the whole-head kernel's residency
    // (8 warps, 2 a SM) against half heads (4 warps, 4 a SM); K0 B 64's read then issue on half heads;
    // M16 B 1: the launch of its grid alone and its compulsory bytes on it (T 16, state committed).
    run_fp32_issue<256, 64, 2, true, 2, 2>(stream, 128, 1, "head: grid (1, 32, B), 256 threads, 64 elements a thread, 2 workgroups a SM");
    run_fp32_issue<128, 64, 4, true, 2, 4>(stream, 128, 2, "half heads: grid (2, 32, B), 128 threads, 64 elements a thread, 4 workgroups a SM");
    run_fp32_issue<256, 64, 2, true, 4, 2>(stream, 128, 1, "head: grid (1, 32, B), 256 threads, 64 elements a thread, 2 workgroups a SM");
    run_fp32_issue<128, 64, 4, true, 4, 4>(stream, 128, 2, "half heads: grid (2, 32, B), 128 threads, 64 elements a thread, 4 workgroups a SM");
    run_fp32_issue<128, 64, 4, false, 4, 4>(stream, 64, 2, "half heads: grid (2, 32, B), 128 threads, 64 elements a thread, 4 workgroups a SM");
    run_fp32_issue<256, 64, 2, false, 4, 2>(stream, 64, 1, "head: grid (1, 32, B), 256 threads, 64 elements a thread, 2 workgroups a SM");
    run_launch_floor(stream, dim3(4, HV, 1), 128, "M16 (8, 3, 4): grid (4, 32, 1), 128 threads");
    run_launch_floor(stream, dim3(2, HV, 1), 256, "M16 (8, 3, 8): grid (2, 32, 1), 256 threads");
    run_launch_floor(stream, dim3(4, 16, 1), 256, "precompute B 1 T 16: grid (4, 16), 256 threads");
    run_recurrent_memory<128, 32, 4, false, 16, true>(stream, 1, "M16 (8, 3, 4): grid (4, 32, 1), 128 threads");
    run_recurrent_memory<128, 32, 2, false, 16, true>(stream, 1, "M16 (8, 3, 4): grid (4, 32, 1), 128 threads");
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--conv-only") {  // the conv floors alone, B 64
    run_conv_memory<256, 1, true>(stream, 64, "default: grid (4, B), 256 threads, 12 tokens a thread");
    run_conv_memory<256, 1, false>(stream, 64, "default: grid (4, B), 256 threads, 12 tokens a thread");
    run_conv_memory<256, 2, true>(stream, 64, "two groups: grid (4, B, 2), 256 threads, 6 tokens a thread");
    run_conv_memory<256, 2, false>(stream, 64, "two groups: grid (4, B, 2), 256 threads, 6 tokens a thread");
    run_conv_memory<256, 3, false>(stream, 64, "three groups: grid (4, B, 3), 256 threads, 4 tokens a thread");
    return 0;
  }
  for (int B : {1, 16, 64}) {
    // FP32-issue floors: the whole-head map (256 threads, 64 elements, 2 workgroups per SM), the
    // per-token default (32 threads, 32 elements).
    run_fp32_issue<256, 64, 2>(stream, B, 1, "head: grid (1, 32, B), 256 threads, 64 elements a thread, cap 128 registers");
    run_fp32_issue<32, 32, 1>(stream, B, 16, "per_token: grid (16, 32, B), 32 threads, 32 elements a thread");
    // The same at the whole-head kernel's residency (2 workgroups a SM; the program alone needs 84
    // registers, 3 a SM), and with each workgroup reading its FP32 state block first.
    run_fp32_issue<256, 64, 2, false, false, 2>(stream, B, 1, "head: grid (1, 32, B), 256 threads, 64 elements a thread, 2 workgroups a SM");
    run_fp32_issue<256, 64, 2, false, 4, 2>(stream, B, 1, "head: grid (1, 32, B), 256 threads, 64 elements a thread read from the FP32 state first, 2 workgroups a SM");
    run_recurrent_memory<256, 128, 4, false>(stream, B, "head: grid (1, 32, B), 256 threads");
    run_recurrent_memory<256, 128, 2, false>(stream, B, "head: grid (1, 32, B), 256 threads");
    run_recurrent_memory<32, 8, 4, false>(stream, B, "per_token: grid (16, 32, B), 32 threads");
    run_recurrent_memory<32, 8, 2, false>(stream, B, "per_token: grid (16, 32, B), 32 threads");
    run_conv_memory<256, 1, true>(stream, B, "default: grid (4, B), 256 threads, 12 tokens a thread");
    run_conv_memory<256, 1, false>(stream, B, "default: grid (4, B), 256 threads, 12 tokens a thread");
    run_conv_memory<256, 12, true>(stream, B, "one token a thread: grid (4, B, 12), 256 threads");
    run_conv_memory<256, 12, false>(stream, B, "one token a thread: grid (4, B, 12), 256 threads");
    run_conv_memory<64, 1, true>(stream, B, "preload: grid (16, B), 64 threads, 12 tokens a thread");
    run_conv_memory<64, 1, false>(stream, B, "preload: grid (16, B), 64 threads, 12 tokens a thread");
    run_conv_memory<256, 2, true>(stream, B, "two groups: grid (4, B, 2), 256 threads, 6 tokens a thread");
    run_conv_memory<256, 2, false>(stream, B, "two groups: grid (4, B, 2), 256 threads, 6 tokens a thread");
    run_conv_memory<256, 3, false>(stream, B, "three groups: grid (4, B, 3), 256 threads, 4 tokens a thread");
  }
  run_fp32_issue<256, 64, 2, true>(stream, 128, 1, "head: grid (1, 32, B), 256 threads, 64 elements a thread, cap 128 registers");
  for (int B : {1, 16, 64, 128}) {
    run_recurrent_memory<256, 128, 2, true>(stream, B, "head: grid (1, 32, B), 256 threads");
    run_recurrent_memory<256, 128, 4, true>(stream, B, "head: grid (1, 32, B), 256 threads");
    run_recurrent_memory<32, 8, 2, true>(stream, B, "per_token: grid (16, 32, B), 32 threads");
  }
  cudaStreamDestroy(stream);
  return 0;
}
