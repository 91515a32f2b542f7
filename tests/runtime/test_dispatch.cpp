// Bounded dispatch: over many random signatures select_tactic never crashes and always equals a
// brute-force rule written here from the contracts' documented fields (first admitting tactic;
// a strict tactic refusing a call inside its promoted domain is an error; else fallback);
// explain() lists every tactic with its first refusing field; select_tactic allocates nothing.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "netra/runtime/dispatch.hpp"
#include "netra/runtime/ops/argmax.hpp"
#include "netra/runtime/ops/moe_experts.hpp"
#include "netra/runtime/tactics/moe_experts.hpp"
#include "netra/runtime/tactics/sampling.hpp"

using namespace netra;
namespace hana = boost::hana;

// Counts heap allocations of this test binary (select_tactic must make none).
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

/// Overlapping tactics on two targets: strict and plain, a 32768 vocabulary for up to 8 rows
/// before one for up to 64 rows (so order decides rows 1..8), and one strict tactic listed after
/// a plain one that covers part of its domain.
template <class C> using rows_domain = tactics::argmax_rows_domain<C>;
using ref_sm90a = contracts::argmax<sm90a, 248320, 128, 128>;
using small_sm90a = contracts::argmax<sm90a, 32768, 16, 8>;
using wide_sm90a = contracts::argmax<sm90a, 32768, 16, 64>;
using ref_gfx950 = contracts::argmax<gfx950, 248320, 128, 128>;
using small_gfx950 = contracts::argmax<gfx950, 32768, 16, 8>;
using wide_gfx950 = contracts::argmax<gfx950, 32768, 16, 64, 2>;
constexpr auto test_tactics = hana::tuple_t<strict<ref_sm90a, rows_domain<ref_sm90a>>, small_sm90a, wide_sm90a, ref_gfx950, small_gfx950,
                                            strict<wide_gfx950, rows_domain<wide_gfx950>>>;

struct tactic_facts {
  target_id target;
  std::int64_t n, max_rows;
  std::uint64_t workspace_bytes;
  bool strict;
};
template <class C> tactic_facts facts(bool strict) { return {C::target::id, C::n, C::max_rows, C::workspace_bytes, strict}; }
const tactic_facts brute_tactics[] = {facts<ref_sm90a>(true),   facts<small_sm90a>(false), facts<wide_sm90a>(false),
                                      facts<ref_gfx950>(false), facts<small_gfx950>(false), facts<wide_gfx950>(true)};

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

/// The first field of contracts::argmax's documented order that refuses `s`, or "" if none.
std::string brute_first_refusal(const tactic_facts& t, const argmax_signature& s) {
  if (s.target != t.target) return "target";
  // An empty tensor's address is not checked (it is never read): 0 rows reach the rows rule.
  const bool bad_address = s.logits.data == nullptr || address(s.logits.data) % 16 != 0;
  if (s.logits.type != dtype::f32 || s.cols() != t.n || (bad_address && s.rows() != 0)) return "logits";
  if (s.rows() < 1 || s.rows() > t.max_rows) return "rows";
  if (s.row_stride() < t.n || s.row_stride() % 4 != 0) return "row_stride";
  if (s.out.type != dtype::i64 || s.out.data == nullptr || address(s.out.data) % 8 != 0) return "out";
  if (s.workspace == nullptr || address(s.workspace) % 16 != 0) return "workspace";
  if (s.workspace_bytes < t.workspace_bytes) return "workspace_bytes";
  return "";
}

bool brute_in_domain(const tactic_facts& t, const argmax_signature& s) {
  return t.strict && s.target == t.target && s.logits.type == dtype::f32 && s.cols() == t.n && s.rows() >= 1 && s.rows() <= t.max_rows;
}

struct outcome {
  int tactic = fallback;
  int strict_error = -1;
};
outcome brute_force(const argmax_signature& s) {
  for (int i = 0; i < 6; ++i) {
    if (brute_first_refusal(brute_tactics[i], s).empty()) return {i, -1};
    if (brute_in_domain(brute_tactics[i], s)) return {fallback, i};
  }
  return {};
}

alignas(64) unsigned char arena[4096];

