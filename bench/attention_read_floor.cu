// attention-read-floor: the measured floor under contracts::attention_gqa8 on this GPU for a given
// grid: kernels that move exactly the compulsory bytes of a call (the BF16 queries in; every
// position's FP8 K and V rows of its KV head once, through the same paged indirection kv_indptr ->
// kv_indices -> slot; the BF16 output out) with netra's launch structure, and no attention math.
//   stage one  grid (slices, 2, batch), `threads` threads: workgroup (slice, KV head, request) reads
//              its 8 * Tq query rows and the slice's positions [start, end), chunk = round_up(ceil(L /
//              slices), round) as in attention_gqa8::chunk_for; thread i takes the 16-byte pieces i,
//              i + threads, ... of the slice's 32 pieces per position (16 of K, 16 of V), 16 loads
//              in flight per thread, each batch's slot ids loaded one batch ahead; it folds the bytes
//              into one word (xor). slices = 1: writes the rows' BF16 out; else the slice's FP32
//              (m, l, o) to a workspace, as netra's stage one does.
//   stage two  (slices > 1) grid (2 * 8 * Tq, batch), 256 threads: thread d reads every slice's o[d]
//              and (m, l) of its row (16 in flight) and writes out[row][d].
// Mode `widen` adds the E4M3 -> BF16 widening of dsl/convert_e4m3_bf16.hpp on the same bytes, R
// times per loaded word (netra's decode widens each byte once; a verify mapping whose waves each
// widen their block, one wave per query token, widens each byte Tq = 12 times); `empty`: both
// kernels return at once (launch and graph overhead alone).
// netra's grids take their slice count from the contract's slices_for on this device's SM count.
// Before measuring, the program checks the device widening against e4m3x4_to_bf16x4_reference on
// all 65,536 byte pairs in both halves of a word (exit 3 on a difference).
// NETRA_FLOOR_ONLY=<prefix>[,<prefix>...] measures only the grids whose "<shape> <mapping>" starts with one of them.
// Inputs rotate past the L2 (sets covering 3x its size); a burst of calls is captured once into a
// graph and replayed, median of 30 (bench/cuda_graph_timing.cuh). One JSON object per line.
#include <cuda_runtime.h>

#include "cuda_graph_timing.cuh"
#include "netra/contracts/attention/gqa8_paged.hpp"
#include "netra/dsl/convert_e4m3_bf16.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

using floor_bench::check;
using netra::u32;

constexpr int hq = 16, hkv = 2, d = 256, in_flight = 16;

struct args {
  const uint4* q;     // [tokens, 16, 256] BF16 as 16-byte pieces
  uint16_t* out;      // [tokens, 16, 256] BF16
  const uint8_t* k;   // [slots, 2, 256] E4M3
  const uint8_t* v;
  const int* kv_indptr;
  const int64_t* kv_indices;
  float* ws_o;        // [batch * slices, 2, rows, 256]
  float* ws_stats;    // [batch * slices, 2, rows, 2]
  int tq, slices, round, widen;
};

__device__ u32 fold_piece(uint4 x, int widen) {
  u32 acc = x.x ^ x.y ^ x.z ^ x.w;
  for (int r = 0; r < widen; ++r)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const netra::bf16x4 b = netra::e4m3x4_to_bf16x4<netra::sm90a>((&x.x)[i] ^ static_cast<u32>(r));
      acc ^= b.lo + b.hi;
    }
  return acc;
}

/// Word w of pattern i: the byte pair i in both halves (words 0, 1) or swapped halves (2, 3).
__host__ __device__ u32 pattern_word(u32 i, u32 w) { return w < 2 ? i | (i << 16) : ((i >> 8) | ((i & 0xFFu) << 8)) | (i << 16); }

__global__ void widen_all(netra::bf16x4* out) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  for (u32 w = 0; w < 4; ++w) out[4 * i + w] = netra::e4m3x4_to_bf16x4<netra::sm90a>(pattern_word(i, w));
}

