// The normalization C ABI (netra/c/norm.h) on the GPU: calls of each operation through the
// dispatch list equal the oracle bitwise (decode and prefill sizes, BF16 and E4M3 outputs, a
// strided x); every bad tensor argument (element type, shape, strides, device, alignment, a
// missing or too-small output / scales / weight, a missing residual or gate) and a bad eps is
// NOT_SUPPORTED (not a norm call netra takes) or INVALID_ARGUMENT (refused inside a tactic's
// promoted domain), names the tensor, and launches nothing: every output, scale and the residual
// stay poisoned. A call captured into a CUDA graph (global capture mode) replays with the
// inputs of the moment.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/dl_tensor.hpp"
#include "gpu/gpu_buffers.hpp"
#include "netra/c/norm.h"
#include "oracles/norm.hpp"

using namespace netra;
using testing::dl_tensor;
using testing::drv;
namespace dl = testing;

namespace {
constexpr unsigned char poison = 0xAB;

struct handle_owner {
  netra_norm_handle* h = nullptr;
  handle_owner() { REQUIRE(netra_norm_create(&h) == NETRA_STATUS_OK); }
  ~handle_owner() { netra_norm_destroy(h); }
};
netra_norm_handle* the_handle() {
  static handle_owner owner;
  return owner.h;
}

void expect(netra_status status, netra_status want, const std::string& text) {
  const std::string error = netra_last_error();
  INFO("expected ", netra_status_name(want), " naming \"", text, "\"; got ", netra_status_name(status), ": ", error);
  CHECK(status == want);
  CHECK(error.find(text) != std::string::npos);
}

/// Inputs of `tokens` tokens of width `cols` (row kinds cycling), uploaded.
struct call_buffers {
  i64 tokens, cols, stride;
  std::vector<std::uint16_t> x, r, z, w;
  testing::gpu_array<std::uint16_t> dx, dr, dz, dw;
  testing::gpu_array<std::uint8_t> out;
  testing::gpu_array<float> scales;
  call_buffers(i64 t, i64 c, i64 n, i64 pad, norm_weight form)
      : tokens(t), cols(c), stride(c + pad), x(static_cast<std::size_t>(t * (c + pad))), r(x.size()), z(x.size()), w(static_cast<std::size_t>(n)),
        dx(x.size()), dr(x.size()), dz(x.size()), dw(w.size()), out(static_cast<std::size_t>(t * c * 2 + 256)),
        scales(static_cast<std::size_t>(t * c / 128 + 16)) {
    for (i64 i = 0; i < t * stride / n; ++i) {
      oracles::fill_norm_row(x.data() + i * n, static_cast<int>(n), static_cast<oracles::norm_row>(i % oracles::norm_row_kinds), 3 * i + 1);
      oracles::fill_norm_row(r.data() + i * n, static_cast<int>(n), oracles::norm_row::random, 3 * i + 2);
      oracles::fill_norm_row(z.data() + i * n, static_cast<int>(n), oracles::norm_row::random, 3 * i + 3);
    }
    oracles::fill_norm_weight(w.data(), static_cast<int>(n), form, 5);
    dx.upload(x);
    dr.upload(r);
    dz.upload(z);
    dw.upload(w);
    out.fill_bytes(poison);
    scales.fill_bytes(poison);
  }
  bool untouched() const {
    drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
    std::size_t written = 0;
    for (auto v : out.download()) written += v != poison;
    for (auto v : scales.download()) written += oracles::norm_bits(v) != 0xABABABABu;
    return written == 0 && dr.download() == r;
  }
  /// Compares out / scales / residual with the oracle.
  void check(norm_kind kind, norm_weight form, bool fp8, float eps) const {
    std::vector<std::uint16_t> want_r = r;
    const oracles::norm_call c{.kind = kind, .weight_form = form, .fp8_out = fp8, .eps = eps, .tokens = tokens, .x = x.data(),
                               .x_stride = stride, .residual = want_r.data(), .residual_stride = stride, .gate = z.data(),
                               .gate_stride = stride, .weight = w.data()};
    const oracles::norm_outputs expected = oracles::norm_expected(c);
    const auto& want = expected.y;
    const auto& want_q = expected.q;
    const auto& want_s = expected.scales;
    const auto got = out.download();
    const std::size_t n = static_cast<std::size_t>(tokens * cols);
    if (fp8) {
      CHECK(std::memcmp(got.data(), want_q.data(), n) == 0);
      const auto got_s = scales.download();
      CHECK(std::memcmp(got_s.data(), want_s.data(), want_s.size() * 4) == 0);
    } else {
      CHECK(std::memcmp(got.data(), want.data(), 2 * n) == 0);
    }
    if (kind == norm_kind::add_rms) CHECK(dr.download() == want_r);
  }
};
}  // namespace

