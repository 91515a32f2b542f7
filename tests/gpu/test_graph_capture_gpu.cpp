// Graph safety of the launch path, on the GPU: argmax calls through the C ABI (dispatch
// included) are captured on the caller's stream under CU_STREAM_CAPTURE_MODE_GLOBAL, which
// fails on any allocation, synchronisation or other forbidden call in any thread; the graph is
// replayed 1000 times, the inputs changing before every replay, and every output matches the
// oracle. A control shows that global mode does catch a forbidden call (creating a handle).
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu/dl_tensor.hpp"
#include "gpu/gpu_buffers.hpp"
#include "netra/c/argmax.h"
#include "netra/contracts/argmax.hpp"
#include "oracles/argmax.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;
using testing::argmax_rows;
using testing::drv;

namespace {

/// `count` distinct rows of length n on the device, with their oracle answers.
struct row_pool {
  std::int64_t n;
  testing::gpu_array<float> rows;
  std::vector<std::int64_t> answers;
  row_pool(std::int64_t n_, int count, std::int64_t chunk) : n(n_), rows(static_cast<std::size_t>(n_ * count)) {
    std::vector<float> host(static_cast<std::size_t>(n * count));
    for (int v = 0; v < count; ++v) {
      float* row = host.data() + v * n;
      oracles::fill_row(row, n, static_cast<oracles::row_kind>(v % oracles::row_kinds), 7919u * static_cast<unsigned>(v) + 1, chunk);
      answers.push_back(oracles::argmax_row(row, n));
    }
    rows.upload(host);
  }
  const float* row(int v) const { return rows.data() + v * n; }
};

/// One captured call: its own logits [rows, stride] and out [rows].
struct slot {
  const row_pool* pool;
  std::int64_t rows, stride;
  testing::gpu_array<float> logits;
  testing::gpu_array<std::int64_t> out;
  std::vector<int> variant;  // which pool row each logits row holds for the next replay
  slot(const row_pool& p, std::int64_t rows_, std::int64_t stride_)
      : pool(&p), rows(rows_), stride(stride_), logits(static_cast<std::size_t>(rows_ * stride_)), out(static_cast<std::size_t>(rows_)),
        variant(static_cast<std::size_t>(rows_), 0) {}
};

std::string last_error() { return netra_last_error(); }

}  // namespace

TEST_CASE("argmax through the C ABI, captured under global capture mode, matches the oracle over 1000 replays") {
  netra_argmax_handle* handle = nullptr;
  REQUIRE_MESSAGE(netra_argmax_create(&handle) == NETRA_STATUS_OK, last_error());
  CUstream stream = nullptr;
  drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

  using reference = contracts::argmax_reference<sm90a>;
  using small = contracts::argmax<sm90a, 32768, 16, 8>;
  const row_pool reference_rows(reference::n, 24, reference::chunk_length);
  const row_pool small_rows(small::n, 24, small::chunk_length);

  std::vector<std::unique_ptr<slot>> slots;
  const std::int64_t reference_rows_per_slot[] = {1, 3, 8, 16, 2, 5, 1, 4, 7, 2, 1, 6};
  for (std::size_t i = 0; i < std::size(reference_rows_per_slot); ++i)
    slots.push_back(std::make_unique<slot>(reference_rows, reference_rows_per_slot[i], reference::n + (i % 3 == 0 ? 64 : 0)));
  // The JIT tactic joins the graph when this machine could compile it (NVRTC).
  const bool small_available = [&] {
    slot probe(small_rows, 1, small::n);
    return argmax_rows(handle, probe.logits.data(), 1, small::n, small::n, probe.out.data(), stream) == NETRA_STATUS_OK;
  }();
  if (small_available)
    for (const std::int64_t rows : {1, 8, 3, 5}) slots.push_back(std::make_unique<slot>(small_rows, rows, small::n + 4 * rows));
  else
    MESSAGE("the 32768-logit JIT tactic is unavailable here (", last_error(), "): graph holds the reference tactic only");
  drv().check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize");

  // Capture: every call of every slot, four times over (later calls overwrite the same outputs).
  constexpr int repeats = 4;
  drv().check(drv().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  int launches = 0;
  for (int r = 0; r < repeats; ++r)
    for (const auto& s : slots) {
      const netra_status st = argmax_rows(handle, s->logits.data(), s->rows, s->pool->n, s->stride, s->out.data(), stream);
      CHECK_MESSAGE(st == NETRA_STATUS_OK, last_error());
      ++launches;
    }
  CUgraph graph = nullptr;
  drv().check(drv().cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  drv().check(drv().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
  MESSAGE(launches, " argmax calls captured in one graph");

  std::mt19937 rng(4242);
  long checked = 0, mismatches = 0;
  std::string first_mismatch;
  for (int replay = 0; replay < 1000; ++replay) {
    for (auto& s : slots) {
      for (std::int64_t row = 0; row < s->rows; ++row) {
        const int v = static_cast<int>(rng() % s->pool->answers.size());
        s->variant[static_cast<std::size_t>(row)] = v;
        drv().check(drv().cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(s->logits.data() + row * s->stride),
                                            reinterpret_cast<CUdeviceptr>(s->pool->row(v)), s->pool->n * sizeof(float), stream),
                    "cuMemcpyDtoDAsync");
      }
      drv().check(drv().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(s->out.data()), 0xAB, s->rows * sizeof(std::int64_t), stream),
                  "cuMemsetD8Async");
    }
    drv().check(drv().cuGraphLaunch(exec, stream), "cuGraphLaunch");
    drv().check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize");
    for (const auto& s : slots) {
      const auto got = s->out.download();
      for (std::int64_t row = 0; row < s->rows; ++row) {
        const std::int64_t expected = s->pool->answers[static_cast<std::size_t>(s->variant[static_cast<std::size_t>(row)])];
        ++checked;
        if (got[static_cast<std::size_t>(row)] != expected && mismatches++ == 0)
          first_mismatch = "replay " + std::to_string(replay) + " n " + std::to_string(s->pool->n) + " row " + std::to_string(row) +
                           ": got " + std::to_string(got[static_cast<std::size_t>(row)]) + ", expected " + std::to_string(expected);
      }
    }
  }
  MESSAGE(checked, " rows checked over 1000 replays");
  CHECK_MESSAGE(mismatches == 0, first_mismatch);
  CHECK(checked >= 1000 * 56);

  drv().cuGraphExecDestroy(exec);
  drv().cuGraphDestroy(graph);
  netra_argmax_destroy(handle);
  drv().cuStreamDestroy(stream);
}

TEST_CASE("global capture mode catches a forbidden call: creating a handle during capture fails") {
  CUstream stream = nullptr;
  drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  drv().check(drv().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  netra_argmax_handle* handle = nullptr;
  const netra_status st = netra_argmax_create(&handle);
  const std::string why = last_error();
  CUgraph graph = nullptr;
  const CUresult ended = drv().cuStreamEndCapture(stream, &graph);
  MESSAGE("create during capture: ", netra_status_name(st), " (", why, "); end of capture: ", static_cast<int>(ended));
  CHECK(st == NETRA_STATUS_BACKEND_ERROR);
  CHECK(handle == nullptr);
  if (graph) drv().cuGraphDestroy(graph);
  drv().cuStreamDestroy(stream);
}