template <bool Empty> __global__ void stage_one(args a) {
  if constexpr (Empty) return;
  const int slice = blockIdx.x, head = blockIdx.y, b = blockIdx.z, rows = 8 * a.tq;
  const int begin = a.kv_indptr[b], length = a.kv_indptr[b + 1] - begin;
  const int per = (length + a.slices - 1) / a.slices, chunk = (per + a.round - 1) / a.round * a.round;
  const int start = min(slice * chunk, length), end = min(start + chunk, length);
  u32 acc = 0;
  for (int c = threadIdx.x; c < rows * 32; c += blockDim.x) {  // the rows' queries: 32 pieces each
    const int t = c / 32 / 8, r = c / 32 % 8;
    acc ^= fold_piece(a.q[((static_cast<int64_t>(b) * a.tq + t) * hq + head * 8 + r) * 32 + c % 32], 0);
  }
  const int pieces = (end - start) * 32, step = blockDim.x * in_flight;
  int64_t slot[in_flight];
  auto look_up = [&](int base) {
#pragma unroll
    for (int u = 0; u < in_flight; ++u) {
      const int p = base + u * static_cast<int>(blockDim.x);
      slot[u] = p < pieces ? a.kv_indices[begin + start + p / 32] : 0;
    }
  };
  look_up(threadIdx.x);
  for (int base = threadIdx.x; base < pieces; base += step) {
    uint4 x[in_flight];
#pragma unroll
    for (int u = 0; u < in_flight; ++u) {
      const int p = base + u * static_cast<int>(blockDim.x), piece = p % 32;
      const uint8_t* pool = piece < 16 ? a.k : a.v;
      x[u] = p < pieces ? __ldg(reinterpret_cast<const uint4*>(pool + (slot[u] * hkv + head) * d + 16 * (piece % 16))) : uint4{0, 0, 0, 0};
    }
    look_up(base + step);
#pragma unroll
    for (int u = 0; u < in_flight; ++u) acc ^= fold_piece(x[u], a.widen);
  }
  const int64_t unit = (static_cast<int64_t>(b) * a.slices + slice) * hkv + head;
  for (int e = threadIdx.x; e < rows * d; e += blockDim.x) {
    const int row = e / d, t = row / 8, r = row % 8;
    if (a.slices == 1) {
      a.out[((static_cast<int64_t>(b) * a.tq + t) * hq + head * 8 + r) * d + e % d] = static_cast<uint16_t>(acc ^ e);
    } else {
      a.ws_o[unit * rows * d + e] = __uint_as_float((acc ^ e) & 0x3FFFFFFFu);
      if (e % d == 0) a.ws_stats[(unit * rows + row) * 2] = 0.0f, a.ws_stats[(unit * rows + row) * 2 + 1] = 1.0f;
    }
  }
}

template <bool Empty> __global__ void stage_two(args a) {
  if constexpr (Empty) return;
  const int rows = 8 * a.tq, head = blockIdx.x / rows, row = blockIdx.x % rows, b = blockIdx.y, dd = threadIdx.x;
  float acc = 0.0f;
  for (int s0 = 0; s0 < a.slices; s0 += in_flight) {
    float o[in_flight], l[in_flight];
#pragma unroll
    for (int i = 0; i < in_flight; ++i) {
      const int64_t unit = (static_cast<int64_t>(b) * a.slices + min(s0 + i, a.slices - 1)) * hkv + head;
      o[i] = a.ws_o[(unit * rows + row) * d + dd], l[i] = a.ws_stats[(unit * rows + row) * 2 + 1];
    }
#pragma unroll
    for (int i = 0; i < in_flight; ++i)
      if (s0 + i < a.slices) acc = acc * l[i] + o[i];
  }
  const int t = row / 8, r = row % 8;
  a.out[((static_cast<int64_t>(b) * a.tq + t) * hq + head * 8 + r) * d + dd] = static_cast<uint16_t>(__float_as_uint(acc) >> 16);
}

__global__ void fill(uint32_t* p, size_t words, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = (static_cast<uint32_t>(i) * 2654435761u) ^ seed;
}

struct config {
  const char* shape;
  const char* mapping;  // which netra mapping's grid this is, or "alternative"
  int batch, length, tq, threads, slices, round;
};

