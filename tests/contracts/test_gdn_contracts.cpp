// The gdn contracts' admits() on the host: a valid call of each is admitted, and each refusal
// names its field — wrong element type, a too-small output / window / state tensor, a pool
// without its sentinel, the other conv layout, a misaligned or missing tensor, another device,
// a batch past MaxBatch, a misaligned row stride.
#include <doctest/doctest.h>

#include <string>

#include "netra/contracts/gdn/conv.hpp"
#include "netra/contracts/gdn/precompute.hpp"
#include "netra/contracts/gdn/recurrent.hpp"
#include "netra/runtime/instance.hpp"
#include "runtime/signature_tensor.hpp"

using namespace netra;

using netra::testing::cuda0;
using netra::testing::signature_tensor;

namespace {
void refused(const decision& d, const char* field) {
  CHECK_FALSE(d.admitted());
  if (!d.admitted()) CHECK(std::string(d.field) == field);
}
constexpr i64 D = 8192, T = 12, B = 4;
}  // namespace

TEST_CASE("gdn_conv admits its call and refuses each wrong tensor") {
  using C = contracts::gdn_conv<sm90a, 64, 12, gdn::conv_layout::channel_major, gdn::conv_writes::windows>;
  gdn_conv_signature s{target_id::sm90a, cuda0, signature_tensor(dtype::bf16, {B * T, D}), signature_tensor(dtype::bf16, {D, 4}), signature_tensor(dtype::bf16, {B * T, D}),
                       signature_tensor(dtype::i32, {B}), signature_tensor(dtype::bf16, {9, D, 3}), signature_tensor(dtype::bf16, {B, T, D, 3})};
  CHECK(C::admits(s).admitted());
  auto with = [&](auto f) { auto c = s; f(c); return C::admits(c); };
  refused(with([](auto& c) { c.target = target_id::gfx950; }), "target");
  refused(with([](auto& c) { c.x.type = dtype::f32; }), "x");
  refused(with([](auto& c) { c.y = signature_tensor(dtype::bf16, {B * T - 1, D}); }), "y");
  refused(with([](auto& c) { c.windows = signature_tensor(dtype::bf16, {B, T, 3, D}); }), "windows");   // the other layout
  refused(with([](auto& c) { c.windows = signature_tensor(dtype::bf16, {B, T - 1, D, 3}); }), "windows");
  refused(with([](auto& c) { c.windows = tensor_arg{}; }), "windows");
  refused(with([](auto& c) { c.state = signature_tensor(dtype::bf16, {1, D, 3}); }), "state slots");  // no sentinel
  refused(with([](auto& c) { c.state = signature_tensor(dtype::bf16, {9, 3, D}); }), "state");
  refused(with([](auto& c) { c.state = signature_tensor(dtype::bf16, {9, D, 3}, 2); }), "state");  // misaligned
  refused(with([](auto& c) { c.slots = signature_tensor(dtype::i64, {B}); }), "slots");
  refused(with([](auto& c) { c.slots = signature_tensor(dtype::i32, {65}); c.x = signature_tensor(dtype::bf16, {65 * T, D}); }), "batch");
  refused(with([](auto& c) { c.weight = signature_tensor(dtype::bf16, {D, 4}, 0, device_ref{1, 0}); }), "weight");  // a host tensor
  refused(with([](auto& c) { c.x.strides[0] = D + 4; }), "x row stride");
  using F = contracts::gdn_conv<sm90a, 64, 12, gdn::conv_layout::tap_major, gdn::conv_writes::final_state>;
  auto f = s;
  f.state = signature_tensor(dtype::bf16, {9, 3, D});
  f.windows = tensor_arg{};
  CHECK(F::admits(f).admitted());
}

