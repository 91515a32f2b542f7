// The gdn C ABI on the GPU: a K0 verify through netra_gdn_verify writes the bytes the C++ launch
// path writes; refusals launch and write nothing — a CPU tensor or a too-small output is declined
// (NOT_SUPPORTED), a replay inside its promoted domain with a pool of the wrong size is refused
// (INVALID_ARGUMENT naming the tensor), a NULL handle is refused.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpu/dl_tensor.hpp"
#include "gpu/test_gdn_common.hpp"
#include "netra/c/gdn.h"

using namespace netra;
using namespace netra::testing;
using namespace netra::testing::gdn;

TEST_CASE("gdn through the C ABI: verify equals the C++ path; refusals write nothing") {
  constexpr std::int64_t B = 3, T = 12, R = B * T, D = 8192, H = 16, HV = 32, K = 128, V = 128, S = 5;
  netra_gdn_handle* h = nullptr;
  REQUIRE_MESSAGE(netra_gdn_create(&h) == NETRA_STATUS_OK, netra_last_error());
  std::vector<float> qk(R * H * K), gates(R * HV), pool(S * HV * V * K);
  std::mt19937 g(5);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  for (auto& x : qk) x = u(g);
  for (auto& x : gates) x = 0.5f + u(g);
  for (auto& x : pool) x = u(g);
  gpu_array<float> q(qk.size()), k(qk.size()), decay(gates.size()), beta(gates.size()), state(pool.size());
  gpu_array<std::uint16_t> y(R * D), out(R * HV * V), out_cpp(R * HV * V), conv(S * D * 3), win(R * D * 3);
  gpu_array<std::int32_t> slots(B), accepted(B);
  q.upload(qk), k.upload(qk), decay.upload(gates), beta.upload(gates), state.upload(pool);
  y.upload(bf16_values(R * D, 6, 1.0f, false)), slots.upload({2, 0, 1}), accepted.upload({12, 3, 0});
  out.fill_bytes(0xAB), out_cpp.fill_bytes(0xCD), conv.fill_bytes(0x11);
  const dl_tensor dq(q.data(), dl_f32, {R, H, K}), dk(k.data(), dl_f32, {R, H, K}), dy(y.data(), dl_bf16, {R, D}), dd(decay.data(), dl_f32, {R, HV}),
      db(beta.data(), dl_f32, {R, HV}), ds(state.data(), dl_f32, {S, HV, V, K}), dslots(slots.data(), dl_i32, {B}),
      dout(out.data(), dl_bf16, {R, HV, V});
  REQUIRE_MESSAGE(netra_gdn_verify(h, dq.get(), dk.get(), dy.get(), dd.get(), db.get(), ds.get(), dslots.get(), dout.get(), nullptr) == NETRA_STATUS_OK,
                  netra_last_error());
  using K0 = contracts::gdn_k0<sm90a, netra::gdn::state_storage::fp32>;
  gdn_recurrent(handle_of<K0>(), nullptr,
                gdn_recurrent_call(device(), tensor(q, dtype::f32, {R, H, K}), tensor(k, dtype::f32, {R, H, K}), tensor(y, dtype::bf16, {R, D}),
                                   tensor(decay, dtype::f32, {R, HV}), tensor(beta, dtype::f32, {R, HV}), tensor(state, dtype::f32, {S, HV, V, K}),
                                   tensor(slots, dtype::i32, {B}), tensor(out_cpp, dtype::bf16, {R, HV, V}), {}, {}, {}));
  CHECK(mismatches(out.download(), out_cpp.download(), static_cast<std::size_t>(R * HV * V)) == 0);

  // Declined: a host tensor, a too-small output. Nothing written.
  out.fill_bytes(0xAB);
  std::vector<float> host_q(qk);
  const dl_tensor cpu_q(host_q.data(), dl_f32, {R, H, K}, {}, {kDLCPU, 0}), small(out.data(), dl_bf16, {R - 1, HV, V});
  CHECK(netra_gdn_verify(h, cpu_q.get(), dk.get(), dy.get(), dd.get(), db.get(), ds.get(), dslots.get(), dout.get(), nullptr) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(netra_gdn_verify(h, dq.get(), dk.get(), dy.get(), dd.get(), db.get(), ds.get(), dslots.get(), small.get(), nullptr) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(mismatches(out.download(), std::vector<std::uint16_t>(static_cast<std::size_t>(R * HV * V), 0xABAB), static_cast<std::size_t>(R * HV * V)) == 0);

  // Refused inside the replay's promoted domain: a conv pool with one slot too few.
  const dl_tensor dacc(accepted.data(), dl_i32, {B}), dwin(win.data(), dl_bf16, {B, T, D, 3}), dconv_small(conv.data(), dl_bf16, {S - 1, D, 3});
  CHECK(netra_gdn_replay(h, dq.get(), dk.get(), dy.get(), dd.get(), db.get(), ds.get(), dslots.get(), dacc.get(), dwin.get(), dconv_small.get(), nullptr) ==
        NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()).find("conv_state") != std::string::npos);
  const auto after = state.download();
  CHECK(mismatches(after, pool, pool.size()) == 0);
  CHECK(mismatches(conv.download(), std::vector<std::uint16_t>(static_cast<std::size_t>(S * D * 3), 0x1111), static_cast<std::size_t>(S * D * 3)) == 0);
  CHECK(netra_gdn_verify(nullptr, dq.get(), dk.get(), dy.get(), dd.get(), db.get(), ds.get(), dslots.get(), dout.get(), nullptr) ==
        NETRA_STATUS_INVALID_ARGUMENT);
  netra_gdn_destroy(h);
}