void measure(const config& c, const char* mode, int widen, int l2, bool report = true) {
  const int64_t positions = static_cast<int64_t>(c.batch) * c.length, slots = positions + 64, tokens = static_cast<int64_t>(c.batch) * c.tq;
  const int rows = 8 * c.tq;
  const size_t pool_bytes = static_cast<size_t>(slots) * hkv * d;
  const size_t call_bytes = 2 * static_cast<size_t>(positions) * hkv * d + 2 * static_cast<size_t>(tokens) * hq * d * 2;
  const int sets = static_cast<int>(std::max<size_t>(2, (3 * static_cast<size_t>(l2) + call_bytes - 1) / call_bytes));
  std::vector<int> indptr(c.batch + 1);
  for (int b = 0; b <= c.batch; ++b) indptr[b] = b * c.length;
  int* kv_indptr;
  check(cudaMalloc(&kv_indptr, indptr.size() * sizeof(int)), "malloc");
  check(cudaMemcpy(kv_indptr, indptr.data(), indptr.size() * sizeof(int), cudaMemcpyHostToDevice), "copy");
  const size_t ws_units = static_cast<size_t>(c.batch) * c.slices * hkv;
  float *ws_o, *ws_stats;
  check(cudaMalloc(&ws_o, ws_units * rows * d * 4), "malloc");
  check(cudaMalloc(&ws_stats, ws_units * rows * 8), "malloc");
  std::mt19937_64 rng(1234 + c.batch + c.length);
  std::vector<int64_t> perm(slots);
  std::vector<args> calls(sets);
  std::vector<void*> owned;
  for (int s = 0; s < sets; ++s) {
    void *q, *out, *k, *v, *idx;
    check(cudaMalloc(&q, tokens * hq * d * 2), "malloc");
    check(cudaMalloc(&out, tokens * hq * d * 2), "malloc");
    check(cudaMalloc(&k, pool_bytes), "malloc");
    check(cudaMalloc(&v, pool_bytes), "malloc");
    check(cudaMalloc(&idx, positions * 8), "malloc");
    fill<<<1024, 256>>>(static_cast<uint32_t*>(q), tokens * hq * d / 2, 1u + s);
    fill<<<1024, 256>>>(static_cast<uint32_t*>(k), pool_bytes / 4, 7u + s);
    fill<<<1024, 256>>>(static_cast<uint32_t*>(v), pool_bytes / 4, 13u + s);
    std::iota(perm.begin(), perm.end(), int64_t{0});
    std::shuffle(perm.begin(), perm.end(), rng);
    check(cudaMemcpy(idx, perm.data(), positions * 8, cudaMemcpyHostToDevice), "copy");
    calls[s] = {static_cast<const uint4*>(q), static_cast<uint16_t*>(out), static_cast<const uint8_t*>(k), static_cast<const uint8_t*>(v), kv_indptr,
                static_cast<const int64_t*>(idx), ws_o, ws_stats, c.tq, c.slices, c.round, widen};
    owned.insert(owned.end(), {q, out, k, v, idx});
  }
  check(cudaDeviceSynchronize(), "fill");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  const bool empty = std::string_view(mode) == "empty";
  auto burst = [&] {
    for (const args& a : calls) {
      if (empty) {
        stage_one<true><<<dim3(c.slices, hkv, c.batch), c.threads, 0, stream>>>(a);
        if (c.slices > 1) stage_two<true><<<dim3(hkv * rows, c.batch), d, 0, stream>>>(a);
      } else {
        stage_one<false><<<dim3(c.slices, hkv, c.batch), c.threads, 0, stream>>>(a);
        if (c.slices > 1) stage_two<false><<<dim3(hkv * rows, c.batch), d, 0, stream>>>(a);
      }
    }
  };
  burst();
  check(cudaStreamSynchronize(stream), "warm-up");
  check(cudaGetLastError(), "launch");
  const double us = floor_bench::graph_median_us(stream, sets, burst);
  if (report)
    std::printf("{\"shape\": \"%s\", \"mapping\": \"%s\", \"batch\": %d, \"kv_len\": %d, \"tq\": %d, \"threads\": %d, \"slices\": %d, "
              "\"chunk_round\": %d, \"mode\": \"%s\", \"widen_per_word\": %d, \"bytes\": %zu, \"input_sets\": %d, \"graph_us\": %.3f}\n",
              c.shape, c.mapping, c.batch, c.length, c.tq, c.threads, c.slices, c.round, mode, widen, call_bytes, sets, us);
  std::fflush(stdout);
  check(cudaStreamDestroy(stream), "stream");
  for (void* p : owned) check(cudaFree(p), "free");
  check(cudaFree(kv_indptr), "free");
  check(cudaFree(ws_o), "free");
  check(cudaFree(ws_stats), "free");
}

}  // namespace

