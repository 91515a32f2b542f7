// Bad input through the C ABI on the GPU, every family (argmax, act_quant, router, shared gate,
// gate_up, down, the whole block): a wrong element type on every tensor argument, a wrong shape,
// a wrong device, a non-contiguous view where the contract wants rows or compact tensors, a
// misaligned view, an output or weight tensor smaller than the call needs (W13 / W2 without the
// shared expert's slice among them). Each call returns NOT_SUPPORTED (not the contract's call)
// or INVALID_ARGUMENT (refused inside a promoted domain) with the tensor and its value named,
// and nothing is launched: every output stays poisoned, and the context stays healthy (a
// well-described call on the same buffers then runs).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/dl_tensor.hpp"
#include "gpu/gpu_buffers.hpp"
#include "netra/c/argmax.h"
#include "netra/c/moe_experts.h"
#include "netra/c/moe_routing.h"

using namespace netra;
using testing::dl_tensor;
using testing::drv;
using bytes = testing::gpu_array<std::uint8_t>;
namespace dl = testing;

namespace {
constexpr unsigned char poison = 0xAB;
constexpr DLDevice cpu{kDLCPU, 0}, other_gpu{kDLCUDA, 7};

std::string last_error() { return netra_last_error(); }

/// `status` is `want` and the message names `text`.
void expect(netra_status status, netra_status want, const std::string& text) {
  INFO("expected ", netra_status_name(want), " naming \"", text, "\"; got ", netra_status_name(status), ": ", last_error());
  CHECK(status == want);
  CHECK(last_error().find(text) != std::string::npos);
}

/// Every byte of every output still the poison (nothing was launched or written).
void check_poisoned(std::initializer_list<const bytes*> outputs) {
  drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");  // no fault: nothing ran out of bounds
  for (const bytes* b : outputs) {
    std::size_t written = 0;
    for (const std::uint8_t v : b->download()) written += v != poison;
    CHECK(written == 0);
  }
}
bytes poisoned(std::size_t n) {
  bytes b(n);
  b.fill_bytes(poison);
  return b;
}
}  // namespace

TEST_CASE("argmax: bad tensors are refused by name and write nothing") {
  netra_argmax_handle* h = nullptr;
  REQUIRE_MESSAGE(netra_argmax_create(&h) == NETRA_STATUS_OK, last_error());
  constexpr std::int64_t n = 248320, rows = 4;
  bytes logits(rows * n * 8 + 64);
  logits.fill_bytes(0);
  bytes out = poisoned(rows * 8 * 2);
  auto call = [&](const dl_tensor& l, const dl_tensor& o) { return netra_argmax(h, l.get(), o.get(), nullptr); };
  const dl_tensor good_l(logits.data(), dl::dl_f32, {rows, n}), good_o(out.data(), dl::dl_i64, {rows});
  expect(call(dl_tensor(logits.data(), dl::dl_f64, {rows, n}), good_o), NETRA_STATUS_NOT_SUPPORTED, "logits float64");
  expect(call(dl_tensor(logits.data(), dl::dl_bf16, {rows, n}), good_o), NETRA_STATUS_NOT_SUPPORTED, "logits bfloat16");
  expect(call(good_l, dl_tensor(out.data(), dl::dl_i32, {rows})), NETRA_STATUS_INVALID_ARGUMENT, "'out': requires int64, got int32");
  expect(call(good_l, dl_tensor(out.data(), dl::dl_f32, {rows})), NETRA_STATUS_INVALID_ARGUMENT, "got float32");
  expect(call(good_l, dl_tensor(out.data(), dl::dl_i64, {rows / 2})), NETRA_STATUS_INVALID_ARGUMENT,
         "'out': requires shape [rows] = [4], got shape [2]");
  expect(call(good_l, dl_tensor(out.data(), dl::dl_i64, {rows}, {}, cpu)), NETRA_STATUS_INVALID_ARGUMENT, "got cpu");
  expect(call(good_l, dl_tensor(out.data(), dl::dl_i64, {rows}, {2})), NETRA_STATUS_INVALID_ARGUMENT, "got strides [2]");
  expect(call(dl_tensor(logits.data(), dl::dl_f32, {rows, n}, {1, rows}), good_o), NETRA_STATUS_INVALID_ARGUMENT, "got strides [1, 4]");
  expect(call(dl_tensor(logits.data() + 4, dl::dl_f32, {rows, n}), good_o), NETRA_STATUS_INVALID_ARGUMENT, "16-byte aligned data");
  expect(call(dl_tensor(logits.data(), dl::dl_f32, {rows, n}, {}, other_gpu), good_o), NETRA_STATUS_NOT_SUPPORTED, "on cuda:7");
  check_poisoned({&out});
  CHECK(call(good_l, good_o) == NETRA_STATUS_OK);
  netra_argmax_destroy(h);
}

