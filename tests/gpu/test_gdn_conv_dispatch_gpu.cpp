// The conv update's batch-ranged dispatch on the GPU (sm90a cubins built by CMake): at every B 1..64,
// with windows and with the final state, channel-major, the tactic tactics::gdn_conv selects for
// the call is launched as selected and its y, windows and pool are bitwise the oracle's; the
// selected instance is the one its batch range names.
#include <doctest/doctest.h>

#include <numeric>
#include <string>
#include <vector>

#include "gpu/test_gdn_common.hpp"
#include "netra/runtime/dispatch.hpp"
#include "netra/runtime/tactics/gdn.hpp"

using namespace netra;
using namespace netra::testing::gdn;
using netra::testing::gpu_array;

namespace {
constexpr std::size_t D = ref::D, T = 12;

/// Launches tactic `index` of tactics::gdn_conv on `s` (the sm90a T 12 instances; "" otherwise).
std::string launch_selected(int index, const gdn_conv_signature& s) {
  std::string name;
  for_each_tactic(tactics::gdn_conv, [&](auto tactic, auto i) {
    using C = contract_of<typename decltype(tactic)::type>;
    if (static_cast<int>(decltype(i)::value) != index) return;
    if constexpr (std::is_same_v<typename C::target, sm90a> && C::tokens == T && C::max_batch == 64) {
      gdn_conv(handle_of<C>(), nullptr, s);
      name = instance_name<C>();
    }
  });
  return name;
}

void dispatched_case(std::size_t B, bool windows, unsigned seed) {
  const std::size_t slots = B + 3, rows = B * T;
  const auto x = bf16_values(rows * D, seed, 2.0f, true), weight = bf16_values(D * 4, seed + 1, 0.7f, false);
  const auto pool = bf16_values(slots * ref::conv_slot, seed + 2, 1.5f, true);
  // Real rows name distinct slots (the contract: two rows of one call on one slot leave which
  // final state lands, and what the other row reads, to scheduling): b -> (stride b + 1) mod
  // (slots - 1) with the stride coprime to slots - 1 (5 is not at B + 2 = 10, 15, ...: rows shared
  // slots at B 8, 13, 18, ...). Padded rows: the sentinel, a negative and a huge index.
  std::size_t stride = 5;
  while (std::gcd(stride, slots - 1) != 1) ++stride;
  std::vector<std::int32_t> slot(B);
  for (std::size_t b = 0; b < B; ++b) slot[b] = static_cast<std::int32_t>((b * stride + 1) % (slots - 1));
  if (B >= 3) slot[1] = static_cast<std::int32_t>(slots - 1), slot[2] = -7;  // padded rows
  if (B >= 5) slot[4] = 1 << 30;                                             // padded row: reads as u32 past the pool
  {
    std::vector<bool> named(slots, false);
    for (const std::int32_t v : slot)
      if (ref::real_slot(v, static_cast<std::int64_t>(slots))) {
        REQUIRE(!named[static_cast<std::size_t>(v)]);
        named[static_cast<std::size_t>(v)] = true;
      }
  }
  gpu_array<std::uint16_t> dx(x.size()), dw(weight.size()), dy(rows * D), dpool(pool.size()), dwin(rows * ref::conv_slot);
  gpu_array<std::int32_t> dslot(B);
  dx.upload(x), dw.upload(weight), dpool.upload(pool), dslot.upload(slot);
  dy.fill_bytes(0xAB), dwin.fill_bytes(0xCD);
  const auto s = gdn_conv_call(device(), tensor(dx, dtype::bf16, {i64(rows), i64(D)}), tensor(dw, dtype::bf16, {i64(D), 4}),
                               tensor(dy, dtype::bf16, {i64(rows), i64(D)}), tensor(dslot, dtype::i32, {i64(B)}),
                               tensor(dpool, dtype::bf16, {i64(slots), i64(D), 3}),
                               windows ? tensor(dwin, dtype::bf16, {i64(B), i64(T), i64(D), 3}) : tensor_arg{});
  const std::string name = launch_selected(select_tactic(tactics::gdn_conv, s), s);
  namespace cw = gdn::conv_writes;
  const std::string want = windows ? (B <= 8 ? instance_name<contract_of<tactics::gdn_conv_windows_g6>>() : instance_name<tactics::measured::conv<cw::windows>>())
                                   : (B <= 16 ? instance_name<contract_of<tactics::gdn_conv_final_g6>>()
                                      : B >= 33 ? instance_name<contract_of<tactics::gdn_conv_final_g2>>()
                                                : instance_name<tactics::measured::conv<cw::final_state>>());
  const std::string form = windows ? "windows" : "final state";  // a std::string: doctest prints a bare const char* as its address
  INFO("B ", B, " ", form, " ", name);
  CHECK(name == want);
  std::vector<std::uint16_t> y(rows * D), win(rows * ref::conv_slot, 0xCDCD), expect_pool = pool;
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t at = ref::resolve_slot(slot[b], static_cast<std::int64_t>(slots));
    std::vector<std::uint16_t> final_image(ref::conv_slot);
    ref::conv_request(x.data(), D, weight.data(), pool.data() + at * ref::conv_slot, gdn::conv_layout::channel_major, b, T, y.data(),
                      windows ? win.data() : nullptr, final_image.data());
    if (!windows && ref::real_slot(slot[b], static_cast<std::int64_t>(slots)))
      std::copy(final_image.begin(), final_image.end(), expect_pool.begin() + static_cast<std::ptrdiff_t>(at * ref::conv_slot));
  }
  CHECK(mismatches(dy.download(), y, y.size()) == 0);
  CHECK(mismatches(dpool.download(), expect_pool, pool.size()) == 0);
  if (windows) CHECK(mismatches(dwin.download(), win, win.size()) == 0);
}
}  // namespace

TEST_CASE("conv update through the batch-ranged dispatch equals the oracle at every B 1..64 (windows, final state)") {
  for (std::size_t B = 1; B <= 64; ++B)
    for (const bool windows : {true, false}) dispatched_case(B, windows, static_cast<unsigned>(100 + B));
}