/// The device widening against the host reference on all byte pairs; the count of differing words.
int check_widening() {
  netra::bf16x4* d;
  check(cudaMalloc(&d, 65536 * 4 * sizeof(netra::bf16x4)), "malloc");
  std::vector<netra::bf16x4> got(65536 * 4);
  widen_all<<<256, 256>>>(d);
  check(cudaMemcpy(got.data(), d, got.size() * sizeof(netra::bf16x4), cudaMemcpyDeviceToHost), "copy");
  int differ = 0;
  for (u32 i = 0; i < 65536; ++i)
    for (u32 w = 0; w < 4; ++w) {
      const netra::bf16x4 want = netra::e4m3x4_to_bf16x4_reference(pattern_word(i, w)), g = got[4 * i + w];
      differ += g.lo != want.lo || g.hi != want.hi;
    }
  std::printf("{\"check\": \"widening\", \"words\": %d, \"differ\": %d}\n", 65536 * 4, differ);
  check(cudaFree(d), "free");
  return differ;
}

/// The slices netra's decode mapping BlockWarps x Stages (/ BlockSplit; verify: Tq 12, 1 x 8) takes on `sms` SMs.
template <u32 Phase, u32 Tq, u32 BW, u32 Stages, u32 MaxBatch, u32 Cap, u32 Split = 1, u32 Warpgroup = 0> int netra_slices(int batch, int sms) {
  return static_cast<int>(netra::contracts::attention_gqa8<netra::sm90a, Phase, Tq, 1, BW, Stages, MaxBatch, Cap, Split, Warpgroup>::slices_for(
      static_cast<u32>(batch), static_cast<u32>(sms)));
}

