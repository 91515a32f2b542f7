// The runtime on the GPU: argmax through the C ABI equals the oracle for the embedded served
// tactic and the JIT-compiled (NVRTC) 32768-logit tactic; declined calls return
// NOT_SUPPORTED and strict refusals INVALID_ARGUMENT, both writing nothing; a new shape
// JIT-compiled through NVRTC runs through a C++ handle and comes from the cache the second time;
// a code object for another target and a corrupted cubin are refused with WRONG_TARGET; a
// workspace too small is refused with WORKSPACE_TOO_SMALL and nothing written.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "gpu/dl_tensor.hpp"
#include "gpu/gpu_buffers.hpp"
#include "netra/c/argmax.h"
#include "netra/runtime/embedded_objects.hpp"
#include "netra/runtime/jit/compile.hpp"
#include "netra/runtime/ops/argmax.hpp"
#include "netra/runtime/tactics/sampling.hpp"
#include "oracles/argmax.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;
using testing::argmax_rows;
using testing::argmax_rows_explain;
using testing::drv;
using testing::gpu_array;

// Counts heap allocations in the process, libnetra's included (it calls the replaceable
// operator new that this executable defines). GCC takes the malloc/free pair below for a
// mismatch once it inlines them into new-expressions.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<long> allocations{0};
}
void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using served = tactics::argmax_served<sm90a>;  // what dispatch takes for the article's vocabulary
using small = contracts::argmax<sm90a, 32768, 16, 8>;
constexpr std::uint64_t poison = 0xABABABABABABABABull;

std::string last_error() { return netra_last_error(); }

struct c_handle {
  netra_argmax_handle* h = nullptr;
  c_handle() { REQUIRE_MESSAGE(netra_argmax_create(&h) == NETRA_STATUS_OK, last_error()); }
  ~c_handle() { netra_argmax_destroy(h); }
};

std::string explain(netra_argmax_handle* h, const float* logits, std::int64_t rows, std::int64_t cols, std::int64_t stride,
                    const std::int64_t* out) {
  std::size_t length = 0;
  argmax_rows_explain(h, logits, rows, cols, stride, out, nullptr, 0, &length);
  std::string text(length + 1, '\0');
  argmax_rows_explain(h, logits, rows, cols, stride, out, text.data(), text.size(), nullptr);
  text.resize(length);
  return text;
}

/// Rows of every kind, uploaded with `stride`; returns the oracle's answers.
std::vector<std::int64_t> upload_rows(const gpu_array<float>& logits, std::int64_t rows, std::int64_t n, std::int64_t stride,
                                      std::int64_t chunk, std::uint64_t seed) {
  std::vector<float> host(static_cast<std::size_t>(rows * stride), -3.0f);
  std::vector<std::int64_t> answers;
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = host.data() + r * stride;
    oracles::fill_row(row, n, static_cast<oracles::row_kind>((r + static_cast<std::int64_t>(seed)) % oracles::row_kinds), seed * 131 + r, chunk);
    answers.push_back(oracles::argmax_row(row, n));
  }
  logits.upload(host);
  return answers;
}

bool untouched(const gpu_array<std::int64_t>& out) {
  for (const auto v : out.download())
    if (static_cast<std::uint64_t>(v) != poison) return false;
  return true;
}

}  // namespace

TEST_CASE("the C ABI equals the oracle for the embedded and the JIT-compiled tactic") {
  c_handle h;
  struct shape_t {
    std::int64_t n, chunk;
    std::vector<std::int64_t> rows, strides;
  };
  const shape_t shapes[] = {{served::n, served::chunk_length, {1, 2, 16, 127, 128}, {served::n, served::n + 4}},
                            {small::n, small::chunk_length, {1, 3, 8}, {small::n, small::n + 64}}};
  int calls = 0;
  for (const auto& shape : shapes)
    for (const std::int64_t rows : shape.rows)
      for (const std::int64_t stride : shape.strides) {
        gpu_array<float> logits(static_cast<std::size_t>(rows * stride));
        gpu_array<std::int64_t> out(static_cast<std::size_t>(rows));
        const auto answers = upload_rows(logits, rows, shape.n, stride, shape.chunk, static_cast<std::uint64_t>(calls + 1));
        out.fill_bytes(0xAB);
        INFO("n ", shape.n, " rows ", rows, " stride ", stride, "\n", explain(h.h, logits.data(), rows, shape.n, stride, out.data()));
        REQUIRE_MESSAGE(argmax_rows(h.h, logits.data(), rows, shape.n, stride, out.data(), nullptr) == NETRA_STATUS_OK, last_error());
        CHECK(out.download() == answers);
        ++calls;
      }
  CHECK(calls == 16);  // 5 x 2 calls of the article's vocabulary + 3 x 2 JIT-shape calls
}

