// The sm90a matrix fragments on the H200 (kernels: tests/gpu/moe_fragments_kernels.cu): the
// DSL's mma<mma_m16n8k32_e4m3> with registers filled from the traits' lane maps equals an exact
// integer matmul; wgmma.m64n8k32 / m64n16k32 .e4m3 with A from registers (each warp of the
// warpgroup: its 16 rows in the m16n8k32 A layout [I]) and B in shared memory through a
// no-swizzle descriptor (core matrices 8 rows x 16 bytes; leading byte offset = stride between
// core matrices along K, stride byte offset = along N, as dsl/arch/sm90a/mma.hpp documents [I])
// equals the matmul. On a mismatch the test says whether the swapped LBO/SBO reading matches.
// wgmma.m64n16k16 .f16 (E4M3 values converted to FP16, as bench/fp8_block_sum.cu uses it): A from
// registers in the m16n8k16 A layout per warp, B by the same descriptor geometry, equals the matmul.
// dsl/bulk_copy.hpp (cp.async.bulk into shared memory + mbarrier), as gate_up stages its weights:
// every copied byte in place once the wait returns, nothing written outside the copied rows.
// dsl/cluster.hpp (st.async pushes into other workgroups' shared memory, counted on their
// mbarriers), as the cluster router pushes its logits: every push lands once, in its slot.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/matrix_fragment.hpp"
#include "netra/runtime/backend.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;

namespace {

CUfunction function(const char* name) {
  static CUmodule mod = [] {
    (void)current_cuda_device();
    const auto bytes = read_file_bytes(NETRA_FRAGMENT_CUBIN);
    CUmodule m = nullptr;
    testing::drv().check(testing::drv().cuModuleLoadData(&m, bytes.data()), "cuModuleLoadData");
    return m;
  }();
  CUfunction f = nullptr;
  testing::drv().check(testing::drv().cuModuleGetFunction(&f, mod, name), name);
  return f;
}

void launch(CUfunction f, unsigned threads, std::vector<void*> args) {
  testing::drv().check(testing::drv().cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, nullptr, args.data(), nullptr), "cuLaunchKernel");
  testing::drv().check(testing::drv().cuCtxSynchronize(), "cuCtxSynchronize");
}

std::uint8_t small_e4m3(oracles::xorshift& r) { return e4m3_from_f32_reference(static_cast<float>(static_cast<int>(r.next() % 17) - 8)); }
double value(std::uint8_t v) { return static_cast<double>(f32_from_e4m3(v)); }
void put(std::uint32_t& w, unsigned byte, std::uint8_t v) { w |= static_cast<std::uint32_t>(v) << (8 * byte); }

}  // namespace

TEST_CASE("mma.sync.m16n8k32 e4m3 through the DSL: traits + hardware == matmul") {
  using S = mma_m16n8k32_e4m3;
  oracles::xorshift r{17};
  for (int trial = 0; trial < 8; ++trial) {
    std::vector<std::uint8_t> A(16 * 32), B(32 * 8);
    std::vector<float> C(16 * 8);
    for (auto& v : A) v = small_e4m3(r);
    for (auto& v : B) v = small_e4m3(r);
    for (auto& v : C) v = static_cast<float>(static_cast<int>(r.next() % 101) - 50);
    std::vector<std::uint32_t> a(32 * 4, 0), b(32 * 2, 0);
    std::vector<float> c(32 * 4);
    for (unsigned l = 0; l < 32; ++l) {
      for (unsigned i = 0; i < S::a_bytes; ++i) put(a[l * 4 + i / 4], i % 4, A[S::a_element(l, i).row * 32 + S::a_element(l, i).col]);
      for (unsigned i = 0; i < S::b_bytes; ++i) put(b[l * 2 + i / 4], i % 4, B[S::b_element(l, i).row * 8 + S::b_element(l, i).col]);
      for (unsigned i = 0; i < S::d_items; ++i) c[l * 4 + i] = C[S::d_element(l, i).row * 8 + S::d_element(l, i).col];
    }
    testing::gpu_array<std::uint32_t> da(a.size()), db(b.size());
    testing::gpu_array<float> dc(c.size()), dd(c.size());
    da.upload(a);
    db.upload(b);
    dc.upload(c);
    void* pa = da.data();
    void* pb = db.data();
    void* pc = dc.data();
    void* pd = dd.data();
    launch(function("netra_test_mma_m16n8k32"), 32, {&pa, &pb, &pc, &pd});
    const auto d = dd.download();
    int bad = 0;
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned i = 0; i < 4; ++i) {
        const auto e = S::d_element(l, i);
        double s = C[e.row * 8 + e.col];
        for (unsigned k = 0; k < 32; ++k) s += value(A[e.row * 32 + k]) * value(B[k * 8 + e.col]);
        bad += d[l * 4 + i] != s;
      }
    CHECK(bad == 0);
  }
}

