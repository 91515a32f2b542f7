// The decode step's instances on the host (contracts/gdn/decode.hpp, gqa8_decode_wide.hpp):
// - admission: the GDN T = 1 conv / precompute / core admit every batch 1..128 and refuse 129 and
//   verify-shaped calls; the verify instances refuse decode-shaped calls;
// - dispatch: for every B in 1..128 the gdn conv, precompute and m16 lists (tactics/gdn.hpp) and
//   the GQA8 list serve a decode call on each target, by the instance the test names (the sm90a
//   core from B 65: the measured half-head map, with a 4-byte aligned output; below, the default);
// - the grids of the T = 1 kernels cover every (request, head, column) / (request, channel) once;
// - the protocol the GPU test checks, on the oracle: n decode steps of one token, each from the
//   slot's stored state, equal the n-token recurrence and conv (FP32 state: bit for bit; BF16
//   storage rounds once per step, which the decode contract states).
#include <doctest/doctest.h>

#include <boost/hana.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "netra/kernels/attention/gqa8.hpp"
#include "netra/kernels/gdn/conv.hpp"
#include "netra/kernels/gdn/precompute.hpp"
#include "netra/kernels/gdn/recurrent.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/tactics/attention.hpp"
#include "netra/runtime/tactics/gdn.hpp"
#include "oracles/gdn.hpp"
#include "runtime/signature_tensor.hpp"

using namespace netra;
namespace ref = netra::oracles::gdn_ref;

using netra::testing::cuda0;
using netra::testing::signature_tensor;