TEST_CASE("gdn_precompute admits its call and refuses each wrong tensor") {
  using C = contracts::gdn_precompute<sm90a, 128, 12>;
  const i64 R = B * T;
  gdn_precompute_signature s{target_id::sm90a, cuda0, signature_tensor(dtype::bf16, {R, D}), signature_tensor(dtype::bf16, {R, 32}), signature_tensor(dtype::bf16, {R, 32}),
                             signature_tensor(dtype::f32, {32}), signature_tensor(dtype::f32, {32}), signature_tensor(dtype::f32, {R, 16, 128}), signature_tensor(dtype::f32, {R, 16, 128}),
                             signature_tensor(dtype::f32, {R, 32}), signature_tensor(dtype::f32, {R, 32})};
  CHECK(C::admits(s).admitted());
  auto with = [&](auto f) { auto c = s; f(c); return C::admits(c); };
  refused(with([](auto& c) { c.y = signature_tensor(dtype::bf16, {R + 1, D}); }), "rows");
  refused(with([](auto& c) { c.q = signature_tensor(dtype::f32, {R - 1, 16, 128}); }), "q");
  refused(with([](auto& c) { c.k.type = dtype::bf16; }), "k");
  refused(with([](auto& c) { c.beta = tensor_arg{}; }), "beta");
  refused(with([](auto& c) { c.a_log = signature_tensor(dtype::f32, {16}); }), "A_log");
  // a, b: column views of a wider product are admitted (any row stride >= 32, last stride 1)
  auto view = [](i64 row_stride) { auto v = signature_tensor(dtype::bf16, {R, 32}, 2); v.strides[0] = row_stride; return v; };
  CHECK(with([&](auto& c) { c.a = view(12352); c.b = view(67); }).admitted());
  CHECK(with([&](auto& c) { c.a = view(32); c.b = view(32); }).admitted());
  refused(with([&](auto& c) { c.a = view(31); }), "a row stride");  // overlapping rows
  refused(with([&](auto& c) { c.b = view(-64); }), "b row stride");
  refused(with([&](auto& c) { c.b = view(64); c.b.strides[1] = 2; }), "b");  // columns not contiguous
  refused(with([&](auto& c) { c.a = view(64); c.a.data = netra::testing::signature_arena + 1; }), "a");  // a BF16 element misaligned
}

TEST_CASE("gdn_recurrent admits K0, M16 and replay calls and refuses each wrong tensor") {
  using K0 = contracts::gdn_k0<sm90a, gdn::state_storage::bf16>;
  using R = contracts::gdn_replay<sm90a, gdn::state_storage::bf16>;
  const i64 rows = B * T;
  gdn_recurrent_signature s{target_id::sm90a, cuda0, signature_tensor(dtype::f32, {rows, 16, 128}), signature_tensor(dtype::f32, {rows, 16, 128}), signature_tensor(dtype::bf16, {rows, D}),
                            signature_tensor(dtype::f32, {rows, 32}), signature_tensor(dtype::f32, {rows, 32}), signature_tensor(dtype::bf16, {9, 32, 128, 128}), signature_tensor(dtype::i32, {B}),
                            signature_tensor(dtype::bf16, {rows, 32, 128}), tensor_arg{}, tensor_arg{}, tensor_arg{}};
  CHECK(K0::admits(s).admitted());
  auto with = [&](auto f) { auto c = s; f(c); return K0::admits(c); };
  refused(with([](auto& c) { c.state.type = dtype::f32; }), "state");  // FP32 pool for a BF16-storage contract
  refused(with([](auto& c) { c.state = signature_tensor(dtype::bf16, {1, 32, 128, 128}); }), "state slots");
  refused(with([](auto& c) { c.out = signature_tensor(dtype::bf16, {rows - 1, 32, 128}); }), "out");  // too small
  refused(with([](auto& c) { c.out = tensor_arg{}; }), "out");
  refused(with([](auto& c) { c.slots = signature_tensor(dtype::i32, {65}); }), "batch");  // K0: B <= 64
  auto r = s;
  r.out = tensor_arg{};
  r.accepted = signature_tensor(dtype::i32, {B});
  r.conv_windows = signature_tensor(dtype::bf16, {B, T, D, 3});
  r.conv_state = signature_tensor(dtype::bf16, {9, D, 3});
  CHECK(R::admits(r).admitted());
  auto rwith = [&](auto f) { auto c = r; f(c); return R::admits(c); };
  refused(rwith([](auto& c) { c.accepted = signature_tensor(dtype::i32, {B - 1}); }), "accepted");
  refused(rwith([](auto& c) { c.conv_windows = signature_tensor(dtype::bf16, {B, T, D, 4}); }), "conv_windows");
  refused(rwith([](auto& c) { c.conv_state = signature_tensor(dtype::bf16, {9, 3, D}); }), "conv_state");  // not the windows' layout
  refused(rwith([](auto& c) { c.conv_state = signature_tensor(dtype::bf16, {8, D, 3}); }), "conv_state");  // not the pool's slots
  auto big = r;
  big.slots = signature_tensor(dtype::i32, {128});
  big.accepted = signature_tensor(dtype::i32, {128});
  big.q = big.k = signature_tensor(dtype::f32, {128 * T, 16, 128});
  big.v = signature_tensor(dtype::bf16, {128 * T, D});
  big.decay = big.beta = signature_tensor(dtype::f32, {128 * T, 32});
  big.conv_windows = signature_tensor(dtype::bf16, {128, T, D, 3});
  CHECK(R::admits(big).admitted());  // replay: every batch up to 128, capacity (9 slots) separate from the batch
}