TEST_CASE("norm through the C ABI equals the oracle (decode and prefill sizes, BF16 and E4M3, strided x)") {
  auto* h = the_handle();
  const float eps = 1e-6f;
  for (i64 tokens : {1, 64, 65, 700})
    for (bool fp8 : {false, true})
      for (norm_weight form : {norm_weight::plain, norm_weight::zero_centred}) {
        INFO("tokens ", tokens, " fp8 ", fp8, " zero-centred ", form == norm_weight::zero_centred);
        const int zc = form == norm_weight::zero_centred;
        {
          call_buffers b(tokens, 2048, 2048, tokens % 2 ? 64 : 0, form);
          const dl_tensor x(b.dx.data(), dl::dl_bf16, {tokens, 2048}, {b.stride, 1}), w(b.dw.data(), dl::dl_bf16, {2048});
          const dl_tensor o(b.out.data(), fp8 ? dl::dl_e4m3 : dl::dl_bf16, {tokens, 2048}), s(b.scales.data(), dl::dl_f32, {tokens, 16});
          REQUIRE(netra_rms_norm(h, x.get(), w.get(), o.get(), fp8 ? s.get() : nullptr, eps, zc, nullptr) == NETRA_STATUS_OK);
          drv().check(drv().cuCtxSynchronize(), "sync");
          b.check(norm_kind::rms, form, fp8, eps);
        }
        {
          call_buffers b(tokens, 2048, 2048, tokens % 2 ? 64 : 0, form);
          const dl_tensor x(b.dx.data(), dl::dl_bf16, {tokens, 2048}, {b.stride, 1}), r(b.dr.data(), dl::dl_bf16, {tokens, 2048}, {b.stride, 1});
          const dl_tensor w(b.dw.data(), dl::dl_bf16, {2048}), o(b.out.data(), fp8 ? dl::dl_u8 : dl::dl_bf16, {tokens, 2048});
          const dl_tensor s(b.scales.data(), dl::dl_f32, {tokens, 16});
          REQUIRE(netra_add_rms_norm(h, x.get(), r.get(), w.get(), o.get(), fp8 ? s.get() : nullptr, eps, zc, nullptr) == NETRA_STATUS_OK);
          drv().check(drv().cuCtxSynchronize(), "sync");
          b.check(norm_kind::add_rms, form, fp8, eps);
        }
        if (form == norm_weight::plain) {
          call_buffers b(tokens, 4096, 128, tokens % 2 ? 128 : 0, form);
          const dl_tensor x(b.dx.data(), dl::dl_bf16, {tokens, 4096}, {b.stride, 1}), z(b.dz.data(), dl::dl_bf16, {tokens, 4096}, {b.stride, 1});
          const dl_tensor w(b.dw.data(), dl::dl_bf16, {128}), o(b.out.data(), fp8 ? dl::dl_e4m3 : dl::dl_bf16, {tokens, 4096});
          const dl_tensor s(b.scales.data(), dl::dl_f32, {tokens, 32});
          REQUIRE(netra_gated_rms_norm(h, x.get(), z.get(), w.get(), o.get(), fp8 ? s.get() : nullptr, eps, nullptr) == NETRA_STATUS_OK);
          drv().check(drv().cuCtxSynchronize(), "sync");
          b.check(norm_kind::gated, form, fp8, eps);
        }
      }
}