namespace {
constexpr i64 D = 8192, slots = 130;


gdn_conv_signature conv_call(target_id target, i64 B, i64 T) {
  return {target, cuda0, signature_tensor(dtype::bf16, {B * T, D}), signature_tensor(dtype::bf16, {D, 4}), signature_tensor(dtype::bf16, {B * T, D}), signature_tensor(dtype::i32, {B}),
          signature_tensor(dtype::bf16, {slots, D, 3}), tensor_arg{}};
}
gdn_precompute_signature precompute_call(target_id target, i64 R) {
  return {target, cuda0, signature_tensor(dtype::bf16, {R, D}), signature_tensor(dtype::bf16, {R, 32}), signature_tensor(dtype::bf16, {R, 32}), signature_tensor(dtype::f32, {32}), signature_tensor(dtype::f32, {32}),
          signature_tensor(dtype::f32, {R, 16, 128}), signature_tensor(dtype::f32, {R, 16, 128}), signature_tensor(dtype::f32, {R, 32}), signature_tensor(dtype::f32, {R, 32})};
}
gdn_recurrent_signature core_call(target_id target, i64 B, i64 T, dtype state) {
  const i64 R = B * T;
  return {target, cuda0, signature_tensor(dtype::f32, {R, 16, 128}), signature_tensor(dtype::f32, {R, 16, 128}), signature_tensor(dtype::bf16, {R, D}), signature_tensor(dtype::f32, {R, 32}),
          signature_tensor(dtype::f32, {R, 32}), signature_tensor(state, {slots, 32, 128, 128}), signature_tensor(dtype::i32, {B}), signature_tensor(dtype::bf16, {R, 32, 128}), tensor_arg{}, tensor_arg{},
          tensor_arg{}};
}

/// The instance name of the first tactic in `list` whose list condition and contract admit `s` ("" when none).
template <class List, class Sig> std::string first_admitting(const List& list, const Sig& s) {
  std::string name;
  boost::hana::for_each(list, [&](auto tactic) {
    using T = typename decltype(tactic)::type;
    using C = netra::contract_of<T>;
    if (name.empty() && tactic_traits<T>::condition(s).admitted() && C::admits(s).admitted()) name = instance_name<C>();
  });
  return name;
}

template <class Target> void check_gdn_dispatch() {
  using conv = contracts::gdn_decode_conv<Target, gdn::conv_layout::channel_major>;
  using pre = contracts::gdn_decode_precompute<Target>;
  using core32 = contracts::gdn_decode_core<Target, gdn::state_storage::fp32>;
  using core16 = contracts::gdn_decode_core<Target, gdn::state_storage::bf16>;
  std::size_t bad = 0;
  for (i64 B = 1; B <= 128; ++B) {
    bad += first_admitting(tactics::gdn_conv, conv_call(Target::id, B, 1)) != instance_name<conv>();
    auto tap = conv_call(Target::id, B, 1);
    tap.state = signature_tensor(dtype::bf16, {slots, 3, D});
    bad += first_admitting(tactics::gdn_conv, tap) != instance_name<contracts::gdn_decode_conv<Target, gdn::conv_layout::tap_major>>();
    // Precompute is row-local: the verify instance (T 12) may take B a multiple of 12 and the M16
    // one B = 16 (the same bits: Tokens only shapes its admission).
    const std::string p = first_admitting(tactics::gdn_precompute, precompute_call(Target::id, B));
    bad += p != instance_name<pre>() && !(B % 12 == 0 && p == instance_name<contracts::gdn_precompute<Target, 128, 12>>()) &&
           !(B == 16 && p == instance_name<contracts::gdn_precompute<Target, 1, 16>>());
    // The default map at every B (sm90a: its state through LDS, faster than every candidate).
    bad += first_admitting(tactics::gdn_m16, core_call(Target::id, B, 1, dtype::f32)) != instance_name<core32>();
    bad += first_admitting(tactics::gdn_m16, core_call(Target::id, B, 1, dtype::bf16)) != instance_name<core16>();
    bad += !first_admitting(tactics::gdn_verify, core_call(Target::id, B, 1, dtype::f32)).empty();  // K0 is T 12 only
  }
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE("gdn decode instances admit B 1..128 of one token and refuse B 129 and verify shapes; the verify instances refuse decode") {
  using conv = contracts::gdn_decode_conv<sm90a, gdn::conv_layout::channel_major>;
  using pre = contracts::gdn_decode_precompute<sm90a>;
  using core = contracts::gdn_decode_core<sm90a, gdn::state_storage::bf16>;
  using candidate = contracts::gdn_decode_core<sm90a, gdn::state_storage::fp32, 16, 1, 8, 2>;  // a mapping candidate: the same admission
  for (i64 B : {1, 2, 63, 64, 65, 80, 127, 128}) {
    CHECK(candidate::admits(core_call(target_id::sm90a, B, 1, dtype::f32)).admitted());
    CHECK(conv::admits(conv_call(target_id::sm90a, B, 1)).admitted());
    CHECK(pre::admits(precompute_call(target_id::sm90a, B)).admitted());
    CHECK(core::admits(core_call(target_id::sm90a, B, 1, dtype::bf16)).admitted());
    CHECK_FALSE(core::admits(core_call(target_id::sm90a, B, 1, dtype::f32)).admitted());  // storage is the contract's
  }
  CHECK(std::string(conv::admits(conv_call(target_id::sm90a, 129, 1)).field) == "batch");
  CHECK(std::string(pre::admits(precompute_call(target_id::sm90a, 129)).field) == "rows");
  CHECK(std::string(core::admits(core_call(target_id::sm90a, 129, 1, dtype::bf16)).field) == "batch");
  CHECK(std::string(candidate::admits(core_call(target_id::sm90a, 129, 1, dtype::f32)).field) == "batch");
  CHECK(std::string(candidate::admits(core_call(target_id::sm90a, 4, 12, dtype::f32)).field) == "q");
  CHECK(std::string(conv::admits(conv_call(target_id::sm90a, 4, 12)).field) == "x");  // 48 rows for 4 slots: a verify call
  CHECK(std::string(core::admits(core_call(target_id::sm90a, 4, 12, dtype::bf16)).field) == "q");
  using verify_conv = contracts::gdn_conv<sm90a, 64, 12, gdn::conv_layout::channel_major, gdn::conv_writes::final_state>;
  CHECK_FALSE(verify_conv::admits(conv_call(target_id::sm90a, 4, 1)).admitted());
  CHECK_FALSE(contracts::gdn_m16<sm90a, gdn::state_storage::bf16>::admits(core_call(target_id::sm90a, 1, 1, dtype::bf16)).admitted());
  CHECK_FALSE(conv::admits(conv_call(target_id::gfx950, 4, 1)).admitted());
}

TEST_CASE("every decode batch 1..128 dispatches to the T = 1 instances (conv both layouts, precompute, core FP32 and BF16 (sm90a B >= 65: the measured map); sm90a and gfx950)") {
  check_gdn_dispatch<sm90a>();
  check_gdn_dispatch<gfx950>();
}

TEST_CASE_TEMPLATE("the T = 1 core's grid covers every (request, v head, value column) once", C, contracts::gdn_decode_core<sm90a, gdn::state_storage::fp32>,
                   contracts::gdn_decode_core<gfx950, gdn::state_storage::bf16>, contracts::gdn_decode_core<sm90a, gdn::state_storage::fp32, 16, 1, 4, 2>,
                   contracts::gdn_decode_core<sm90a, gdn::state_storage::bf16, 16, 1, 8, 2>) {
  using core = kernels::gdn_recurrent_core<C>;
  const launch_shape s = core::shape(128);
  CHECK(s.grid[1] == gdn::heads_v);
  CHECK(s.grid[2] == 128);
  std::vector<int> seen(gdn::value_dim, 0);
  for (u32 x = 0; x < s.grid[0]; ++x)
    for (u32 w = 0; w < core::waves; ++w)
      for (u32 lane = 0; lane < core::column_lanes; ++lane)
        for (u32 c = 0; c < core::cpl; ++c) ++seen[core::column(x, w, lane, c)];
  std::size_t bad = 0;
  for (int n : seen) bad += n != 1;
  CHECK(bad == 0);
  CHECK(core::tokens == 1);
}

TEST_CASE("the T = 1 conv's grid covers every (request, channel) once") {
  using conv = kernels::gdn_conv_update<contracts::gdn_decode_conv<sm90a, gdn::conv_layout::tap_major>>;
  const launch_shape s = conv::shape(128);
  CHECK(s.grid[1] == 128);
  CHECK(s.grid[2] == 1);
  std::vector<int> seen(gdn::channels, 0);
  for (u32 x = 0; x < s.grid[0]; ++x)
    for (u32 th = 0; th < conv::workgroup_size; ++th)
      for (u32 c = 0; c < kernels::gdn_conv_map::channels_per_thread; ++c) ++seen[conv::first_channel(x, th) + c];
  std::size_t bad = 0;
  for (int n : seen) bad += n != 1;
  CHECK(bad == 0);
}

TEST_CASE("the protocol on the oracle: n one-token decode steps equal the n-token recurrence (FP32 bitwise) and conv; BF16 rounds per step") {
  constexpr std::size_t n = 7, hv = 5;
  std::mt19937 g(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> q(n * ref::H * ref::K), k(q.size()), decay(n * ref::HV), beta(n * ref::HV), S0(ref::V * ref::K);
  std::vector<std::uint16_t> v(n * ref::D), x(n * ref::D), w(ref::D * 4), slot(ref::conv_slot);
  for (auto& e : q) e = u(g) * 0.09f;
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = (i / ref::K) % 7 == 2 ? 0.0f : u(g) * 0.09f;  // zero heads: the eps path
  for (std::size_t i = 0; i < decay.size(); ++i) decay[i] = i % 9 == 0 ? 0.0f : i % 9 == 1 ? 1.0f : 0.5f + 0.5f * std::abs(u(g));
  for (std::size_t i = 0; i < beta.size(); ++i) beta[i] = i % 7 == 0 ? 0.0f : i % 7 == 1 ? 1.0f : std::abs(u(g));
  for (auto& e : S0) e = u(g) * 0.3f;
  for (auto* a : {&v, &x, &w, &slot})
    for (auto& e : *a) e = ref::to_bf(u(g) * 1.5f);
  // Recurrence: n tokens at once (request 0, T = n) against n decode steps (request r = t of a T = 1 batch).
  const ref::token_inputs in{q.data(), k.data(), v.data(), ref::D, decay.data(), beta.data()};
  std::vector<float> whole = S0, steps = S0;
  std::vector<std::uint16_t> out_whole(n * ref::HV * ref::V), out_steps(out_whole.size());
  ref::run_head(whole.data(), in, 0, n, hv, n, out_whole.data());
  std::vector<std::uint16_t> stored(ref::V * ref::K);  // a BF16 pool slot, rounded after every decode step
  ref::narrow(S0, gdn::state_storage::bf16, stored.data());
  std::vector<float> bf_whole = ref::widen(stored.data(), gdn::state_storage::bf16, stored.size());
  ref::run_head(bf_whole.data(), in, 0, n, hv, n, nullptr);
  std::size_t bf_differs = 0;
  for (std::size_t t = 0; t < n; ++t) {
    ref::run_head(steps.data(), in, t, 1, hv, 1, out_steps.data());
    std::vector<float> s = ref::widen(stored.data(), gdn::state_storage::bf16, stored.size());
    ref::run_head(s.data(), in, t, 1, hv, 1, nullptr);
    ref::narrow(s, gdn::state_storage::bf16, stored.data());
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < whole.size(); ++i) bad += std::memcmp(&whole[i], &steps[i], 4) != 0;
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t j = 0; j < ref::V; ++j) bad += out_whole[(r * ref::HV + hv) * ref::V + j] != out_steps[(r * ref::HV + hv) * ref::V + j];
  CHECK(bad == 0);
  std::vector<std::uint16_t> once(ref::V * ref::K);
  ref::narrow(bf_whole, gdn::state_storage::bf16, once.data());
  for (std::size_t i = 0; i < once.size(); ++i) bf_differs += once[i] != stored[i];
  MESSAGE("BF16 storage: ", bf_differs, " of ", once.size(), " state values differ between per-step and one final rounding");
  CHECK(bf_differs > 0);  // the storage boundary is per step: a decode step is not a slice of a verify block
  // Conv: n tokens at once against n one-token updates, each from the previous update's state.
  std::vector<std::uint16_t> y_whole(n * ref::D), y_steps(n * ref::D), final_whole(ref::conv_slot), cur = slot, next(ref::conv_slot);
  ref::conv_request(x.data(), ref::D, w.data(), slot.data(), gdn::conv_layout::channel_major, 0, n, y_whole.data(), nullptr, final_whole.data());
  for (std::size_t t = 0; t < n; ++t) {
    ref::conv_request(x.data(), ref::D, w.data(), cur.data(), gdn::conv_layout::channel_major, t, 1, y_steps.data(), nullptr, next.data());
    cur = next;
  }
  CHECK(y_whole == y_steps);
  CHECK(final_whole == cur);
}

TEST_CASE("GQA8 decode: the served instance keeps B 1..63, the 8-wave mapping B 64, the widened one B 65..128 (the same workspace); B 129 is refused") {
  using served = contracts::attention_gqa8_decode<sm90a>;
  using wide = contracts::attention_gqa8_decode_wide<sm90a>;
  CHECK(wide::max_batch == 128);
  CHECK(wide::workspace_bytes == served::workspace_bytes);
  CHECK(instance_name<wide>() != instance_name<served>());
  for (u32 processors : {1u, 78u, 132u, 256u, 304u})
    for (u32 B = 1; B <= 128; ++B) {
      const u32 s = wide::slices_for(B, processors);
      CHECK(s >= 1);
      CHECK((s == 1 || B * s <= wide::split_capacity));  // the served instance's workspace holds every split
    }
  auto names = [](i64 B) {
    std::string chosen;
    boost::hana::for_each(tactics::attention_gqa8, [&](auto tactic) {
      using T = typename decltype(tactic)::type;
      using C = contract_of<T>;
      attention_signature s;
      s.target = target_id::sm90a, s.device = cuda0, s.phase = attention_phase::decode, s.tq = 1, s.page_size = 1;
      s.q = signature_tensor(dtype::bf16, {B, 16, 256});
      s.k_buffer = signature_tensor(dtype::e4m3, {4096, 2, 256});
      s.qo_indptr = signature_tensor(dtype::i64, {B + 1});
      if (chosen.empty() && tactic_traits<T>::in_promoted_domain(s)) chosen = instance_name<C>();
    });
    return chosen;
  };
  // B 1: BlockSplit 4 (tactics::attention_gqa8_block_split_max_batch); B 64: the 8-wave mapping
  // (tactics::attention_gqa8_eight_wave_min_batch); each handle its own workspace.
  for (i64 B = 1; B <= 128; ++B)
    CHECK(names(B) == (B == 1    ? instance_name<tactics::attention_gqa8_block_split_decode>()
                       : B < 64  ? instance_name<served>()
                       : B == 64 ? instance_name<tactics::attention_gqa8_eight_wave_decode>()
                                 : instance_name<wide>()));
  CHECK(names(129).empty());
}
