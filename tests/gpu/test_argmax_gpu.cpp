// argmax on the GPU (sm90a cubins built by CMake): every sm90a instance of the catalog (the
// reference mapping and the benchmark's alternatives) equals the host oracle on adversarial and
// random rows for every row count class and several row strides; refused calls launch nothing.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpu/gpu_buffers.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/argmax.hpp"
#include "oracles/argmax.hpp"
#include "oracles/argmax_rows.hpp"

using namespace netra;
using contract = contracts::argmax_reference<sm90a>;

namespace {
template <class C> const handle<C>& argmax_handle() {
  static const handle<C> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<C>() + ".cubin", current_cuda_device());
  return h;
}
}  // namespace

TEST_CASE_TEMPLATE("argmax equals the oracle on every GPU row (rows 1..MaxRows, strides N, N+4, N+64)", C, contract,
                   contracts::argmax<sm90a, 248320, 128, 128, 1>, contracts::argmax<sm90a, 248320, 128, 128, 8>,
                   contracts::argmax<sm90a, 248320, 256, 128>, contracts::argmax<sm90a, 248320, 320, 128>,
                   contracts::argmax<sm90a, 248320, 640, 128>, contracts::argmax<sm90a, 248320, 320, 768>) {
  const auto& h = argmax_handle<C>();
  constexpr std::int64_t n = C::n;
  std::vector<std::int64_t> row_counts = {1, 2, 3, 16, 31, 64, 127, 128};
  if (C::max_rows > 128) row_counts.insert(row_counts.end(), {129, 192, static_cast<std::int64_t>(C::max_rows)});
  const std::int64_t strides[] = {n, n + 4, n + 64};
  int cases = 0;
  for (std::int64_t rows : row_counts)
    for (std::int64_t stride : strides) {
      std::vector<float> host(static_cast<std::size_t>(rows * stride), -7.0f);
      for (std::int64_t r = 0; r < rows; ++r)
        oracles::fill_row(host.data() + r * stride, n, static_cast<oracles::row_kind>((r + cases) % oracles::row_kinds),
                          static_cast<std::uint64_t>(r * 131 + stride), C::chunk_length);
      testing::gpu_array<float> logits(host.size());
      testing::gpu_array<std::int64_t> out(static_cast<std::size_t>(rows));
      logits.upload(host);
      out.fill_bytes(0xAB);  // poison: every index must be written
      argmax(h, nullptr, logits.data(), rows, n, stride, out.data());
      const auto got = out.download();
      for (std::int64_t r = 0; r < rows; ++r) {
        INFO(instance_name<C>(), " rows ", rows, " stride ", stride, " row ", r);
        REQUIRE(got[static_cast<std::size_t>(r)] == oracles::argmax_row(host.data() + r * stride, n));
      }
      cases += static_cast<int>(rows);
    }
  MESSAGE(cases, " rows checked");
  CHECK(cases >= 200);
}

TEST_CASE("a refused call names the field and writes nothing") {
  const auto& h = argmax_handle<contract>();
  testing::gpu_array<float> logits(static_cast<std::size_t>(contract::n) * 2);
  testing::gpu_array<std::int64_t> out(2);
  out.fill_bytes(0xAB);
  auto refused = [&](auto call, const char* field) {
    try {
      call();
      FAIL("the call was not refused");
    } catch (const error& e) {
      CHECK(e.code() == status::invalid_argument);
      CHECK(std::string(e.what()).find(field) != std::string::npos);
    }
  };
  refused([&] { argmax(h, nullptr, logits.data(), 0, contract::n, contract::n, out.data()); }, "'rows'");
  refused([&] { argmax(h, nullptr, logits.data(), 129, contract::n, contract::n, out.data()); }, "'rows'");
  refused([&] { argmax(h, nullptr, logits.data() + 1, 2, contract::n, contract::n, out.data()); }, "'logits'");
  refused([&] { argmax(h, nullptr, logits.data(), 2, contract::n, contract::n + 2, out.data()); }, "'row_stride'");
  refused([&] { argmax(h, nullptr, logits.data(), 2, contract::n - 4, contract::n, out.data()); }, "'logits'");  // cols: the logits tensor's shape
  refused([&] { argmax(h, nullptr, logits.data(), 2, contract::n, contract::n, nullptr); }, "'out'");
  const auto after = out.download();
  for (auto v : after) CHECK(static_cast<std::uint64_t>(v) == 0xABABABABABABABABull);
}
