// The MoE routing C ABI on the GPU (libnetra, embedded code objects, dispatch included):
//  - router -> shared gate -> act_quant captured on a caller stream under
//    CU_STREAM_CAPTURE_MODE_GLOBAL (which fails on any allocation or synchronisation), replayed
//    with changing inputs, every replay bitwise equal to the oracles;
//  - dispatch picks the exact router for <= 32 tokens and the matrix router above (explain says);
//  - a call no tactic admits is NETRA_STATUS_NOT_SUPPORTED and writes nothing; a strict refusal
//    inside a promoted domain is NETRA_STATUS_INVALID_ARGUMENT and writes nothing.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/dl_tensor.hpp"
#include "gpu/gpu_buffers.hpp"
#include "netra/c/moe_routing.h"
#include "oracles/moe_routing.hpp"
#include "oracles/moe_routing_inputs.hpp"

using namespace netra;
using testing::dl_tensor;
using testing::drv;

namespace {
std::string last_error() { return netra_last_error(); }

struct handle_guard {
  netra_moe_routing_handle* h = nullptr;
  handle_guard() { REQUIRE_MESSAGE(netra_moe_routing_create(&h) == NETRA_STATUS_OK, last_error()); }
  ~handle_guard() { netra_moe_routing_destroy(h); }
};
}  // namespace