TEST_CASE("act_quant, router, shared gate: bad tensors are refused by name and write nothing") {
  netra_moe_routing_handle* h = nullptr;
  REQUIRE_MESSAGE(netra_moe_routing_create(&h) == NETRA_STATUS_OK, last_error());
  constexpr std::int64_t m = 2, rows = 9 * m;
  bytes in(rows * 1024 * 4 + 64), hidden(m * 2048 * 4 + 64), router_w(256 * 2048 * 4), gate_w(2048 * 4);
  for (const bytes* b : {&in, &hidden, &router_w, &gate_w}) b->fill_bytes(0);
  bytes q = poisoned(rows * 512 * 2), scales = poisoned(rows * 4 * 4 * 2), ids = poisoned(m * 9 * 8 * 2), weights = poisoned(m * 9 * 8 * 2);

  // act_quant: in bfloat16 [rows, 1024] (rows), out E4M3 [rows, 512], scales float32 [rows, 4]
  auto act_quant = [&](const dl_tensor& i, const dl_tensor& o, const dl_tensor& s) { return netra_moe_act_quant(h, i.get(), o.get(), s.get(), nullptr); };
  const dl_tensor in_t(in.data(), dl::dl_bf16, {rows, 1024}), q_t(q.data(), dl::dl_e4m3, {rows, 512}), s_t(scales.data(), dl::dl_f32, {rows, 4});
  expect(act_quant(dl_tensor(in.data(), dl::dl_f32, {rows, 1024}), q_t, s_t), NETRA_STATUS_NOT_SUPPORTED, "in float32");
  expect(act_quant(dl_tensor(in.data(), dl::dl_f16, {rows, 1024}), q_t, s_t), NETRA_STATUS_NOT_SUPPORTED, "in float16");
  expect(act_quant(in_t, dl_tensor(q.data(), dl::dl_f16, {rows, 512}), s_t), NETRA_STATUS_INVALID_ARGUMENT, "'out': requires float8_e4m3fn, got float16");
  expect(act_quant(in_t, q_t, dl_tensor(scales.data(), dl::dl_bf16, {rows, 4})), NETRA_STATUS_INVALID_ARGUMENT, "'scales': requires float32");
  expect(act_quant(in_t, dl_tensor(q.data(), dl::dl_e4m3, {rows / 2, 512}), s_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'out': requires shape [rows, 512] = [18, 512], got shape [9, 512]");
  expect(act_quant(in_t, q_t, dl_tensor(scales.data(), dl::dl_f32, {rows / 2, 4})), NETRA_STATUS_INVALID_ARGUMENT, "'scales'");
  expect(act_quant(in_t, q_t, dl_tensor(scales.data(), dl::dl_f32, {rows, 4}, {}, cpu)), NETRA_STATUS_INVALID_ARGUMENT, "got cpu");
  expect(act_quant(dl_tensor(in.data(), dl::dl_bf16, {rows, 1024}, {1, rows}), q_t, s_t), NETRA_STATUS_INVALID_ARGUMENT, "contiguous rows");
  expect(act_quant(dl_tensor(in.data() + 2, dl::dl_bf16, {rows, 1024}), q_t, s_t), NETRA_STATUS_INVALID_ARGUMENT, "16-byte aligned data");
  expect(act_quant(in_t, dl_tensor(q.data(), dl::dl_e4m3, {rows, 512}, {1024, 1}), s_t), NETRA_STATUS_INVALID_ARGUMENT, "compact row-major");
  check_poisoned({&q, &scales});
  CHECK(act_quant(in_t, dl_tensor(q.data(), dl::dl_u8, {rows, 512}), s_t) == NETRA_STATUS_OK);  // uint8 holding E4M3 bytes

  // router / shared gate: hidden bfloat16 [m, 2048] (rows), gate weights, ids int32 / weights float32 [m, 9]
  const dl_tensor hid_t(hidden.data(), dl::dl_bf16, {m, 2048}), rw_t(router_w.data(), dl::dl_bf16, {256, 2048}),
      gw_t(gate_w.data(), dl::dl_bf16, {2048}), ids_t(ids.data(), dl::dl_i32, {m, 9}), w_t(weights.data(), dl::dl_f32, {m, 9});
  auto router = [&](const dl_tensor& x, const dl_tensor& g, const dl_tensor& i, const dl_tensor& w) {
    return netra_moe_router(h, x.get(), g.get(), i.get(), w.get(), nullptr);
  };
  auto shared_gate = [&](const dl_tensor& x, const dl_tensor& g, const dl_tensor& i, const dl_tensor& w) {
    return netra_moe_shared_gate(h, x.get(), g.get(), i.get(), w.get(), nullptr);
  };
  expect(router(dl_tensor(hidden.data(), dl::dl_f32, {m, 2048}), rw_t, ids_t, w_t), NETRA_STATUS_NOT_SUPPORTED, "hidden float32");
  expect(router(hid_t, dl_tensor(router_w.data(), dl::dl_f32, {256, 2048}), ids_t, w_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'gate_weight': requires bfloat16, got float32");
  expect(router(hid_t, rw_t, dl_tensor(ids.data(), dl::dl_i64, {m, 9}), w_t), NETRA_STATUS_INVALID_ARGUMENT, "'route_ids': requires int32, got int64");
  expect(router(hid_t, rw_t, ids_t, dl_tensor(weights.data(), dl::dl_bf16, {m, 9})), NETRA_STATUS_INVALID_ARGUMENT, "'route_weights'");
  expect(router(hid_t, rw_t, dl_tensor(ids.data(), dl::dl_i32, {m, 8}), w_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'route_ids': requires shape [tokens, 9] = [2, 9], got shape [2, 8]");
  expect(router(hid_t, rw_t, ids_t, dl_tensor(weights.data(), dl::dl_f32, {m - 1, 9})), NETRA_STATUS_INVALID_ARGUMENT, "got shape [1, 9]");
  expect(router(hid_t, dl_tensor(router_w.data(), dl::dl_bf16, {256, 2048}, {1, 256}), ids_t, w_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'gate_weight': requires compact row-major strides");
  expect(router(dl_tensor(hidden.data(), dl::dl_bf16, {m, 2048}, {2048 + 4, 1}), rw_t, ids_t, w_t), NETRA_STATUS_INVALID_ARGUMENT, "'hidden_stride'");
  expect(router(hid_t, rw_t, ids_t, dl_tensor(weights.data(), dl::dl_f32, {m, 9}, {}, cpu)), NETRA_STATUS_INVALID_ARGUMENT, "got cpu");
  expect(router(hid_t, rw_t, dl_tensor(ids.data() + 2, dl::dl_i32, {m, 9}), w_t), NETRA_STATUS_INVALID_ARGUMENT, "4-byte aligned data");
  expect(router(hid_t, dl_tensor(router_w.data(), dl::dl_bf16, {128, 2048}), ids_t, w_t), NETRA_STATUS_NOT_SUPPORTED, "gate_weight bfloat16 shape [128, 2048]");
  expect(shared_gate(dl_tensor(hidden.data(), dl::dl_f16, {m, 2048}), gw_t, ids_t, w_t), NETRA_STATUS_NOT_SUPPORTED, "hidden float16");
  expect(shared_gate(hid_t, dl_tensor(gate_w.data(), dl::dl_f32, {2048}), ids_t, w_t), NETRA_STATUS_INVALID_ARGUMENT, "'gate_weight'");
  expect(shared_gate(hid_t, dl_tensor(gate_w.data(), dl::dl_bf16, {1024}), ids_t, w_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'gate_weight': requires shape [2048], got shape [1024]");
  expect(shared_gate(hid_t, gw_t, dl_tensor(ids.data(), dl::dl_i64, {m, 9}), w_t), NETRA_STATUS_INVALID_ARGUMENT, "'route_ids'");
  expect(shared_gate(hid_t, gw_t, ids_t, dl_tensor(weights.data(), dl::dl_f64, {m, 9})), NETRA_STATUS_INVALID_ARGUMENT, "got float64");
  expect(shared_gate(hid_t, gw_t, dl_tensor(ids.data(), dl::dl_i32, {m, 9}, {}, other_gpu), w_t), NETRA_STATUS_INVALID_ARGUMENT, "got cuda:7");
  check_poisoned({&ids, &weights});
  CHECK(router(hid_t, rw_t, ids_t, w_t) == NETRA_STATUS_OK);
  netra_moe_routing_destroy(h);
}

namespace {
/// The model's weight tensors (zeros: nothing here reads them unless admitted).
struct expert_weights {
  bytes w13{257ull * 1024 * 2048}, s13{257ull * 8 * 16 * 4}, w2{257ull * 2048 * 512}, s2{257ull * 16 * 4 * 4};
  expert_weights() {
    for (const bytes* b : {&w13, &s13, &w2, &s2}) b->fill_bytes(0);
  }
};
}  // namespace

TEST_CASE("gate_up and down: bad tensors (W13 / W2 without the shared expert among them) are refused by name and write nothing") {
  netra_moe_experts_handle* h = nullptr;
  REQUIRE_MESSAGE(netra_moe_experts_create(&h) == NETRA_STATUS_OK, last_error());
  const expert_weights w;
  constexpr std::int64_t m = 2, routes = 9 * m;
  bytes hidden(m * 2048 * 4 + 64), ids(m * 9 * 8), rw(m * 9 * 8), act(routes * 1024 * 2 + 64), scales(routes * 4 * 4);
  for (const bytes* b : {&hidden, &act, &scales, &rw}) b->fill_bytes(0);
  std::vector<std::uint8_t> routed(m * 9 * 4, 0);
  for (std::int64_t r = 0; r < routes; ++r) reinterpret_cast<std::int32_t*>(routed.data())[r] = r % 9 == 8 ? 256 : static_cast<std::int32_t>(r);
  ids.upload(routed);
  bytes gate_up = poisoned(routes * 1024 * 2 * 2), out = poisoned(m * 2048 * 2 * 2);

  const dl_tensor hid_t(hidden.data(), dl::dl_bf16, {m, 2048}), ids_t(ids.data(), dl::dl_i32, {m, 9}),
      w13_t(w.w13.data(), dl::dl_e4m3, {257, 1024, 2048}), s13_t(w.s13.data(), dl::dl_f32, {257, 8, 16}),
      gu_t(gate_up.data(), dl::dl_bf16, {routes, 1024});
  auto gate_up_call = [&](const dl_tensor& x, const dl_tensor& i, const dl_tensor& w13, const dl_tensor& s13, const dl_tensor& o) {
    return netra_moe_expert_gate_up(h, x.get(), i.get(), w13.get(), s13.get(), o.get(), nullptr);
  };
  expect(gate_up_call(dl_tensor(hidden.data(), dl::dl_f32, {m, 2048}), ids_t, w13_t, s13_t, gu_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'hidden': requires bfloat16, got float32");
  expect(gate_up_call(dl_tensor(hidden.data(), dl::dl_f16, {m, 2048}), ids_t, w13_t, s13_t, gu_t), NETRA_STATUS_INVALID_ARGUMENT, "got float16");
  expect(gate_up_call(dl_tensor(hidden.data(), dl::dl_bf16, {m, 2048}, {4096, 1}), ids_t, w13_t, s13_t, gu_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'hidden': requires compact row-major strides, got strides [4096, 1]");
  expect(gate_up_call(hid_t, dl_tensor(ids.data(), dl::dl_i64, {m, 9}), w13_t, s13_t, gu_t), NETRA_STATUS_INVALID_ARGUMENT, "'ids': requires int32, got int64");
  expect(gate_up_call(hid_t, ids_t, dl_tensor(w.w13.data(), dl::dl_f32, {257, 1024, 2048}), s13_t, gu_t), NETRA_STATUS_INVALID_ARGUMENT, "'w13'");
  expect(gate_up_call(hid_t, ids_t, dl_tensor(w.w13.data(), dl::dl_e4m3, {256, 1024, 2048}), s13_t, gu_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'w13': requires shape [257 experts (256 routed + shared), 1024, 2048] = [257, 1024, 2048], got shape [256, 1024, 2048]");
  expect(gate_up_call(hid_t, ids_t, w13_t, dl_tensor(w.s13.data(), dl::dl_f32, {256, 8, 16}), gu_t), NETRA_STATUS_INVALID_ARGUMENT, "'s13'");
  expect(gate_up_call(hid_t, ids_t, w13_t, dl_tensor(w.s13.data(), dl::dl_bf16, {257, 8, 16}), gu_t), NETRA_STATUS_INVALID_ARGUMENT, "got bfloat16");
  expect(gate_up_call(hid_t, ids_t, w13_t, s13_t, dl_tensor(gate_up.data(), dl::dl_bf16, {routes / 2, 1024})), NETRA_STATUS_INVALID_ARGUMENT,
         "'out': requires shape [9 tokens, 1024] = [18, 1024], got shape [9, 1024]");
  expect(gate_up_call(hid_t, ids_t, w13_t, s13_t, dl_tensor(gate_up.data(), dl::dl_f32, {routes, 1024})), NETRA_STATUS_INVALID_ARGUMENT, "got float32");
  expect(gate_up_call(hid_t, ids_t, dl_tensor(w.w13.data(), dl::dl_e4m3, {257, 1024, 2048}, {}, cpu), s13_t, gu_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'w13': requires the handle's device (cuda:0), got cpu");
  expect(gate_up_call(dl_tensor(hidden.data() + 2, dl::dl_bf16, {m, 2048}), ids_t, w13_t, s13_t, gu_t), NETRA_STATUS_INVALID_ARGUMENT,
         "16-byte aligned data");
  expect(gate_up_call(dl_tensor(hidden.data(), dl::dl_bf16, {17, 2048}), dl_tensor(ids.data(), dl::dl_i32, {17, 9}), w13_t, s13_t, gu_t),
         NETRA_STATUS_NOT_SUPPORTED, "hidden bfloat16 shape [17, 2048]");
  check_poisoned({&gate_up});

  const dl_tensor act_t(act.data(), dl::dl_e4m3, {routes, 512}), sc_t(scales.data(), dl::dl_f32, {routes, 4}), rw_t(rw.data(), dl::dl_f32, {m, 9}),
      w2_t(w.w2.data(), dl::dl_e4m3, {257, 2048, 512}), s2_t(w.s2.data(), dl::dl_f32, {257, 16, 4}), out_t(out.data(), dl::dl_bf16, {m, 2048});
  auto down = [&](const dl_tensor& a, const dl_tensor* s, const dl_tensor& i, const dl_tensor& r, const dl_tensor& w2, const dl_tensor& s2,
                  const dl_tensor& o) {
    return netra_moe_expert_down(h, a.get(), s ? s->get() : nullptr, i.get(), r.get(), w2.get(), s2.get(), o.get(), nullptr);
  };
  expect(down(dl_tensor(act.data(), dl::dl_f32, {routes, 512}), &sc_t, ids_t, rw_t, w2_t, s2_t, out_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'act': requires float8_e4m3fn, got float32");
  expect(down(act_t, nullptr, ids_t, rw_t, w2_t, s2_t, out_t), NETRA_STATUS_INVALID_ARGUMENT, "'act_scales': requires a tensor, got NULL");
  expect(down(act_t, &sc_t, dl_tensor(ids.data(), dl::dl_i64, {m, 9}), rw_t, w2_t, s2_t, out_t), NETRA_STATUS_INVALID_ARGUMENT, "'ids'");
  expect(down(act_t, &sc_t, ids_t, dl_tensor(rw.data(), dl::dl_bf16, {m, 9}), w2_t, s2_t, out_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'route_weights': requires float32, got bfloat16");
  expect(down(act_t, &sc_t, ids_t, dl_tensor(rw.data(), dl::dl_f64, {m, 9}), w2_t, s2_t, out_t), NETRA_STATUS_INVALID_ARGUMENT, "got float64");
  expect(down(act_t, &sc_t, ids_t, rw_t, dl_tensor(w.w2.data(), dl::dl_e4m3, {256, 2048, 512}), s2_t, out_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'w2': requires shape [257 experts (256 routed + shared), 2048, 512] = [257, 2048, 512], got shape [256, 2048, 512]");
  expect(down(act_t, &sc_t, ids_t, rw_t, w2_t, dl_tensor(w.s2.data(), dl::dl_f32, {257, 16, 2}), out_t), NETRA_STATUS_INVALID_ARGUMENT, "'s2'");
  expect(down(act_t, &sc_t, ids_t, rw_t, w2_t, s2_t, dl_tensor(out.data(), dl::dl_bf16, {m / 2, 2048})), NETRA_STATUS_INVALID_ARGUMENT,
         "'out': requires shape [tokens, 2048] = [2, 2048], got shape [1, 2048]");
  expect(down(act_t, &sc_t, ids_t, rw_t, w2_t, s2_t, dl_tensor(out.data(), dl::dl_f32, {m, 2048})), NETRA_STATUS_INVALID_ARGUMENT, "got float32");
  expect(down(dl_tensor(act.data(), dl::dl_e4m3, {routes / 2, 512}), &sc_t, ids_t, rw_t, w2_t, s2_t, out_t), NETRA_STATUS_INVALID_ARGUMENT,
         "'act': requires shape [9 tokens, 512] (act_quant's output) = [18, 512], got shape [9, 512]");
  expect(down(dl_tensor(act.data() + 1, dl::dl_e4m3, {routes, 512}), &sc_t, ids_t, rw_t, w2_t, s2_t, out_t), NETRA_STATUS_INVALID_ARGUMENT,
         "16-byte aligned data");
  expect(down(act_t, &sc_t, ids_t, rw_t, w2_t, s2_t, dl_tensor(out.data(), dl::dl_bf16, {m, 2048}, {}, cpu)), NETRA_STATUS_INVALID_ARGUMENT, "got cpu");
  const dl_tensor act_bf16(act.data(), dl::dl_bf16, {routes, 1024});
  expect(down(act_bf16, nullptr, ids_t, rw_t, w2_t, s2_t, dl_tensor(out.data(), dl::dl_bf16, {m, 1024})), NETRA_STATUS_INVALID_ARGUMENT,
         "'out': requires shape [tokens, 2048]");  // fused input
  check_poisoned({&out});
  CHECK(gate_up_call(hid_t, ids_t, w13_t, s13_t, gu_t) == NETRA_STATUS_OK);
  CHECK(down(act_t, &sc_t, ids_t, rw_t, w2_t, s2_t, out_t) == NETRA_STATUS_OK);
  drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
  netra_moe_experts_destroy(h);
}

TEST_CASE("the whole block: a bad tensor in any stage launches no stage") {
  netra_moe_block_handle* h = nullptr;
  REQUIRE_MESSAGE(netra_moe_block_create(&h) == NETRA_STATUS_OK, last_error());
  const expert_weights w;
  constexpr std::int64_t m = 2, routes = 9 * m;
  bytes hidden(m * 2048 * 2), router_w(256 * 2048 * 2), gate_w(2048 * 2);
  for (const bytes* b : {&hidden, &router_w, &gate_w}) b->fill_bytes(0);
  bytes ids = poisoned(m * 9 * 4), rw = poisoned(m * 9 * 4), gate_up = poisoned(routes * 1024 * 2), act = poisoned(routes * 512),
        scales = poisoned(routes * 4 * 4), out = poisoned(m * 2048 * 2);
  const dl_tensor hid_t(hidden.data(), dl::dl_bf16, {m, 2048}), rt_t(router_w.data(), dl::dl_bf16, {256, 2048}), gw_t(gate_w.data(), dl::dl_bf16, {2048}),
      w13_t(w.w13.data(), dl::dl_e4m3, {257, 1024, 2048}), s13_t(w.s13.data(), dl::dl_f32, {257, 8, 16}),
      w2_t(w.w2.data(), dl::dl_e4m3, {257, 2048, 512}), s2_t(w.s2.data(), dl::dl_f32, {257, 16, 4}), ids_t(ids.data(), dl::dl_i32, {m, 9}),
      rw_t(rw.data(), dl::dl_f32, {m, 9}), gu_t(gate_up.data(), dl::dl_bf16, {routes, 1024}), act_t(act.data(), dl::dl_e4m3, {routes, 512}),
      sc_t(scales.data(), dl::dl_f32, {routes, 4}), out_t(out.data(), dl::dl_bf16, {m, 2048});
  auto block = [&](const dl_tensor& w13, const dl_tensor& gu, const dl_tensor& o, netra_moe_block_variant v) {
    return netra_moe_block(h, hid_t.get(), rt_t.get(), gw_t.get(), w13.get(), s13_t.get(), w2_t.get(), s2_t.get(), ids_t.get(), rw_t.get(), gu.get(),
                           act_t.get(), sc_t.get(), o.get(), v, nullptr);
  };
  // gate_up's W13 without the shared expert: the router (the first stage) is not launched either
  expect(block(dl_tensor(w.w13.data(), dl::dl_e4m3, {256, 1024, 2048}), gu_t, out_t, NETRA_MOE_BLOCK_UNFUSED), NETRA_STATUS_INVALID_ARGUMENT,
         "'w13': requires shape [257 experts");
  expect(block(w13_t, dl_tensor(gate_up.data(), dl::dl_bf16, {m, 1024}), out_t, NETRA_MOE_BLOCK_UNFUSED), NETRA_STATUS_INVALID_ARGUMENT,
         "got shape [2, 1024]");
  expect(block(w13_t, gu_t, dl_tensor(out.data(), dl::dl_f32, {m, 2048}), NETRA_MOE_BLOCK_FUSED), NETRA_STATUS_INVALID_ARGUMENT, "got float32");
  expect(block(w13_t, gu_t, out_t, static_cast<netra_moe_block_variant>(5)), NETRA_STATUS_INVALID_ARGUMENT, "variant must be");
  check_poisoned({&ids, &rw, &gate_up, &act, &scales, &out});
  std::size_t length = 0;
  REQUIRE(netra_moe_block_explain(h, hid_t.get(), rt_t.get(), gw_t.get(), w13_t.get(), s13_t.get(), w2_t.get(), s2_t.get(), ids_t.get(), rw_t.get(),
                                  gu_t.get(), act_t.get(), sc_t.get(), out_t.get(), NETRA_MOE_BLOCK_UNFUSED, nullptr, 0, &length) == NETRA_STATUS_OK);
  std::string text(length + 1, '\0');
  REQUIRE(netra_moe_block_explain(h, hid_t.get(), rt_t.get(), gw_t.get(), w13_t.get(), s13_t.get(), w2_t.get(), s2_t.get(), ids_t.get(), rw_t.get(),
                                  gu_t.get(), act_t.get(), sc_t.get(), out_t.get(), NETRA_MOE_BLOCK_UNFUSED, text.data(), text.size(), nullptr) ==
          NETRA_STATUS_OK);
  MESSAGE(text);
  for (const char* stage : {"router (+ shared gate):", "gate_up:", "act_quant:", "down:"}) CHECK(text.find(stage) != std::string::npos);
  CHECK(block(w13_t, gu_t, out_t, NETRA_MOE_BLOCK_UNFUSED) == NETRA_STATUS_OK);
  drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
  netra_moe_block_destroy(h);
}
