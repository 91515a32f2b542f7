// The norm kernels on the GPU (sm90a cubins built by CMake): bitwise equal to the oracle — every
// BF16 or E4M3 output, every scale, r' — on random and adversarial rows, for every sm90a instance
// of the catalog, token counts 1 .. MaxTokens and padded strides; the token after the last (out,
// scales) and stride padding (r) stay poisoned; out = x in place; refused calls write nothing.
// NETRA_NORM_GPU_QUICK=1 (for compute-sanitizer runs) leaves out the calls of more than 100 tokens.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>
#include <string>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/catalog/norm.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/norm.hpp"
#include "oracles/norm.hpp"

using namespace netra;

namespace {
template <class C> const handle<C>& handle_of() {
  static const handle<C> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<C>() + ".cubin", current_cuda_device());
  return h;
}

struct inputs {
  std::vector<std::uint16_t> x, residual, gate, weight;
};

template <class C> inputs make_inputs(i64 tokens, i64 xs, i64 rs, i64 zs, std::uint64_t seed) {
  inputs in;
  in.x.assign(static_cast<std::size_t>(tokens * xs), 0x7FC1);  // padding: NaN
  in.residual.assign(static_cast<std::size_t>(tokens * rs), 0x7FC1);
  in.gate.assign(static_cast<std::size_t>(tokens * zs), 0x7FC1);
  in.weight.resize(C::n);
  oracles::fill_norm_weight(in.weight.data(), C::n, C::weight_form, seed);
  for (i64 t = 0; t < tokens; ++t)
    for (u32 h = 0; h < C::heads; ++h) {
      const std::uint64_t s = seed * 1009 + static_cast<std::uint64_t>(t) * 37 + h;
      const auto kind = [&](std::uint64_t k) { return static_cast<oracles::norm_row>(k % oracles::norm_row_kinds); };
      oracles::fill_norm_row(in.x.data() + t * xs + h * C::n, C::n, kind(static_cast<std::uint64_t>(t) + h + seed), s);
      oracles::fill_norm_row(in.residual.data() + t * rs + h * C::n, C::n, kind(static_cast<std::uint64_t>(t) * 3 + seed), s + 1);
      oracles::fill_norm_row(in.gate.data() + t * zs + h * C::n, C::n, h % 5 == 4 ? kind(static_cast<std::uint64_t>(t) + h) : oracles::norm_row::random, s + 2);
    }
  return in;
}

float eps_of(std::uint64_t seed) { return seed % 2 ? 1e-6f : 1e-5f; }

/// A call's inputs and the oracle's outputs for them. They depend on the contract's semantics
/// (operation, weight form, output format), never on its mapping, so every mapping of the same
/// semantics is checked against the same data (generated once: the oracle at 8192 tokens is slow).
struct expected_call {
  inputs in;
  std::vector<std::uint16_t> want_r;
  oracles::norm_outputs expected;
};
using expected_key = std::tuple<int, int, bool, i64, i64, std::uint64_t>;
std::map<expected_key, std::unique_ptr<expected_call>>& expected_cache() {  // one for every mapping
  static std::map<expected_key, std::unique_ptr<expected_call>> cache;
  return cache;
}
template <class C> const expected_call& expected_of(i64 tokens, i64 pad, std::uint64_t seed) {
  auto& slot = expected_cache()[{static_cast<int>(C::kind), static_cast<int>(C::weight_form), C::fp8_out, tokens, pad, seed}];
  if (!slot) {
    const i64 cols = C::cols, xs = cols + pad, rs = cols + 2 * pad, zs = cols + 3 * pad;
    slot = std::make_unique<expected_call>();
    slot->in = make_inputs<C>(tokens, xs, rs, zs, seed);
    slot->want_r = slot->in.residual;
    const oracles::norm_call call{.kind = C::kind, .weight_form = C::weight_form, .fp8_out = C::fp8_out, .eps = eps_of(seed),
                                  .tokens = tokens, .x = slot->in.x.data(), .x_stride = xs, .residual = slot->want_r.data(),
                                  .residual_stride = rs, .gate = slot->in.gate.data(), .gate_stride = zs, .weight = slot->in.weight.data()};
    slot->expected = oracles::norm_expected(call);
  }
  return *slot;
}