TEST_CASE("gdn_m16 with Inputs raw admits the precompute's inputs instead of q, k, decay, beta and refuses each wrong one") {
  using Raw = contracts::gdn_m16<sm90a, gdn::state_storage::bf16, 8, gdn::token_staging::block_and_state, 4, 1, 1, gdn::core_inputs::raw>;
  using Pre = contracts::gdn_m16<sm90a, gdn::state_storage::bf16, 8, gdn::token_staging::block_and_state, 4, 1, 1>;
  static_assert(Raw::raw_inputs && !Pre::raw_inputs);
  constexpr i64 rows = 16;
  gdn_recurrent_signature s{target_id::sm90a, cuda0, tensor_arg{}, tensor_arg{}, signature_tensor(dtype::bf16, {rows, D}), tensor_arg{}, tensor_arg{},
                            signature_tensor(dtype::bf16, {3, 32, 128, 128}), signature_tensor(dtype::i32, {1}), signature_tensor(dtype::bf16, {rows, 32, 128}), tensor_arg{}, tensor_arg{}, tensor_arg{},
                            signature_tensor(dtype::bf16, {rows, 32}), signature_tensor(dtype::bf16, {rows, 32}), signature_tensor(dtype::f32, {32}), signature_tensor(dtype::f32, {32})};
  CHECK(Raw::admits(s).admitted());
  refused(Pre::admits(s), "q");  // the precomputed form needs the precompute's outputs
  auto with = [&](auto f) { auto c = s; f(c); return Raw::admits(c); };
  refused(with([](auto& c) { c.a = tensor_arg{}; }), "a");
  refused(with([](auto& c) { c.b = signature_tensor(dtype::bf16, {rows - 1, 32}); }), "b");
  refused(with([](auto& c) { c.a_log = signature_tensor(dtype::bf16, {32}); }), "A_log");
  refused(with([](auto& c) { c.dt_bias = signature_tensor(dtype::f32, {31}); }), "dt_bias");
  refused(with([](auto& c) { c.v = signature_tensor(dtype::bf16, {rows, 4096}); }), "v");  // the whole conv output: q | k | v channels
  refused(with([](auto& c) { c.out = tensor_arg{}; }), "out");
  CHECK(std::string(instance_name<Raw>()) == "gdn-recurrent-sm90a-1-1-16-1-8-3-4-1-0-1-1");
}