TEST_CASE("bad norm calls through the C ABI are refused by name and write nothing") {
  auto* h = the_handle();
  const float eps = 1e-6f;
  const i64 t = 4;
  call_buffers b(t, 2048, 2048, 64, norm_weight::plain);
  const DLDevice cpu{kDLCPU, 0}, other_gpu{kDLCUDA, 7};
  const dl_tensor x(b.dx.data(), dl::dl_bf16, {t, 2048}, {2112, 1}), r(b.dr.data(), dl::dl_bf16, {t, 2048}, {2112, 1});
  const dl_tensor w(b.dw.data(), dl::dl_bf16, {2048}), o(b.out.data(), dl::dl_bf16, {t, 2048}), q(b.out.data(), dl::dl_e4m3, {t, 2048});
  const dl_tensor s(b.scales.data(), dl::dl_f32, {t, 16});
  auto rms = [&](const dl_tensor& xx, const dl_tensor& ww, const dl_tensor& oo, const DLTensor* ss, float e) {
    return netra_rms_norm(h, xx.get(), ww.get(), oo.get(), ss, e, 0, nullptr);
  };
  // Not a call netra takes (another dtype, width or device): NOT_SUPPORTED, the tensors named.
  expect(rms(dl_tensor(b.dx.data(), dl::dl_f32, {t, 1024}, {1056, 1}), w, o, nullptr, eps), NETRA_STATUS_NOT_SUPPORTED, "x float32");
  expect(rms(dl_tensor(b.dx.data(), dl::dl_bf16, {t, 1024}), w, o, nullptr, eps), NETRA_STATUS_NOT_SUPPORTED, "x bfloat16 shape [4, 1024]");
  expect(rms(dl_tensor(b.dx.data(), dl::dl_bf16, {t, 2048}, {}, cpu), w, o, nullptr, eps), NETRA_STATUS_NOT_SUPPORTED, "on cpu");
  expect(rms(dl_tensor(b.dx.data(), dl::dl_bf16, {t, 2048}, {}, other_gpu), w, o, nullptr, eps), NETRA_STATUS_NOT_SUPPORTED, "cuda:7");
  // Inside the promoted domain: INVALID_ARGUMENT naming the field.
  expect(rms(dl_tensor(b.dx.data(), dl::dl_bf16, {t, 2048}, {2052, 1}), w, o, nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'x'");
  expect(rms(dl_tensor(b.dx.data(), dl::dl_bf16, {t, 2048}, {2112, 2}), w, o, nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'x'");
  expect(rms(dl_tensor(b.dx.data() + 4, dl::dl_bf16, {t, 2048}, {2112, 1}), w, o, nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'x'");
  expect(rms(x, dl_tensor(b.dw.data(), dl::dl_bf16, {1024}), o, nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'weight'");
  expect(rms(x, dl_tensor(b.dw.data(), dl::dl_f32, {2048}), o, nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'weight'");
  expect(rms(x, dl_tensor(b.dw.data(), dl::dl_bf16, {2048}, {}, cpu), o, nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'weight'");
  expect(rms(x, w, dl_tensor(b.out.data(), dl::dl_bf16, {t - 1, 2048}), nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'out'");  // too small
  expect(rms(x, w, dl_tensor(b.out.data(), dl::dl_bf16, {t, 2048}, {2056, 1}), nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'out'");
  expect(rms(x, w, dl_tensor(b.out.data(), dl::dl_f16, {t, 2048}), nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'out'");
  expect(rms(x, w, q, nullptr, eps), NETRA_STATUS_INVALID_ARGUMENT, "'scales'");  // E4M3 out without scales
  expect(rms(x, w, q, dl_tensor(b.scales.data(), dl::dl_f32, {t, 15}).get(), eps), NETRA_STATUS_INVALID_ARGUMENT, "'scales'");
  expect(rms(x, w, q, dl_tensor(b.scales.data(), dl::dl_bf16, {t, 16}).get(), eps), NETRA_STATUS_INVALID_ARGUMENT, "'scales'");
  expect(rms(x, w, o, nullptr, 0.0f), NETRA_STATUS_INVALID_ARGUMENT, "'eps'");
  expect(rms(x, w, o, nullptr, -1.0f), NETRA_STATUS_INVALID_ARGUMENT, "'eps'");
  expect(netra_add_rms_norm(h, x.get(), nullptr, w.get(), o.get(), nullptr, eps, 0, nullptr), NETRA_STATUS_INVALID_ARGUMENT, "'residual'");
  expect(netra_add_rms_norm(h, x.get(), dl_tensor(b.dr.data(), dl::dl_bf16, {t - 1, 2048}).get(), w.get(), o.get(), nullptr, eps, 0, nullptr),
         NETRA_STATUS_INVALID_ARGUMENT, "'residual'");
  expect(netra_add_rms_norm(h, x.get(), dl_tensor(b.dx.data() + 2048, dl::dl_bf16, {t, 2048}, {2112, 1}).get(), w.get(), o.get(), nullptr, eps, 0,
                            nullptr),
         NETRA_STATUS_INVALID_ARGUMENT, "'residual'");  // overlaps x
  const dl_tensor o4(b.out.data(), dl::dl_bf16, {t, 4096}), x4(b.dx.data(), dl::dl_bf16, {2, 4096}, {4224, 1}), w128(b.dw.data(), dl::dl_bf16, {128});
  const dl_tensor o42(b.out.data(), dl::dl_bf16, {2, 4096});
  expect(netra_gated_rms_norm(h, x4.get(), nullptr, w128.get(), o42.get(), nullptr, eps, nullptr), NETRA_STATUS_INVALID_ARGUMENT, "'gate'");
  expect(netra_gated_rms_norm(h, x4.get(), dl_tensor(b.dz.data(), dl::dl_bf16, {2, 4096}, {4100, 1}).get(), w128.get(), o42.get(), nullptr, eps, nullptr),
         NETRA_STATUS_INVALID_ARGUMENT, "'gate'");
  expect(netra_rms_norm(nullptr, x.get(), w.get(), o.get(), nullptr, eps, 0, nullptr), NETRA_STATUS_INVALID_ARGUMENT, "handle");
  (void)o4;
  CHECK(b.untouched());
  // The same buffers, described right, run.
  REQUIRE(netra_add_rms_norm(h, x.get(), r.get(), w.get(), o.get(), nullptr, eps, 0, nullptr) == NETRA_STATUS_OK);
  drv().check(drv().cuCtxSynchronize(), "sync");
  b.check(norm_kind::add_rms, norm_weight::plain, false, eps);
  char text[4096];
  size_t length = 0;
  REQUIRE(netra_norm_explain(h, 0, x.get(), nullptr, nullptr, w.get(), o.get(), nullptr, eps, 0, text, sizeof text, &length) == NETRA_STATUS_OK);
  CHECK(std::string(text).find("netra::contracts::norm<") != std::string::npos);
}

TEST_CASE("a norm call captured into a CUDA graph replays with the inputs of the moment") {
  auto* h = the_handle();
  const float eps = 1e-5f;
  call_buffers b(16, 2048, 2048, 0, norm_weight::plain);
  const dl_tensor x(b.dx.data(), dl::dl_bf16, {16, 2048}), w(b.dw.data(), dl::dl_bf16, {2048}), o(b.out.data(), dl::dl_bf16, {16, 2048});
  CUstream stream;
  drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUgraph graph;
  CUgraphExec exec;
  drv().check(drv().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  const netra_status st = netra_rms_norm(h, x.get(), w.get(), o.get(), nullptr, eps, 0, stream);
  drv().check(drv().cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  REQUIRE(st == NETRA_STATUS_OK);
  drv().check(drv().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiate");
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < b.x.size(); ++i) b.x[i] = static_cast<std::uint16_t>(b.x[i] ^ (round + 1));  // new inputs each replay
    b.dx.upload(b.x);
    drv().check(drv().cuGraphLaunch(exec, stream), "cuGraphLaunch");
    drv().check(drv().cuStreamSynchronize(stream), "sync");
    b.check(norm_kind::rms, norm_weight::plain, false, eps);
  }
  drv().cuGraphExecDestroy(exec);
  drv().cuGraphDestroy(graph);
  drv().cuStreamDestroy(stream);
}