int main() {
  int l2 = 0, sms = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  if (check_widening() != 0) return 3;
  // netra's grids: (slices_for(batch, SMs), 2, batch) x 32 * BlockWarps threads (verify: 6 waves of two
  // tokens; the 384-thread alternative at its slices is the 12-wave one-token grid it replaced),
  // chunks rounded to 64 * BlockWarps; the decode mappings 2 x 0 (served), 4 x 0, 1 x 0 (Stages 0,
  // 4 / 2 / 9 workgroups per SM), 4 x 3 (one per SM); verify 1 x 8. Alternatives: one 512-thread
  // workgroup per (KV head, request) at B = 64; at B = 1 and in verify, one sequence over every SM
  // with several workgroups each. 2 x 0 / S: the 2 x 0 grid with each block over S warps (BlockSplit).
  // verify 1 x 6w: the served verify's grid (WarpgroupMma: two warpgroups, 256 threads).
  const config configs[] = {
      {"decode B=64 L=8192", "decode 4x3", 64, 8192, 1, 128, netra_slices<0, 1, 4, 3, 64, 128>(64, sms), 256},
      {"decode B=64 L=8192", "decode 1x0", 64, 8192, 1, 32, netra_slices<0, 1, 1, 0, 64, 512>(64, sms), 64},
      {"decode B=64 L=8192", "decode 2x0", 64, 8192, 1, 64, netra_slices<0, 1, 2, 0, 64, 512>(64, sms), 128},
      {"decode B=64 L=8192", "decode 4x0", 64, 8192, 1, 128, netra_slices<0, 1, 4, 0, 64, 256>(64, sms), 256},
      {"decode B=64 L=8192", "alternative", 64, 8192, 1, 512, 1, 512},
      {"decode B=128 L=8192", "decode 2x0", 128, 8192, 1, 64, netra_slices<0, 1, 2, 0, 128, 512>(128, sms), 128},
      {"decode B=8 L=8192", "decode 2x0", 8, 8192, 1, 64, netra_slices<0, 1, 2, 0, 64, 512>(8, sms), 128},
      {"decode B=1 L=8192", "decode 1x0", 1, 8192, 1, 32, netra_slices<0, 1, 1, 0, 64, 512>(1, sms), 64},
      {"decode B=1 L=8192", "decode 2x0", 1, 8192, 1, 64, netra_slices<0, 1, 2, 0, 64, 512>(1, sms), 128},
      {"decode B=1 L=8192", "decode 4x0", 1, 8192, 1, 128, netra_slices<0, 1, 4, 0, 64, 256>(1, sms), 256},
      {"decode B=1 L=8192", "decode 2x0/4", 1, 8192, 1, 256, netra_slices<0, 1, 2, 0, 64, 512, 4>(1, sms), 128},
      {"decode B=1 L=8192", "decode 2x0/8", 1, 8192, 1, 512, netra_slices<0, 1, 2, 0, 64, 512, 8>(1, sms), 128},
      {"decode B=1 L=1024", "decode 2x0", 1, 1024, 1, 64, netra_slices<0, 1, 2, 0, 64, 512>(1, sms), 128},
      {"decode B=1 L=1024", "decode 2x0/8", 1, 1024, 1, 512, netra_slices<0, 1, 2, 0, 64, 512, 8>(1, sms), 128},
      {"decode B=8 L=8192", "decode 2x0/8", 8, 8192, 1, 512, netra_slices<0, 1, 2, 0, 64, 512, 8>(8, sms), 128},
      {"decode B=1 L=8192", "alternative", 1, 8192, 1, 64, 2 * sms, 64},
      {"decode B=1 L=8192", "alternative", 1, 8192, 1, 128, 2 * sms, 64},
      {"decode B=1 L=8192", "alternative", 1, 8192, 1, 512, sms / 2, 64},
      {"decode B=1 L=8192", "alternative", 1, 8192, 1, 256, 16, 64},
      {"decode B=16 L=8192", "decode 2x0", 16, 8192, 1, 64, netra_slices<0, 1, 2, 0, 64, 512>(16, sms), 128},
      {"decode B=16 L=8192", "decode 2x0/8", 16, 8192, 1, 512, netra_slices<0, 1, 2, 0, 64, 512, 8>(16, sms), 128},
      {"decode B=64 L=8192", "decode 2x0/8", 64, 8192, 1, 512, netra_slices<0, 1, 2, 0, 64, 512, 8>(64, sms), 128},
      {"decode B=128 L=8192", "decode 2x0/8", 128, 8192, 1, 512, netra_slices<0, 1, 2, 0, 128, 512, 8>(128, sms), 128},
      {"verify Tq=12 L=49152", "verify 1x8", 1, 49152 + 12, 12, 192, netra_slices<2, 12, 1, 8, 64, 128>(1, sms), 64},
      {"verify Tq=12 L=49152", "alternative", 1, 49152 + 12, 12, 384, netra_slices<2, 12, 1, 8, 64, 128>(1, sms), 64},
      {"verify Tq=12 L=49152", "alternative", 1, 49152 + 12, 12, 384, 2 * sms, 64},
      {"verify Tq=12 L=49152", "alternative", 1, 49152 + 12, 12, 128, sms / 2, 64},
      {"verify Tq=12 L=49152", "alternative", 1, 49152 + 12, 12, 512, sms / 2, 64},
      {"verify Tq=12 L=8192", "verify 1x8", 1, 8192 + 12, 12, 192, netra_slices<2, 12, 1, 8, 64, 128>(1, sms), 64},
      {"verify Tq=12 L=49152", "verify 1x6w", 1, 49152 + 12, 12, 256, netra_slices<2, 12, 1, 6, 64, 128, 1, 1>(1, sms), 64},
      {"verify Tq=12 L=8192", "verify 1x6w", 1, 8192 + 12, 12, 256, netra_slices<2, 12, 1, 6, 64, 128, 1, 1>(1, sms), 64},
  };
  measure(configs[0], "stream", 0, l2, false);  // warm-up, not reported
  const char* only = std::getenv("NETRA_FLOOR_ONLY");  // optional: prefixes of "<shape> <mapping>", comma-separated
  auto selected = [only](const config& c) {
    if (only == nullptr) return true;
    const std::string name = std::string(c.shape) + " " + c.mapping;
    for (std::string_view rest = only; !rest.empty();) {
      const std::size_t comma = std::min(rest.find(','), rest.size());
      if (name.compare(0, comma, rest.substr(0, comma)) == 0) return true;
      rest.remove_prefix(std::min(comma + 1, rest.size()));
    }
    return false;
  };
  for (const config& c : configs) {
    if (!selected(c)) continue;
    measure(c, "stream", 0, l2);
    if (c.mapping[0] == 'a' || c.batch == 8 || c.batch == 128 || c.threads < 64) continue;
    measure(c, "widen", c.tq, l2);
    if (c.threads == 64 || c.tq > 1) measure(c, "empty", 0, l2);
  }
  return 0;
}