namespace {
template <unsigned N> int wgmma_mismatches(std::uint32_t lbo, std::uint32_t sbo, std::uint32_t image_k_stride, std::uint32_t image_n_stride,
                                          std::uint64_t seed) {
  using S = mma_m16n8k32_e4m3;
  oracles::xorshift r{seed};
  std::vector<std::uint8_t> A(64 * 32), B(32 * N);  // B[k][n]
  for (auto& v : A) v = small_e4m3(r);
  for (auto& v : B) v = small_e4m3(r);
  std::vector<std::uint32_t> a(128 * 4, 0);
  for (unsigned t = 0; t < 128; ++t) {
    const unsigned w = t / 32, l = t % 32;
    for (unsigned i = 0; i < S::a_bytes; ++i) {
      const auto e = S::a_element(l, i);
      put(a[t * 4 + i / 4], i % 4, A[(16 * w + e.row) * 32 + e.col]);
    }
  }
  std::vector<std::uint8_t> image(1024, 0);
  for (unsigned n = 0; n < N; ++n)
    for (unsigned k = 0; k < 32; ++k) image[(n / 8) * image_n_stride + (k / 16) * image_k_stride + (n % 8) * 16 + k % 16] = B[k * N + n];
  testing::gpu_array<std::uint32_t> da(a.size());
  testing::gpu_array<std::uint8_t> db(image.size());
  testing::gpu_array<float> dd(128 * N / 2);
  da.upload(a);
  db.upload(image);
  void* pa = da.data();
  void* pb = db.data();
  std::uint32_t bytes = 1024;
  void* pd = dd.data();
  launch(function(N == 8 ? "netra_test_wgmma_m64n8k32" : "netra_test_wgmma_m64n16k32"), 128, {&pa, &pb, &bytes, &lbo, &sbo, &pd});
  const auto d = dd.download();
  int bad = 0;
  for (unsigned t = 0; t < 128; ++t)
    for (unsigned i = 0; i < N / 2; ++i) {
      const unsigned w = t / 32, l = t % 32, g = l >> 2, tt = l & 3;
      const unsigned row = 16 * w + g + 8 * ((i >> 1) & 1), col = 8 * (i >> 2) + 2 * tt + (i & 1);
      double s = 0;
      for (unsigned k = 0; k < 32; ++k) s += value(A[row * 32 + k]) * value(B[k * N + col]);
      bad += d[t * (N / 2) + i] != s;
    }
  return bad;
}
}  // namespace

TEST_CASE_TEMPLATE("wgmma.m64nNk32 e4m3, A from registers, B by no-swizzle descriptor == matmul", NT, std::integral_constant<unsigned, 8>,
                   std::integral_constant<unsigned, 16>) {
  constexpr unsigned N = NT::value;
  const int bad = wgmma_mismatches<N>(/*lbo*/ 128, /*sbo*/ 256, /*k stride*/ 128, /*n stride*/ 256, 5 + N);
  if (bad != 0) {
    const int swapped = wgmma_mismatches<N>(/*lbo*/ 256, /*sbo*/ 128, /*k stride*/ 128, /*n stride*/ 256, 5 + N);
    MESSAGE("wgmma m64n", N, ": ", bad, " mismatches with LBO = K stride; with LBO/SBO swapped: ", swapped,
            swapped == 0 ? " (the swapped reading is right: fix dsl/arch/sm90a/mma.hpp)" : "");
  }
  CHECK(bad == 0);
}

