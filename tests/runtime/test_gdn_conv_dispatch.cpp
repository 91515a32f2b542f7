// The conv update's batch-ranged dispatch on the host (tactics::gdn_conv, sm90a): which instance a
// T = 12 call gets at B 1..64, windows and final state, channel-major and tap-major, and that the
// decision text of a call outside a range names that range's rule; bad inputs are still refused.
#include <doctest/doctest.h>

#include <string>

#include "netra/runtime/dispatch.hpp"
#include "netra/runtime/tactics/gdn.hpp"
#include "runtime/signature_tensor.hpp"

using namespace netra;

using netra::testing::cuda0;
using netra::testing::signature_tensor;

namespace {
constexpr i64 D = 8192, T = 12;
gdn_conv_signature conv_call(i64 B, bool windows, bool tap_major = false) {
  return {target_id::sm90a,
          cuda0,
          signature_tensor(dtype::bf16, {B * T, D}),
          signature_tensor(dtype::bf16, {D, 4}),
          signature_tensor(dtype::bf16, {B * T, D}),
          signature_tensor(dtype::i32, {B}),
          tap_major ? signature_tensor(dtype::bf16, {130, 3, D}) : signature_tensor(dtype::bf16, {130, D, 3}),
          windows ? (tap_major ? signature_tensor(dtype::bf16, {B, T, 3, D}) : signature_tensor(dtype::bf16, {B, T, D, 3})) : tensor_arg{}};
}
std::string chosen(const gdn_conv_signature& s) {
  const int i = select_tactic(tactics::gdn_conv, s);
  std::string name;
  for_each_tactic(tactics::gdn_conv, [&](auto tactic, auto index) {
    if (static_cast<int>(decltype(index)::value) == i) name = instance_name<contract_of<typename decltype(tactic)::type>>();
  });
  return name;
}
template <class W> std::string name_of() { return instance_name<contract_of<W>>(); }
}  // namespace

TEST_CASE("gdn conv: the batch ranges choose G 6, G 3 or G 2 (windows and final state)") {
  namespace cw = gdn::conv_writes;
  const std::string g3w = instance_name<tactics::measured::conv<cw::windows>>(), g3f = instance_name<tactics::measured::conv<cw::final_state>>();
  const std::string g6w = name_of<tactics::gdn_conv_windows_g6>(), g6f = name_of<tactics::gdn_conv_final_g6>(), g2f = name_of<tactics::gdn_conv_final_g2>();
  CHECK(g6w == "gdn-conv-sm90a-64-12-0-1-2-256-6-4-4-1-1-1");
  CHECK(g6f == "gdn-conv-sm90a-64-12-0-0-2-256-6-4-4-1-0-1");
  CHECK(g2f == "gdn-conv-sm90a-64-12-0-0-2-256-2-4-4-1-0-1");
  CHECK(g3w == "gdn-conv-sm90a-64-12-0-1-2-256-3-4-4-1-1-1");
  CHECK(g3f == "gdn-conv-sm90a-64-12-0-0-2-256-3-4-4-1-0-1");
  // The measured batches and each range's edges.
  for (i64 B : {1, 2, 4, 8, 9, 16, 17, 32, 33, 64}) {
    INFO("B ", B);
    CHECK(chosen(conv_call(B, true)) == (B <= tactics::gdn_conv_windows_g6_max_batch ? g6w : g3w));
    CHECK(chosen(conv_call(B, false)) == (B <= tactics::gdn_conv_final_g6_max_batch ? g6f : B >= tactics::gdn_conv_final_g2_min_batch ? g2f : g3f));
    // tap-major with windows: its one measured map at every B.
    CHECK(chosen(conv_call(B, true, true)) == instance_name<tactics::measured::conv<cw::windows, gdn::conv_layout::tap_major>>());
  }
  // Every B in 1..64 gets one of the three per writes, by its range.
  for (i64 B = 1; B <= 64; ++B) {
    CHECK(chosen(conv_call(B, true)) == (B <= 8 ? g6w : g3w));
    CHECK(chosen(conv_call(B, false)) == (B <= 16 ? g6f : B >= 33 ? g2f : g3f));
  }
}

TEST_CASE("gdn conv: the decision text names the batch rule of each range a call is outside") {
  const std::string w9 = explain(tactics::gdn_conv, conv_call(9, true)).text();
  CHECK(w9.find("tactics::gdn_conv_windows_g6_max_batch") != std::string::npos);
  const std::string f32 = explain(tactics::gdn_conv, conv_call(32, false)).text();
  CHECK(f32.find("tactics::gdn_conv_final_g6_max_batch") != std::string::npos);
  CHECK(f32.find("tactics::gdn_conv_final_g2_min_batch") != std::string::npos);
  const std::string f1 = explain(tactics::gdn_conv, conv_call(1, false)).text();
  CHECK(f1.find("tactics::gdn_conv_final_g2_min_batch") != std::string::npos);
  INFO(f32);
  CHECK(from_batch_range<tactics::gdn_conv_final_g2_batches>::decide(conv_call(32, false)).field == std::string("batch"));
}

TEST_CASE("gdn conv: bad inputs are still refused under the batch ranges") {
  // B 65: past every range and every contract's MaxBatch: no tactic admits it (the caller's fallback).
  CHECK(select_tactic(tactics::gdn_conv, conv_call(65, true)) == fallback);
  CHECK(select_tactic(tactics::gdn_conv, conv_call(65, false)) == fallback);
  // Inside G 6's range, a wrong tensor is refused by its contract and by every later one.
  auto bad = conv_call(4, true);
  bad.x.type = dtype::f32;
  CHECK(select_tactic(tactics::gdn_conv, bad) == fallback);
  auto short_y = conv_call(40, false);
  short_y.y = signature_tensor(dtype::bf16, {40 * T - 1, D});
  CHECK(select_tactic(tactics::gdn_conv, short_y) == fallback);
  auto no_sentinel = conv_call(2, false);
  no_sentinel.state = signature_tensor(dtype::bf16, {1, D, 3});
  CHECK(select_tactic(tactics::gdn_conv, no_sentinel) == fallback);
}