argmax_signature random_signature(std::mt19937_64& rng) {
  auto pick = [&](auto... options) {
    const std::int64_t values[] = {static_cast<std::int64_t>(options)...};
    return values[rng() % sizeof...(options)];
  };
  // Each field is valid for some tactic most of the time, and broken in one way or another
  // otherwise, so that all three outcomes are common.
  const bool broken = rng() % 4 == 0;
  const auto target = static_cast<target_id>(pick(2, 2, 4, 4, 0, 1, 3));
  const std::int64_t cols = rng() % 8 ? pick(248320, 32768) : pick(32764, 32772, 0, -4, static_cast<std::int64_t>(rng() % 300000));
  const std::int64_t rows = rng() % 4 ? pick(1, 2, 7, 8, 9, 63, 64, 65, 127, 128) : pick(-1, 0, 129, 1 + static_cast<std::int64_t>(rng() % 70000));
  const std::int64_t row_stride = cols + (broken && rng() % 4 == 0 ? pick(1, 2, -4, -1) : pick(0, 0, 4, 64, 32768));
  const auto* logits = broken && rng() % 4 == 0 ? (rng() % 2 ? nullptr : arena + pick(4, 8, 12)) : arena + pick(0, 16);
  const auto* out = broken && rng() % 4 == 0 ? (rng() % 2 ? nullptr : arena + 1024 + pick(4, 1)) : arena + 1024 + pick(0, 8);
  argmax_signature s = argmax_call_signature(target, device_ref{2, 0}, reinterpret_cast<const float*>(logits), rows, cols, row_stride,
                                             reinterpret_cast<const std::int64_t*>(out));
  if (broken && rng() % 8 == 0) s.logits.type = dtype::bf16;
  if (broken && rng() % 8 == 0) s.out.type = dtype::i32;
  s.workspace = broken && rng() % 4 == 0 ? (rng() % 2 ? nullptr : arena + 2048 + pick(8, 4)) : arena + 2048 + pick(0, 32);
  const std::uint64_t sizes[] = {small_sm90a::workspace_bytes, wide_sm90a::workspace_bytes, ref_sm90a::workspace_bytes,
                                 wide_gfx950::workspace_bytes, ref_gfx950::workspace_bytes};
  s.workspace_bytes = std::max(sizes[rng() % 5], sizes[rng() % 5]) + static_cast<std::uint64_t>(broken ? pick(0, -8, -16) : pick(0, 8));
  return s;
}

}  // namespace

TEST_CASE("dispatch equals the brute-force rule on 20000 random signatures") {
  std::mt19937_64 rng(20240611);
  int admitted = 0, fallbacks = 0, strict_errors = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    const argmax_signature s = random_signature(rng);
    const outcome expected = brute_force(s);
    INFO("iteration ", iteration, " target ", static_cast<int>(s.target), " rows ", s.rows(), " cols ", s.cols(), " stride ", s.row_stride());

    outcome got;
    try {
      got.tactic = select_tactic(test_tactics, s);
    } catch (const error& e) {
      CHECK(e.code() == status::invalid_argument);
      const std::string what = e.what();
      const auto open = what.find("tactic [");
      REQUIRE(open != std::string::npos);
      got.strict_error = std::atoi(what.c_str() + open + 8);
    }
    REQUIRE(got.tactic == expected.tactic);
    REQUIRE(got.strict_error == expected.strict_error);

    const explanation e = explain(test_tactics, s);
    REQUIRE(e.tactics.size() == 6);
    CHECK(e.selected == expected.tactic);
    CHECK(e.strict_refusal == expected.strict_error);
    for (int i = 0; i < 6; ++i) {
      const std::string field = brute_first_refusal(brute_tactics[i], s);
      const decision& d = e.tactics[static_cast<std::size_t>(i)].verdict;
      CHECK(d.admitted() == field.empty());
      if (!field.empty()) CHECK(std::string(d.field) == field);
      CHECK(e.tactics[static_cast<std::size_t>(i)].in_promoted_domain == brute_in_domain(brute_tactics[i], s));
    }
    admitted += expected.tactic >= 0;
    fallbacks += expected.tactic < 0 && expected.strict_error < 0;
    strict_errors += expected.strict_error >= 0;
  }
  MESSAGE(admitted, " admitted, ", fallbacks, " fallbacks, ", strict_errors, " strict errors");
  // The generator reaches all three outcomes often enough for the comparison to mean something.
  CHECK(admitted > 500);
  CHECK(fallbacks > 500);
  CHECK(strict_errors > 500);
}

TEST_CASE("explain lists every tactic with its first refusing field and the outcome") {
  alignas(16) static float logits[4];
  alignas(16) static std::int64_t out[4];
  argmax_signature s = argmax_call_signature(target_id::sm90a, device_ref{2, 0}, logits, 12, 32768, 32768, out);
  s.workspace = arena;
  s.workspace_bytes = wide_sm90a::workspace_bytes;
  const explanation e = explain(test_tactics, s);
  CHECK(e.selected == 2);
  const std::string text = e.text();
  MESSAGE(text);
  auto line = [](int i, const std::string& spelling, const char* rest) { return "[" + std::to_string(i) + "] " + spelling + rest; };
  CHECK(text.find(line(0, contract_spelling<ref_sm90a>(), " (strict elsewhere): refused at field 'logits': requires shape [rows, N] = [*, 248320], got shape [12, 32768]")) != std::string::npos);
  CHECK(text.find(line(1, contract_spelling<small_sm90a>(), ": refused at field 'rows'")) != std::string::npos);
  CHECK(text.find(line(2, contract_spelling<wide_sm90a>(), ": admitted")) != std::string::npos);
  CHECK(text.find(line(3, contract_spelling<ref_gfx950>(), ": refused at field 'target'")) != std::string::npos);
  CHECK(text.find("=> tactic [2]") != std::string::npos);
}

