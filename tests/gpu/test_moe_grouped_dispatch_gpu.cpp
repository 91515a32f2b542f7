// The grouped experts through the one dispatch path (ops/moe_grouped_dispatch.hpp: the four
// stages' tactic lists, the embedded code objects of libnetra) on the GPU: every stage decided
// before anything is launched, the same bits as the configuration's launch paths
// (moe_grouped_experts) for M = 17, 64, 256, 300 and 768, and calls outside [17, 768] left to the
// caller (no tactic, nothing launched).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/ops/moe_grouped_dispatch.hpp"
#include "oracles/moe_experts.hpp"

using namespace netra;

TEST_CASE("grouped experts through the dispatch path equal the launch paths bit for bit") {
  using W = moe::expert_weights;
  const device_info device = current_cuda_device();
  const device_ref on = device_of(device);
  const moe_grouped_dispatcher dispatch(device, jit::options{});
  const moe_grouped_experts<sm90a> direct(device, [](const std::string& name) {
    return read_file_bytes(std::string(NETRA_CODE_OBJECT_DIR) + "/" + name + ".cubin");
  });
  CUstream stream;
  testing::drv().check(testing::drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  // weights: finite hashed bytes for every expert (values are not checked here, only equality)
  testing::gpu_array<std::uint8_t> w13(257ull << 21), w2(257ull << 20);
  testing::gpu_array<float> s13(257 * 128), s2(257 * 64);
  {
    std::vector<std::uint8_t> b(257ull << 21);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = oracles::finite_e4m3(oracles::mix(9, i, 0, 0));
    w13.upload(b);
    b.resize(257ull << 20);
    w2.upload(b);
    std::vector<float> s(257 * 128, 1.0f / 1024);
    s13.upload(s);
    s.resize(257 * 64);
    s2.upload(s);
  }
  const moe_expert_weights experts{w13.data(), s13.data(), w2.data(), s2.data()};
  for (int m : {16, 17, 64, 256, 300, 768, 769}) {
    INFO("tokens ", m);
    const std::size_t routes = static_cast<std::size_t>(m) * 9;
    testing::gpu_array<std::uint16_t> hidden(static_cast<std::size_t>(m) * 2048), out(static_cast<std::size_t>(m) * 2048);
    testing::gpu_array<std::int32_t> ids(routes);
    testing::gpu_array<float> rw(routes), scales(routes * 4);
    testing::gpu_array<std::uint8_t> act(routes * 512), plan(moe_grouped_experts<sm90a>::plan_bytes), partials(moe_grouped_experts<sm90a>::partials_bytes);
    hidden.upload(oracles::hidden_rows(m, 3 + m));
    ids.upload(oracles::routed_ids(m, 3 + m));
    rw.upload(std::vector<float>(routes, 0.1f));
    const auto choice = dispatch.select(strided_tensor(hidden.data(), dtype::bf16, on, {m, W::hidden}), strided_tensor(ids.data(), dtype::i32, on, {m, 9}),
                                        strided_tensor(rw.data(), dtype::f32, on, {m, 9}),
                                        strided_tensor(w13.data(), dtype::e4m3, on, {257, W::gate_up_rows, W::hidden}),
                                        strided_tensor(s13.data(), dtype::f32, on, {257, 8, 16}),
                                        strided_tensor(w2.data(), dtype::e4m3, on, {257, W::hidden, W::intermediate}),
                                        strided_tensor(s2.data(), dtype::f32, on, {257, 16, 4}),
                                        strided_tensor(act.data(), dtype::e4m3, on, {static_cast<i64>(routes), 512}),
                                        strided_tensor(scales.data(), dtype::f32, on, {static_cast<i64>(routes), 4}),
                                        strided_tensor(out.data(), dtype::bf16, on, {m, W::hidden}));
    CHECK(choice.runnable() == (m >= 17 && m <= 768));
    if (!choice.runnable()) continue;
    out.fill_bytes(0xFF);
    dispatch.launch(stream, choice);
    testing::drv().check(testing::drv().cuStreamSynchronize(stream), "sync");
    const auto via_dispatch = out.download();
    const auto act_dispatch = act.download();
    out.fill_bytes(0xFF);
    act.fill_bytes(0xFF);
    direct.run(stream, {hidden.data(), ids.data(), rw.data(), experts, plan.data(), act.data(), scales.data(), partials.data(), out.data(), nullptr, m},
               moe_grouped_experts<sm90a>::plan_bytes, moe_grouped_experts<sm90a>::partials_bytes);
    testing::drv().check(testing::drv().cuStreamSynchronize(stream), "sync");
    CHECK(out.download() == via_dispatch);
    CHECK(act.download() == act_dispatch);
  }
}