TEST_CASE("routing through the C ABI, captured under global mode, equals the oracles over 20 replays") {
  handle_guard g;
  CUstream stream = nullptr;
  drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  const std::int64_t m = 4, rows = 9 * m;
  std::vector<std::uint16_t> rw(256 * 2048), gw(2048);
  oracles::fill_normal(rw.data(), 256 * 2048, 0.03, 1);
  oracles::fill_normal(gw.data(), 2048, 0.03, 2);
  testing::gpu_array<std::uint16_t> router_w(rw.size()), gate_w(gw.size()), hidden(m * 2048), gate_up(rows * 1024);
  testing::gpu_array<std::int32_t> ids(m * 9);
  testing::gpu_array<float> weights(m * 9), scales(rows * 4);
  testing::gpu_array<std::uint8_t> act(rows * 512);
  router_w.upload(rw);
  gate_w.upload(gw);

  const dl_tensor hidden_t(hidden.data(), testing::dl_bf16, {m, 2048}), router_t(router_w.data(), testing::dl_bf16, {256, 2048}),
      gate_t(gate_w.data(), testing::dl_bf16, {2048}), ids_t(ids.data(), testing::dl_i32, {m, 9}), weights_t(weights.data(), testing::dl_f32, {m, 9}),
      gate_up_t(gate_up.data(), testing::dl_bf16, {rows, 1024}), act_t(act.data(), testing::dl_e4m3, {rows, 512}),
      scales_t(scales.data(), testing::dl_f32, {rows, 4});
  drv().check(drv().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  const int r1 = netra_moe_router(g.h, hidden_t.get(), router_t.get(), ids_t.get(), weights_t.get(), stream);
  const int r2 = netra_moe_shared_gate(g.h, hidden_t.get(), gate_t.get(), ids_t.get(), weights_t.get(), stream);
  const int r3 = netra_moe_act_quant(g.h, gate_up_t.get(), act_t.get(), scales_t.get(), stream);
  CUgraph graph;
  drv().check(drv().cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  REQUIRE(r1 == NETRA_STATUS_OK);
  REQUIRE(r2 == NETRA_STATUS_OK);
  REQUIRE(r3 == NETRA_STATUS_OK);
  CUgraphExec exec;
  drv().check(drv().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiate");

  long mismatches = 0;
  for (int replay = 0; replay < 20; ++replay) {
    std::vector<std::uint16_t> h(m * 2048), gu(rows * 1024);
    for (std::int64_t t = 0; t < m; ++t) oracles::fill_normal(h.data() + t * 2048, 2048, 1.0, 100 * replay + t);
    for (std::int64_t r = 0; r < rows; ++r)
      oracles::fill_act_row(gu.data() + r * 1024, static_cast<oracles::act_row>((r + replay) % oracles::act_row_kinds), 1000 * replay + r);
    hidden.upload(h);
    gate_up.upload(gu);
    drv().check(drv().cuGraphLaunch(exec, stream), "cuGraphLaunch");
    drv().check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize");
    const auto got_ids = ids.download();
    const auto got_w = weights.download();
    const auto got_q = act.download();
    const auto got_s = scales.download();
    for (std::int64_t t = 0; t < m; ++t) {
      float l[256];
      for (int e = 0; e < 256; ++e) l[e] = oracles::router_exact_logit(h.data() + t * 2048, rw.data() + e * 2048);
      const auto want = oracles::route_token(l);
      for (int s = 0; s < 8; ++s) {
        mismatches += got_ids[t * 9 + s] != want.ids[s];
        mismatches += oracles::bits_of(got_w[t * 9 + s]) != oracles::bits_of(want.weights[s]);
      }
      mismatches += got_ids[t * 9 + 8] != 256;
      mismatches += oracles::bits_of(got_w[t * 9 + 8]) != oracles::bits_of(oracles::shared_gate_weight(h.data() + t * 2048, gw.data()));
    }
    std::vector<std::uint8_t> want_q(rows * 512);
    std::vector<float> want_s(rows * 4);
    oracles::act_quant(gu.data(), rows, 1024, want_q.data(), want_s.data());
    for (std::size_t i = 0; i < want_q.size(); ++i) mismatches += want_q[i] != got_q[i];
    for (std::size_t i = 0; i < want_s.size(); ++i) mismatches += oracles::bits_of(want_s[i]) != oracles::bits_of(got_s[i]);
  }
  CHECK(mismatches == 0);
  drv().cuGraphExecDestroy(exec);
  drv().cuGraphDestroy(graph);
  drv().cuStreamDestroy(stream);
}

TEST_CASE("dispatch: the exact router up to 32 tokens, the matrix router above; declines and strict refusals write nothing") {
  handle_guard g;
  testing::gpu_array<std::uint16_t> w(256 * 2048), hidden(200 * 2048), in(4609 * 1024);
  testing::gpu_array<std::int32_t> ids(200 * 9);
  testing::gpu_array<float> weights(200 * 9), scales(4609 * 4);
  testing::gpu_array<std::uint8_t> out(4609 * 512);
  auto explain_router = [&](std::int64_t tokens) {
    const dl_tensor h(hidden.data(), testing::dl_bf16, {tokens, 2048}), gw(w.data(), testing::dl_bf16, {256, 2048}),
        i(ids.data(), testing::dl_i32, {tokens, 9}), wt(weights.data(), testing::dl_f32, {tokens, 9});
    std::size_t length = 0;
    REQUIRE(netra_moe_router_explain(g.h, h.get(), gw.get(), i.get(), wt.get(), nullptr, 0, &length) == NETRA_STATUS_OK);
    std::string text(length + 1, '\0');
    REQUIRE(netra_moe_router_explain(g.h, h.get(), gw.get(), i.get(), wt.get(), text.data(), text.size(), nullptr) == NETRA_STATUS_OK);
    return text;
  };
  MESSAGE(explain_router(8));
  MESSAGE(explain_router(100));
  // tactics: [0] exact gfx950, [1] exact sm90a (both <= 32 tokens), [2] matrix gfx950, [3] matrix sm90a
  CHECK(explain_router(8).find("=> tactic [1]") != std::string::npos);
  CHECK(explain_router(32).find("=> tactic [1]") != std::string::npos);
  CHECK(explain_router(33).find("=> tactic [3]") != std::string::npos);
  CHECK(explain_router(128).find("=> tactic [3]") != std::string::npos);

  ids.fill_bytes(0xAB);
  weights.fill_bytes(0xAB);
  out.fill_bytes(0xAB);
  scales.fill_bytes(0xAB);
  auto router = [&](const void* h, std::int64_t tokens, std::int64_t hidden_size, const void* i) {
    const dl_tensor ht(h, testing::dl_bf16, {tokens, hidden_size}), gw(w.data(), testing::dl_bf16, {256, hidden_size}),
        it(i, testing::dl_i32, {tokens, 9}), wt(weights.data(), testing::dl_f32, {tokens, 9});
    return netra_moe_router(g.h, ht.get(), gw.get(), it.get(), wt.get(), nullptr);
  };
  auto shared_gate = [&](const void* h, std::int64_t tokens, std::int64_t hidden_size, const void* i) {
    const dl_tensor ht(h, testing::dl_bf16, {tokens, hidden_size}), gw(w.data(), testing::dl_bf16, {hidden_size}),
        it(i, testing::dl_i32, {tokens, 9}), wt(weights.data(), testing::dl_f32, {tokens, 9});
    return netra_moe_shared_gate(g.h, ht.get(), gw.get(), it.get(), wt.get(), nullptr);
  };
  auto act_quant = [&](const void* x, std::int64_t rows) {
    const dl_tensor it(x, testing::dl_bf16, {rows, 1024}), ot(out.data(), testing::dl_e4m3, {rows, 512}), st(scales.data(), testing::dl_f32, {rows, 4});
    return netra_moe_act_quant(g.h, it.get(), ot.get(), st.get(), nullptr);
  };
  // no tactic admits: 129 tokens, 4609 rows, another hidden size
  CHECK(router(hidden.data(), 129, 2048, ids.data()) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(shared_gate(hidden.data(), 4, 4096, ids.data()) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(act_quant(in.data(), 4609) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(last_error().find("netra_moe_act_quant: no tactic admits in bfloat16 shape [4609, 1024]") != std::string::npos);
  // strict refusals inside the promoted domains: misaligned / null pointers
  CHECK(act_quant(in.data() + 1, 9) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(router(hidden.data() + 2, 4, 2048, ids.data()) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(shared_gate(hidden.data(), 4, 2048, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
  for (auto v : ids.download()) CHECK(static_cast<std::uint32_t>(v) == 0xABABABABu);
  for (auto v : weights.download()) CHECK(oracles::bits_of(v) == 0xABABABABu);
  for (auto v : out.download()) CHECK(v == 0xAB);
}