template <class C> void check_call(i64 tokens, i64 pad, std::uint64_t seed, bool in_place = false) {
  const i64 cols = C::cols, xs = cols + pad, rs = cols + 2 * pad, zs = cols + 3 * pad;
  const expected_call& data = expected_of<C>(tokens, pad, seed);
  const inputs& in = data.in;
  const std::size_t outs = static_cast<std::size_t>(tokens * cols), out_bytes = (outs + cols) * (C::fp8_out ? 1 : 2);
  testing::gpu_array<std::uint16_t> x(in.x.size()), residual(in.residual.size()), gate(in.gate.size()), weight(in.weight.size());
  testing::gpu_array<std::uint8_t> out(out_bytes);
  testing::gpu_array<float> scales(outs / 128 + 32);
  x.upload(in.x);
  residual.upload(in.residual);
  gate.upload(in.gate);
  weight.upload(in.weight);
  out.fill_bytes(0xAB);
  scales.fill_bytes(0xAB);
  const float eps = eps_of(seed);
  void* out_ptr = in_place ? static_cast<void*>(x.data()) : static_cast<void*>(out.data());
  norm(handle_of<C>(), nullptr, eps, tokens, x.data(), xs, C::kind == norm_kind::add_rms ? residual.data() : nullptr, rs,
       C::kind == norm_kind::gated ? gate.data() : nullptr, zs, weight.data(), out_ptr, C::fp8_out ? scales.data() : nullptr);

  const std::vector<std::uint16_t>& want_r = data.want_r;
  const oracles::norm_outputs& expected = data.expected;
  const auto& want = expected.y;
  const auto& want_q = expected.q;
  const auto& want_s = expected.scales;

  long mismatches = 0, first = -1, poisoned = 0;
  if (in_place) {
    const auto got = x.download();
    for (std::size_t i = 0; i < outs; ++i)
      if (got[i] != want[i] && (++mismatches, first < 0)) first = static_cast<long>(i);
  } else if constexpr (C::fp8_out) {
    const auto got = out.download();
    const auto got_s = scales.download();
    for (std::size_t i = 0; i < outs; ++i)
      if (got[i] != want_q[i] && (++mismatches, first < 0)) first = static_cast<long>(i);
    for (std::size_t g = 0; g < outs / 128; ++g) mismatches += oracles::norm_bits(got_s[g]) != oracles::norm_bits(want_s[g]);
    for (std::size_t i = outs; i < outs + cols; ++i) poisoned += got[i] != 0xAB;
    for (std::size_t g = outs / 128; g < outs / 128 + 32; ++g) poisoned += oracles::norm_bits(got_s[g]) != 0xABABABABu;
  } else {
    const auto bytes = out.download();
    for (std::size_t i = 0; i < outs; ++i) {
      const std::uint16_t got = static_cast<std::uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      if (got != want[i] && (++mismatches, first < 0)) first = static_cast<long>(i);
    }
    for (std::size_t i = 2 * outs; i < bytes.size(); ++i) poisoned += bytes[i] != 0xAB;
  }
  long residual_mismatches = 0;
  if constexpr (C::kind == norm_kind::add_rms) {
    const auto got_r = residual.download();  // r' inside each token, the padding still NaN
    for (std::size_t i = 0; i < got_r.size(); ++i) residual_mismatches += got_r[i] != want_r[i];
  } else {
    residual_mismatches += residual.download() != in.residual;
  }
  INFO(instance_name<C>(), " tokens ", tokens, " pad ", pad, " in place ", in_place, " first mismatch ", first);
  CHECK(mismatches == 0);
  CHECK(poisoned == 0);
  CHECK(residual_mismatches == 0);
}
}  // namespace