TEST_CASE("a call through the C ABI allocates no host memory, admitted or declined") {
  c_handle h;
  gpu_array<float> logits(static_cast<std::size_t>(served::n) * 8);
  gpu_array<std::int64_t> out(8);
  const long before = allocations.load();
  int ok = 0, declined = 0;
  for (int i = 0; i < 100; ++i) {
    ok += argmax_rows(h.h, logits.data(), 8, served::n, served::n, out.data(), nullptr) == NETRA_STATUS_OK;
    ok += argmax_rows(h.h, logits.data(), 4, small::n, small::n, out.data(), nullptr) == NETRA_STATUS_OK;
  }
  const long during = allocations.load() - before;
  declined += argmax_rows(h.h, logits.data(), 8, 4000, 4000, out.data(), nullptr) == NETRA_STATUS_NOT_SUPPORTED;
  drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
  CHECK(ok == 200);
  CHECK(declined == 1);
  CHECK(during == 0);
}

TEST_CASE("declined and strictly refused calls launch nothing and write nothing") {
  c_handle h;
  gpu_array<float> logits(static_cast<std::size_t>(served::n) * 4 + 64);
  gpu_array<std::int64_t> out(8);
  out.fill_bytes(0xAB);
  auto status_of = [&](const float* l, std::int64_t rows, std::int64_t cols, std::int64_t stride, std::int64_t* o) {
    const netra_status s = argmax_rows(h.h, l, rows, cols, stride, o, nullptr);
    drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
    return s;
  };
  // Outside every tactic: the caller's own implementation runs.
  CHECK(status_of(logits.data(), 2, 1000, 1000, out.data()) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(last_error().find("no tactic admits") != std::string::npos);
  CHECK(status_of(logits.data(), 200, served::n, served::n, out.data()) == NETRA_STATUS_NOT_SUPPORTED);  // rows outside 1..128
  CHECK(status_of(logits.data() + 1, 2, small::n, small::n, out.data()) == NETRA_STATUS_NOT_SUPPORTED);       // non-strict tactic
  // Inside the served tactic's promoted domain (its vocabulary, rows 1..128): an ABI mismatch is an error.
  struct strict_case {
    const float* logits;
    std::int64_t stride;
    std::int64_t* out;
    const char* field;
  };
  for (const auto& c : {strict_case{logits.data() + 1, served::n, out.data(), "'logits'"},
                        strict_case{nullptr, served::n, out.data(), "'logits'"},
                        strict_case{logits.data(), served::n + 2, out.data(), "'row_stride'"},
                        strict_case{logits.data(), served::n - 4, out.data(), "'row_stride'"},
                        strict_case{logits.data(), served::n, nullptr, "'out'"},
                        strict_case{logits.data(), served::n, reinterpret_cast<std::int64_t*>(reinterpret_cast<char*>(out.data()) + 4), "'out'"}}) {
    INFO(c.field);
    CHECK(status_of(c.logits, 2, served::n, c.stride, c.out) == NETRA_STATUS_INVALID_ARGUMENT);
    CHECK(last_error().find("strict in its promoted domain") != std::string::npos);
    CHECK(last_error().find(c.field) != std::string::npos);
  }
  // The DLTensors' own fields: element types, extents, strides and devices the contract refuses.
  using testing::dl_tensor;
  const dl_tensor rows2(logits.data(), testing::dl_f32, {2, served::n}), out2(out.data(), testing::dl_i64, {2});
  auto call = [&](const dl_tensor& l, const dl_tensor& o) {
    const netra_status s = netra_argmax(h.h, l.get(), o.get(), nullptr);
    drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
    return s;
  };
  CHECK(call(dl_tensor(logits.data(), testing::dl_f64, {2, served::n}), out2) == NETRA_STATUS_NOT_SUPPORTED);  // not its element type
  CHECK(last_error().find("logits float64 shape [2, 248320]") != std::string::npos);
  CHECK(call(dl_tensor(logits.data(), testing::dl_f32, {2, served::n}, {served::n, 1}, {kDLCPU, 0}), out2) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(call(dl_tensor(logits.data(), testing::dl_f32, {2, served::n}, {served::n, 1}, {kDLCUDA, 7}), out2) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(call(rows2, dl_tensor(out.data(), testing::dl_i64, {1})) == NETRA_STATUS_INVALID_ARGUMENT);  // out smaller than the call needs
  CHECK(last_error().find("refused at field 'out': requires shape [rows] = [2], got shape [1]") != std::string::npos);
  CHECK(call(rows2, dl_tensor(out.data(), testing::dl_i32, {2})) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(last_error().find("requires int64, got int32") != std::string::npos);
  CHECK(call(rows2, dl_tensor(out.data(), testing::dl_i64, {2}, {2})) == NETRA_STATUS_INVALID_ARGUMENT);  // strided out
  CHECK(call(rows2, dl_tensor(out.data(), testing::dl_i64, {2}, {}, {kDLCPU, 0})) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(last_error().find("got cpu") != std::string::npos);
  CHECK(call(dl_tensor(logits.data(), testing::dl_f32, {2, served::n}, {1, 2}), out2) == NETRA_STATUS_INVALID_ARGUMENT);  // columns
  CHECK(netra_argmax(h.h, nullptr, out2.get(), nullptr) == NETRA_STATUS_NOT_SUPPORTED);  // no logits: no tactic's call
  CHECK(untouched(out));
  CHECK(call(rows2, out2) == NETRA_STATUS_OK);  // the same buffers, well described
}

TEST_CASE("a new shape JIT-compiled through NVRTC runs through a handle and comes from the cache the second time") {
  jit::scratch_directory cache;
  jit::options o;
  o.cache_root = cache.path();
  o.include_root = NETRA_TEST_INCLUDE_DIR;
  using fresh = contracts::argmax<sm90a, 65536, 32, 4>;
  const jit::result compiled = jit::compile<fresh>(o);
  CHECK_FALSE(compiled.from_cache);
  CHECK(compiled.compiler.starts_with("NVRTC"));
  const handle<fresh> h(compiled.code_object, current_cuda_device());
  for (const std::int64_t rows : {1, 4}) {
    gpu_array<float> logits(static_cast<std::size_t>(rows * fresh::n));
    gpu_array<std::int64_t> out(static_cast<std::size_t>(rows));
    const auto answers = upload_rows(logits, rows, fresh::n, fresh::n, fresh::chunk_length, static_cast<std::uint64_t>(rows));
    argmax(h, nullptr, logits.data(), rows, fresh::n, fresh::n, out.data());
    CHECK(out.download() == answers);
  }
  CHECK(jit::compile<fresh>(o).from_cache);
}

TEST_CASE("a code object for another target, or a corrupted cubin, is refused on the device") {
  const auto device = current_cuda_device();
  const auto gfx950_object = find_embedded_code_object(instance_name<contracts::argmax_reference<gfx950>>());
  if (gfx950_object) {
    try {
      handle<served> h(*gfx950_object, device);
      FAIL("a gfx950 object must not load on the CUDA path");
    } catch (const error& e) {
      CHECK(e.code() == status::wrong_target);
      CHECK(std::string(e.what()).find("gfx950") != std::string::npos);
    }
  }
  const auto cubin = embedded_code_object<served>();
  std::vector<std::byte> corrupted(cubin.begin(), cubin.end());
  corrupted[18] = std::byte{0x3E};  // e_machine: x86-64
  CHECK_THROWS_AS(handle<served>(corrupted, device), error);
  try {
    handle<served> h(corrupted, device);
  } catch (const error& e) {
    CHECK(e.code() == status::wrong_target);
  }
}

TEST_CASE("a workspace too small is refused with workspace_too_small and nothing is written") {
  const handle<served> h(embedded_code_object<served>(), current_cuda_device());
  const std::int64_t rows = 3;
  gpu_array<float> logits(static_cast<std::size_t>(rows * served::n));
  gpu_array<std::int64_t> out(static_cast<std::size_t>(rows));
  const auto answers = upload_rows(logits, rows, served::n, served::n, served::chunk_length, 99);
  device_buffer workspace(backend_api::cuda, served::workspace_bytes);
  workspace.fill_zero();
  out.fill_bytes(0xAB);
  try {
    argmax(h, nullptr, logits.data(), rows, served::n, served::n, out.data(), workspace.data(), served::workspace_bytes - 16);
    FAIL("a small workspace must be refused");
  } catch (const error& e) {
    CHECK(e.code() == status::workspace_too_small);
    CHECK(std::string(e.what()).find("workspace_bytes") != std::string::npos);
  }
  drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
  CHECK(untouched(out));
  // The same caller-owned workspace at its full size works.
  argmax(h, nullptr, logits.data(), rows, served::n, served::n, out.data(), workspace.data(), workspace.size());
  CHECK(out.download() == answers);
}
