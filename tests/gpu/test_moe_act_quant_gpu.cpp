// act_quant on the GPU (sm90a cubins built by CMake): bitwise equal to the oracle — every E4M3
// value and every scale — on adversarial and random rows, every BF16 value as a gate, several
// row counts and strides, for the decode and batch mappings; the row after the last
// stays poisoned; refused calls write nothing.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/moe_act_quant.hpp"
#include "oracles/moe_routing.hpp"
#include "oracles/moe_routing_inputs.hpp"

using namespace netra;

namespace {
template <class Contract> const handle<Contract>& handle_of() {
  static const handle<Contract> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<Contract>() + ".cubin", current_cuda_device());
  return h;
}

/// Runs one call and compares with the oracle; returns the number of rows checked.
template <class Contract> long check_call(std::int64_t rows, std::int64_t stride, std::uint64_t seed, bool sweep_gates) {
  std::vector<std::uint16_t> host(static_cast<std::size_t>(rows * stride), 0x7FC1);  // padding: NaN
  for (std::int64_t r = 0; r < rows; ++r)
    oracles::fill_act_row(host.data() + r * stride, static_cast<oracles::act_row>((r + seed) % oracles::act_row_kinds), seed * 977 + r);
  if (sweep_gates)  // every BF16 pattern as a gate value, up = 1 .. random
    for (std::int64_t i = 0; i < 65536 && i / 512 < rows; ++i) host[(i / 512) * stride + i % 512] = static_cast<std::uint16_t>(i);
  testing::gpu_array<std::uint16_t> in(host.size());
  testing::gpu_array<std::uint8_t> out(static_cast<std::size_t>((rows + 1) * 512));
  testing::gpu_array<float> scales(static_cast<std::size_t>((rows + 1) * 4));
  in.upload(host);
  out.fill_bytes(0xAB);
  scales.fill_bytes(0xAB);
  moe_act_quant(handle_of<Contract>(), nullptr, in.data(), rows, 1024, stride, out.data(), scales.data());
  const auto got = out.download();
  const auto got_s = scales.download();
  std::vector<std::uint8_t> want(static_cast<std::size_t>(rows * 512));
  std::vector<float> want_s(static_cast<std::size_t>(rows * 4));
  oracles::act_quant(host.data(), rows, stride, want.data(), want_s.data());
  long mismatches = 0, first = -1;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i]) {
      if (first < 0) first = static_cast<long>(i);
      ++mismatches;
    }
  long scale_mismatches = 0, first_scale = -1;
  for (std::size_t i = 0; i < want_s.size(); ++i)
    if (oracles::bits_of(want_s[i]) != oracles::bits_of(got_s[i])) {
      if (first_scale < 0) first_scale = static_cast<long>(i);
      ++scale_mismatches;
    }
  INFO(instance_name<Contract>(), " rows ", rows, " stride ", stride, " first value mismatch ", first, " first scale mismatch ", first_scale);
  CHECK(mismatches == 0);
  CHECK(scale_mismatches == 0);
  for (std::size_t i = want.size(); i < want.size() + 512; ++i) CHECK(got[i] == 0xAB);  // the next row is untouched
  for (std::size_t i = want_s.size(); i < want_s.size() + 4; ++i) CHECK(oracles::bits_of(got_s[i]) == 0xABABABABu);
  return rows;
}
}  // namespace

TEST_CASE("act_quant decode (R = 9) equals the oracle bitwise, every row count 1..9, three strides") {
  using C = contracts::moe_act_quant_decode<sm90a>;
  long rows_checked = 0;
  for (std::int64_t rows = 1; rows <= 9; ++rows)
    for (std::int64_t stride : {1024, 1032, 2048}) rows_checked += check_call<C>(rows, stride, static_cast<std::uint64_t>(rows * 3 + stride), false);
  MESSAGE(rows_checked, " rows, ", rows_checked * 512, " values checked");
}

TEST_CASE("act_quant batch (R up to 4608) equals the oracle bitwise, every BF16 gate value included") {
  long rows_checked = 0;
  for (std::int64_t rows : {1, 9, 17, 45, 144, 4608}) {
    rows_checked += check_call<contracts::moe_act_quant_batch<sm90a>>(rows, 1024, static_cast<std::uint64_t>(rows), rows >= 144);
    rows_checked += check_call<contracts::moe_act_quant_batch<sm90a>>(rows, 1032, static_cast<std::uint64_t>(rows + 1), rows >= 144);
    rows_checked += check_call<contracts::moe_act_quant_batch<sm90a>>(rows, 2048, static_cast<std::uint64_t>(rows + 2), rows >= 144);
  }
  MESSAGE(rows_checked, " rows, ", rows_checked * 512, " values checked");
}

TEST_CASE("a refused act_quant call names the field and writes nothing") {
  using C = contracts::moe_act_quant_batch<sm90a>;
  const auto& h = handle_of<C>();
  testing::gpu_array<std::uint16_t> in(1024 * 16);
  testing::gpu_array<std::uint8_t> out(512 * 16);
  testing::gpu_array<float> scales(4 * 16);
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
  refused([&] { moe_act_quant(h, nullptr, in.data(), 0, 1024, 1024, out.data(), scales.data()); }, "'rows'");
  refused([&] { moe_act_quant(h, nullptr, in.data(), 4609, 1024, 1024, out.data(), scales.data()); }, "'rows'");
  refused([&] { moe_act_quant(h, nullptr, in.data(), 4, 512, 1024, out.data(), scales.data()); }, "'cols'");
  refused([&] { moe_act_quant(h, nullptr, in.data(), 4, 1024, 1028, out.data(), scales.data()); }, "'row_stride'");
  refused([&] { moe_act_quant(h, nullptr, in.data() + 1, 4, 1024, 1024, out.data(), scales.data()); }, "'in'");
  refused([&] { moe_act_quant(h, nullptr, in.data(), 4, 1024, 1024, out.data() + 8, scales.data()); }, "'out'");
  refused([&] { moe_act_quant(h, nullptr, in.data(), 4, 1024, 1024, out.data(), scales.data() + 1); }, "'scales'");
  for (auto v : out.download()) CHECK(v == 0xAB);
  for (auto v : scales.download()) CHECK(oracles::bits_of(v) == 0xABABABABu);
  using D = contracts::moe_act_quant_decode<sm90a>;
  refused([&] { moe_act_quant(handle_of<D>(), nullptr, in.data(), 10, 1024, 1024, out.data(), scales.data()); }, "'rows'");
}