TEST_CASE("every sm90a norm instance equals the oracle bitwise (tokens 1 .. MaxTokens, padded strides)") {
  long calls = 0;
  const bool quick = std::getenv("NETRA_NORM_GPU_QUICK") != nullptr;  // under compute-sanitizer: tokens <= 100
  const bool gated_decode_only = std::getenv("NETRA_NORM_GPU_GATED_DECODE") != nullptr;
  const bool fp8_rms_only = std::getenv("NETRA_NORM_GPU_FP8_RMS") != nullptr;
  boost::hana::for_each(catalog::norm, [&](auto type) {
    using C = typename decltype(type)::type;
    // NETRA_NORM_GPU_GATED_DECODE: only the gated decode instances (the served one and the Chain
    // candidates); NETRA_NORM_GPU_FP8_RMS: only the rms / add_rms FP8 instances (Chain 0 and 32)
    const bool skip = (gated_decode_only && !(C::kind == norm_kind::gated && C::max_tokens == 64)) ||
                      (fp8_rms_only && !(C::kind != norm_kind::gated && C::fp8_out));
    if constexpr (same_v<typename C::target, sm90a>) {
      if (skip) return;
      for (i64 tokens : {1, 2, 7, 16, 33, 64, 100, 512, 8192})
        if (tokens <= C::max_tokens && (tokens <= (quick ? 100 : 8192))) {
          check_call<C>(tokens, 0, static_cast<std::uint64_t>(tokens));
          if (tokens <= 512) check_call<C>(tokens, 16, static_cast<std::uint64_t>(tokens + 1));
          calls += 1 + (tokens <= 512);
        }
      if constexpr (!C::fp8_out && C::kind != norm_kind::gated) check_call<C>(5, 0, 99, true);
    }
  });
  MESSAGE(calls, " calls checked");
  CHECK(calls > 0);
}

TEST_CASE("a refused norm call names the field and writes nothing") {
  using C = contracts::norm_decode<sm90a, 1, 0, 1>;  // add_rms, FP8 out
  const auto& h = handle_of<C>();
  testing::gpu_array<std::uint16_t> x(2048 * 80), residual(2048 * 80), weight(2048);
  testing::gpu_array<std::uint8_t> out(2048 * 80);
  testing::gpu_array<float> scales(16 * 80);
  residual.fill_bytes(0x3C);
  out.fill_bytes(0xAB);
  scales.fill_bytes(0xAB);
  auto refused = [&](auto call, const char* field) {
    try {
      call();
      FAIL("the call was not refused");
    } catch (const error& e) {
      CHECK(e.code() == status::invalid_argument);
      CHECK(std::string(e.what()).find(field) != std::string::npos);
    }
  };
  const float eps = 1e-6f;
  refused([&] { norm(h, nullptr, eps, 65, x.data(), 2048, residual.data(), 2048, nullptr, 0, weight.data(), out.data(), scales.data()); }, "'tokens'");
  refused([&] { norm(h, nullptr, eps, 4, x.data(), 2052, residual.data(), 2048, nullptr, 0, weight.data(), out.data(), scales.data()); }, "'x'");
  refused([&] { norm(h, nullptr, eps, 4, x.data() + 1, 2048, residual.data(), 2048, nullptr, 0, weight.data(), out.data(), scales.data()); }, "'x'");
  refused([&] { norm(h, nullptr, eps, 4, x.data(), 2048, nullptr, 2048, nullptr, 0, weight.data(), out.data(), scales.data()); }, "'residual'");
  refused([&] { norm(h, nullptr, eps, 4, x.data(), 2048, residual.data(), 2048, nullptr, 0, weight.data(), out.data(), nullptr); }, "'scales'");
  refused([&] { norm(h, nullptr, 0.0f, 4, x.data(), 2048, residual.data(), 2048, nullptr, 0, weight.data(), out.data(), scales.data()); }, "'eps'");
  refused([&] { norm(h, nullptr, eps, 4, x.data(), 2048, x.data() + 4096, 2048, nullptr, 0, weight.data(), out.data(), scales.data()); }, "'residual'");
  for (auto v : out.download()) CHECK(v == 0xAB);
  for (auto v : scales.download()) CHECK(oracles::norm_bits(v) == 0xABABABABu);
  for (auto v : residual.download()) CHECK(v == 0x3C3C);
}