TEST_CASE("a strict tactic raises inside its promoted domain and falls back outside it") {
  alignas(16) static float logits[8];
  alignas(16) static std::int64_t out[4];
  argmax_signature s = argmax_call_signature(target_id::sm90a, device_ref{2, 0}, logits + 1, 16, 248320, 248320, out);  // logits misaligned: an ABI mismatch
  s.workspace = arena;
  s.workspace_bytes = ref_sm90a::workspace_bytes;
  try {
    select_tactic(test_tactics, s);
    FAIL("a strict refusal inside the promoted domain must raise");
  } catch (const error& e) {
    CHECK(e.code() == status::invalid_argument);
    CHECK(std::string(e.what()).find("refused at field 'logits'") != std::string::npos);
  }
  CHECK(explain(test_tactics, s).text().find("=> error: strict tactic [0]") != std::string::npos);
  s.logits.shape[0] = 129;  // outside the promoted rows 1..128: a plain fallback
  CHECK(select_tactic(test_tactics, s) == fallback);
  s.logits.shape[0] = 16;
  s.logits.type = dtype::f64;  // not the contract's element type: not its call, a plain fallback
  CHECK(select_tactic(test_tactics, s) == fallback);
  s.logits.type = dtype::f32;
  s.out.shape[0] = 8;  // an out smaller than the call needs, inside the domain: an error
  CHECK_THROWS_AS(select_tactic(test_tactics, s), error);
  s.out.shape[0] = 16;
  s.logits.data = logits;
  CHECK(select_tactic(test_tactics, s) == 0);
}

TEST_CASE("select_tactic allocates nothing, admitted or falling back") {
  alignas(16) static float logits[4];
  alignas(16) static std::int64_t out[4];
  argmax_signature s = argmax_call_signature(target_id::gfx950, device_ref{2, 0}, logits, 5, 32768, 32768, out);
  s.workspace = arena;
  s.workspace_bytes = wide_gfx950::workspace_bytes;
  const long before = allocations.load();
  int chosen = select_tactic(test_tactics, s);
  s.logits.shape[1] = 1000;
  const int declined = select_tactic(test_tactics, s);
  const long during = allocations.load() - before;
  CHECK(chosen == 4);
  CHECK(declined == fallback);
  CHECK(during == 0);
}

TEST_CASE("a list condition (when<>) is the one home of gate_up's schedule threshold; down's act dtype picks its input") {
  const auto* p = reinterpret_cast<const void*>(std::uintptr_t{0x10000});
  const moe_expert_weights w{p, static_cast<const float*>(p), p, static_cast<const float*>(p)};
  const device_ref gpu{2, 0};
  for (std::int64_t tokens = 1; tokens <= 16; ++tokens) {
    INFO("tokens ", tokens);
    moe_gate_up_signature s = moe_gate_up_call_signature(target_id::sm90a, gpu, p, static_cast<const std::int32_t*>(p), w, p, tokens);
    s.workspace = arena;
    s.workspace_bytes = sizeof arena;
    // [0] units gfx950, [1] units sm90a (resident), [2] route scan gfx950, [3] route scan sm90a
    CHECK(select_tactic(tactics::moe_expert_gate_up, s) == (tokens >= tactics::unit_list_min_tokens ? 1 : 3));
    if (tokens == 4)
      CHECK(explain(tactics::moe_expert_gate_up, s).text().find("refused at field 'tokens': requires >= tactics::unit_list_min_tokens") !=
            std::string::npos);
  }
  moe_down_signature d = moe_down_call_signature<contracts::moe_expert_down_fused_decode<sm90a>>(
      target_id::sm90a, gpu, p, nullptr, static_cast<const std::int32_t*>(p), static_cast<const float*>(p), w, p, 3);
  CHECK(select_tactic(tactics::moe_expert_down, d) == 1);  // bfloat16 act: act_quant fused
  d.act.type = dtype::e4m3;
  d.act.shape[1] = 512;
  d.act.strides[0] = 512;
  d.act_scales = d.route_weights;  // any float32 tensor of the right shape
  d.act_scales.shape[0] = 27;
  d.act_scales.shape[1] = 4;
  d.act_scales.strides[0] = 4;
  CHECK(select_tactic(tactics::moe_expert_down, d) == 3);
  d.act.type = dtype::f32;  // meant as E4M3 and refused there: an error, not a silent fallback
  CHECK_THROWS_AS(select_tactic(tactics::moe_expert_down, d), error);
}
