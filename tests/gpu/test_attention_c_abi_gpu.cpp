// The GQA8 attention C ABI on the GPU (libnetra, embedded code objects, dispatch included): a
// decode call through DLTensors equals the kernel called through its handle (the same tactic,
// bit for bit) and meets the contract's bound; uint8 pools are E4M3 bytes; a prefill-phase call no
// tactic admits is NETRA_STATUS_NOT_SUPPORTED and writes nothing; refusals inside the promoted
// domain (an out smaller than q, strided or misaligned q, a host tensor, wrong index dtype) are
// NETRA_STATUS_INVALID_ARGUMENT and write nothing; a phase outside 0..3 is refused.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/attention_gpu_common.hpp"
#include "gpu/dl_tensor.hpp"
#include "gpu/gpu_buffers.hpp"
#include "netra/c/attention.h"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/attention_gqa8.hpp"
#include "oracles/attention_gqa8_inputs.hpp"

using namespace netra;
using namespace netra::oracles;
using testing::dl_tensor;

namespace {
constexpr std::uint16_t poison = 0xABAB;
using testing::last_error;
using handle_guard = testing::c_handle_guard<netra_attention_gqa8_handle, netra_attention_gqa8_create, netra_attention_gqa8_destroy>;
}  // namespace

TEST_CASE("decode through the C ABI: the served tactic's bits, within the bound; refused calls write nothing") {
  handle_guard g;
  const gqa8_case c = make_case({1, 1, {0, 1, 65, 3000}, 0.8f, 1.2f, gqa8_fill::random, 0}, 71);
  testing::gpu_array<std::uint16_t> q(c.q.size()), out(c.q.size()), direct(c.q.size());
  testing::gpu_array<std::uint8_t> k(c.k.size()), v(c.v.size());
  testing::gpu_array<std::int64_t> qo(c.qo_indptr.size()), idx(c.kv_indices.size());
  testing::gpu_array<std::int32_t> kvp(c.kv_indptr.size());
  testing::gpu_array<float> scales(2);
  q.upload(c.q), k.upload(c.k), v.upload(c.v), qo.upload(c.qo_indptr), idx.upload(c.kv_indices), kvp.upload(c.kv_indptr);
  scales.upload({c.k_scale, c.v_scale});
  const std::vector<std::uint16_t> poisoned(c.q.size(), poison);
  out.upload(poisoned);
  const i64 tokens = c.q_tokens, slots = c.slots, entries = static_cast<i64>(c.kv_indices.size()), b1 = c.batch + 1;
  const dl_tensor q_t(q.data(), testing::dl_bf16, {tokens, 16, 256}), out_t(out.data(), testing::dl_bf16, {tokens, 16, 256}),
      k_t(k.data(), testing::dl_u8, {slots, 2, 256}), v_t(v.data(), testing::dl_u8, {slots, 2, 256}), qo_t(qo.data(), testing::dl_i64, {b1}),
      kvp_t(kvp.data(), testing::dl_i32, {b1}), idx_t(idx.data(), testing::dl_i64, {entries}), ks_t(scales.data(), testing::dl_f32, {1}),
      vs_t(scales.data() + 1, testing::dl_f32, {});
  auto call = [&](int phase, const DLTensor* qq, const DLTensor* oo, const DLTensor* ii) {
    return netra_attention_gqa8(g.h, phase, 1, 1, 0.0625f, qq, oo, k_t.get(), v_t.get(), qo_t.get(), kvp_t.get(), ii, nullptr, ks_t.get(),
                                vs_t.get(), nullptr);
  };
  // Refusals first: nothing may be written.
  CHECK(call(NETRA_ATTENTION_PREFILL, q_t.get(), out_t.get(), idx_t.get()) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(last_error().find("no tactic admits") != std::string::npos);
  CHECK(call(7, q_t.get(), out_t.get(), idx_t.get()) == NETRA_STATUS_INVALID_ARGUMENT);
  const dl_tensor small_t(out.data(), testing::dl_bf16, {tokens - 1, 16, 256});
  CHECK(call(NETRA_ATTENTION_DECODE, q_t.get(), small_t.get(), idx_t.get()) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(last_error().find("'out'") != std::string::npos);
  const dl_tensor strided_t(q.data(), testing::dl_bf16, {tokens / 2, 16, 256}, {8192, 256, 1});
  CHECK(call(NETRA_ATTENTION_DECODE, strided_t.get(), out_t.get(), idx_t.get()) == NETRA_STATUS_INVALID_ARGUMENT);
  const dl_tensor misaligned_t(q.data() + 1, testing::dl_bf16, {tokens - 1, 16, 256});
  CHECK(call(NETRA_ATTENTION_DECODE, misaligned_t.get(), out_t.get(), idx_t.get()) == NETRA_STATUS_INVALID_ARGUMENT);
  const dl_tensor idx32_t(idx.data(), testing::dl_i32, {entries});
  CHECK(call(NETRA_ATTENTION_DECODE, q_t.get(), out_t.get(), idx32_t.get()) == NETRA_STATUS_INVALID_ARGUMENT);
  std::vector<std::uint16_t> host_q(c.q);
  const dl_tensor host_t(host_q.data(), testing::dl_bf16, {tokens, 16, 256}, {}, DLDevice{kDLCPU, 0});
  CHECK(call(NETRA_ATTENTION_DECODE, host_t.get(), out_t.get(), idx_t.get()) != NETRA_STATUS_OK);
  CHECK(out.download() == poisoned);
  // The call itself.
  REQUIRE_MESSAGE(call(NETRA_ATTENTION_DECODE, q_t.get(), out_t.get(), idx_t.get()) == NETRA_STATUS_OK, last_error());
  const auto got = out.download();
  using served = contracts::attention_gqa8_decode<sm90a>;
  static const handle<served> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<served>() + ".cubin", current_cuda_device());
  direct.upload(poisoned);
  attention_gqa8_call a;
  a.q = q.data(), a.out = direct.data(), a.q_tokens = tokens, a.k_buffer = k.data(), a.v_buffer = v.data(), a.slots = slots, a.qo_indptr = qo.data();
  a.kv_indptr = kvp.data(), a.kv_indices = idx.data(), a.kv_indices_count = entries, a.k_scale = scales.data(), a.v_scale = scales.data() + 1;
  a.batch = c.batch;
  attention_gqa8(h, nullptr, a);
  CHECK(std::memcmp(got.data(), direct.download().data(), got.size() * 2) == 0);
  const gqa8_expected e = reference(c);
  std::size_t beyond = 0;
  for (std::size_t i = 0; i < got.size(); ++i) beyond += !(std::fabs(f32_from_bf16(got[i]) - e.out[i]) <= e.bound[i]);
  CHECK(beyond == 0);
  char text[4096];
  std::size_t length = 0;
  CHECK(netra_attention_gqa8_explain(g.h, NETRA_ATTENTION_PREFILL, 12, 1, 0.0625f, q_t.get(), out_t.get(), k_t.get(), v_t.get(), qo_t.get(),
                                     kvp_t.get(), idx_t.get(), nullptr, ks_t.get(), vs_t.get(), text, sizeof text, &length) == NETRA_STATUS_OK);
  CHECK(std::string(text).find("phase") != std::string::npos);
}