TEST_CASE("wgmma.m64n16k16 f16, A from registers (m16n8k16 layout per warp), B by no-swizzle descriptor == matmul") {
  oracles::xorshift r{41};
  constexpr unsigned N = 16, K = 16;
  std::vector<std::uint8_t> A(64 * K), B(K * N);  // E4M3 values; B[k][n]
  for (auto& v : A) v = small_e4m3(r);
  for (auto& v : B) v = small_e4m3(r);
  auto f16 = [](std::uint8_t v) {  // small integers: exact in FP16 (sign, 5-bit exponent, 10-bit mantissa)
    const double x = value(v);
    if (x == 0) return std::uint16_t{0};
    const double m = x < 0 ? -x : x;
    int e = 0;
    while ((1 << (e + 1)) <= m) ++e;
    const auto mant = static_cast<std::uint16_t>((m / (1 << e) - 1.0) * 1024.0);
    return static_cast<std::uint16_t>((x < 0 ? 0x8000u : 0u) | static_cast<unsigned>(e + 15) << 10 | mant);
  };
  std::vector<std::uint32_t> a(128 * 4, 0);
  for (unsigned t = 0; t < 128; ++t) {
    const unsigned w = t / 32, l = t % 32, g = l >> 2, q = l & 3;
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = 16 * w + g + 8 * (i & 1), k = 2 * q + 8 * (i >> 1);
      a[t * 4 + i] = f16(A[row * K + k]) | static_cast<std::uint32_t>(f16(A[row * K + k + 1])) << 16;
    }
  }
  std::vector<std::uint8_t> image(1024, 0);
  for (unsigned n = 0; n < N; ++n)
    for (unsigned k = 0; k < K; ++k) {
      const std::uint16_t h = f16(B[k * N + n]);
      const unsigned at = (n / 8) * 256 + (k / 8) * 128 + (n % 8) * 16 + (k % 8) * 2;
      image[at] = static_cast<std::uint8_t>(h & 0xFF), image[at + 1] = static_cast<std::uint8_t>(h >> 8);
    }
  testing::gpu_array<std::uint32_t> da(a.size());
  testing::gpu_array<std::uint8_t> db(image.size());
  testing::gpu_array<float> dd(128 * 8);
  da.upload(a);
  db.upload(image);
  void* pa = da.data();
  void* pb = db.data();
  std::uint32_t bytes = 1024, lbo = 128, sbo = 256;
  void* pd = dd.data();
  launch(function("netra_test_wgmma_m64n16k16_f16"), 128, {&pa, &pb, &bytes, &lbo, &sbo, &pd});
  const auto d = dd.download();
  int bad = 0;
  for (unsigned t = 0; t < 128; ++t)
    for (unsigned i = 0; i < 8; ++i) {
      const unsigned w = t / 32, l = t % 32, g = l >> 2, q = l & 3;
      const unsigned row = 16 * w + g + 8 * ((i >> 1) & 1), col = 8 * (i >> 2) + 2 * q + (i & 1);
      double s = 0;
      for (unsigned k = 0; k < K; ++k) s += value(A[row * K + k]) * value(B[k * N + col]);
      bad += d[t * 8 + i] != s;
    }
  CHECK(bad == 0);
}

TEST_CASE("dsl/bulk_copy: rows copied into padded LDS rows, complete when the barrier's wait returns") {
  constexpr unsigned row_bytes = 2048, lds_stride = row_bytes + 64, max_rows = 16, stride = 4096;
  oracles::xorshift r{29};
  std::vector<std::uint8_t> src(max_rows * stride);
  for (auto& v : src) v = static_cast<std::uint8_t>(r.next());
  testing::gpu_array<std::uint8_t> d_src(src.size()), d_out(max_rows * lds_stride);
  d_src.upload(src);
  for (unsigned rows : {16u, 8u, 4u}) {
    d_out.fill_bytes(0);
    const std::uint8_t* s = d_src.data();
    std::uint8_t* o = d_out.data();
    unsigned st = stride, n = rows;
    launch(function("netra_test_bulk_copy"), 128, {&s, &st, &n, &o});
    const auto out = d_out.download();
    long wrong = 0, touched = 0;
    for (unsigned row = 0; row < max_rows; ++row)
      for (unsigned i = 0; i < lds_stride; ++i) {
        const std::uint8_t got = out[row * lds_stride + i];
        if (row < rows && i < row_bytes) wrong += got != src[row * stride + i];
        else touched += got != 0xA5;
      }
    INFO("rows ", rows);
    CHECK(wrong == 0);
    CHECK(touched == 0);
  }
}

TEST_CASE("dsl/cluster: every workgroup of a cluster receives each push once, complete when its barrier's wait returns") {
  constexpr unsigned max_cluster = 16;
  CUfunction f = function("netra_test_cluster_push");
  testing::drv().check(testing::drv().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), "non-portable cluster");
  testing::gpu_array<std::uint32_t> d_out(max_cluster * max_cluster * 4);
  for (unsigned size : {2u, 8u, 16u}) {
    d_out.fill_bytes(0xAB);
    std::uint32_t* o = d_out.data();
    void* args[] = {&o};
    const cuda_launch_config c({{size, 1, 1}, 32, 0}, nullptr, false, size);
    testing::drv().check(testing::drv().cuLaunchKernelEx(&c.config, f, args, nullptr), "cuLaunchKernelEx");
    testing::drv().check(testing::drv().cuCtxSynchronize(), "cuCtxSynchronize");
    const auto out = d_out.download();
    long wrong = 0, touched = 0;
    for (unsigned rank = 0; rank < max_cluster; ++rank)
      for (unsigned j = 0; j < max_cluster; ++j) {
        const std::uint32_t* v = &out[(rank * max_cluster + j) * 4];
        if (rank < size && j < size) wrong += v[0] != j || v[1] != rank || v[2] != 0xC0DEu || v[3] != 100 * j + rank;
        else touched += v[0] != 0xABABABABu;
      }
    INFO("cluster of ", size);
    CHECK(wrong == 0);
    CHECK(touched == 0);
  }
}
