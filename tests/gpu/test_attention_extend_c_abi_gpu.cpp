// The GQA4 extend C ABI on the GPU (libnetra, embedded code objects, dispatch included): an extend
// call through DLTensors equals the kernel called through its handle (the same tactic, bit for
// bit) and meets the contract's bound; a piecewise-prefill call of the same shape (<= 16 tokens per
// request) is NETRA_STATUS_NOT_SUPPORTED, writes nothing, and its explanation names the phase;
// refusals inside the promoted domain (a k_extend shorter than q, a misaligned v_extend, E5M2
// pools) are NETRA_STATUS_INVALID_ARGUMENT and write nothing.
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
#include "netra/runtime/tactics/attention.hpp"
#include "netra/runtime/ops/attention_gqa4_extend.hpp"
#include "oracles/attention_gqa4_extend.hpp"

using namespace netra;
using namespace netra::oracles;
using testing::dl_tensor;

namespace {
constexpr std::uint16_t poison = 0xABAB;
using testing::last_error;
using handle_guard = testing::c_handle_guard<netra_attention_gqa4_extend_handle, netra_attention_gqa4_extend_create, netra_attention_gqa4_extend_destroy>;
}  // namespace

TEST_CASE("extend through the C ABI: the served tactic's bits, within the bound; prefill and refused calls write nothing") {
  handle_guard g;
  const extend_case c = make_case({1, {0, 1, 65, 3000}, {12, 3, 12, 7}, 0.8f, 1.2f, extend_fill::random, 0}, 81);
  testing::gpu_array<std::uint16_t> q(c.q.size()), out(c.q.size()), direct(c.q.size()), ke(c.k_ext.size()), ve(c.v_ext.size());
  testing::gpu_array<std::uint8_t> k(c.k.size()), v(c.v.size());
  testing::gpu_array<std::int64_t> qo(c.qo_indptr.size()), idx(c.kv_indices.size());
  testing::gpu_array<std::int32_t> kvp(c.kv_indptr.size());
  testing::gpu_array<float> scales(2);
  q.upload(c.q), ke.upload(c.k_ext), ve.upload(c.v_ext), k.upload(c.k), v.upload(c.v), qo.upload(c.qo_indptr), idx.upload(c.kv_indices);
  kvp.upload(c.kv_indptr), scales.upload({c.k_scale, c.v_scale});
  const std::vector<std::uint16_t> poisoned(c.q.size(), poison);
  out.upload(poisoned);
  const i64 tokens = c.q_tokens, slots = c.slots, entries = static_cast<i64>(c.kv_indices.size()), b1 = c.batch + 1;
  const dl_tensor q_t(q.data(), testing::dl_bf16, {tokens, 32, 128}), out_t(out.data(), testing::dl_bf16, {tokens, 32, 128}),
      ke_t(ke.data(), testing::dl_bf16, {tokens, 8, 128}), ve_t(ve.data(), testing::dl_bf16, {tokens, 8, 128}),
      k_t(k.data(), testing::dl_u8, {slots, 8, 128}), v_t(v.data(), testing::dl_e4m3, {slots, 8, 128}), qo_t(qo.data(), testing::dl_i64, {b1}),
      kvp_t(kvp.data(), testing::dl_i32, {b1}), idx_t(idx.data(), testing::dl_i64, {entries}), ks_t(scales.data(), testing::dl_f32, {1}),
      vs_t(scales.data() + 1, testing::dl_f32, {});
  const float scale = contracts::attention_gqa4_extend_served<sm90a>::softmax_scale;
  auto call = [&](int phase, const DLTensor* kk, const DLTensor* kext, const DLTensor* vext) {
    return netra_attention_gqa4_extend(g.h, phase, 12, 1, scale, q_t.get(), out_t.get(), kext, vext, kk, v_t.get(), qo_t.get(), kvp_t.get(),
                                       idx_t.get(), nullptr, ks_t.get(), vs_t.get(), nullptr);
  };
  // The article's call: a piecewise-prefill chunk of 12 tokens, exactly an extend call by shape.
  CHECK(call(NETRA_ATTENTION_PREFILL, k_t.get(), ke_t.get(), ve_t.get()) == NETRA_STATUS_NOT_SUPPORTED);
  CHECK(last_error().find("no tactic admits") != std::string::npos);
  char text[4096];
  std::size_t length = 0;
  CHECK(netra_attention_gqa4_extend_explain(g.h, NETRA_ATTENTION_PREFILL, 12, 1, scale, q_t.get(), out_t.get(), ke_t.get(), ve_t.get(), k_t.get(),
                                            v_t.get(), qo_t.get(), kvp_t.get(), idx_t.get(), nullptr, ks_t.get(), vs_t.get(), text, sizeof text,
                                            &length) == NETRA_STATUS_OK);
  CHECK(std::string(text).find("requires extend, got prefill") != std::string::npos);
  const dl_tensor short_t(ke.data(), testing::dl_bf16, {tokens - 1, 8, 128});
  CHECK(call(NETRA_ATTENTION_EXTEND, k_t.get(), short_t.get(), ve_t.get()) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(last_error().find("'k_extend'") != std::string::npos);
  const dl_tensor misaligned_t(ve.data() + 1, testing::dl_bf16, {tokens, 8, 128});
  CHECK(call(NETRA_ATTENTION_EXTEND, k_t.get(), ke_t.get(), misaligned_t.get()) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(last_error().find("'v_extend'") != std::string::npos);
  const dl_tensor e5m2_t(k.data(), DLDataType{kDLFloat, 8, 1}, {slots, 8, 128});
  CHECK(call(NETRA_ATTENTION_EXTEND, e5m2_t.get(), ke_t.get(), ve_t.get()) != NETRA_STATUS_OK);
  CHECK(out.download() == poisoned);
  // The call itself.
  REQUIRE_MESSAGE(call(NETRA_ATTENTION_EXTEND, k_t.get(), ke_t.get(), ve_t.get()) == NETRA_STATUS_OK, last_error());
  const auto got = out.download();
  // What the tactic dispatch serves on sm90a above tactics::attention_gqa4_extend_deep_ring_max_batch.
  REQUIRE(c.batch > tactics::attention_gqa4_extend_deep_ring_max_batch);
  using served = contracts::attention_gqa4_extend_native<sm90a, 1, 3, 64, 128, 1>;
  static const handle<served> h(std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<served>() + ".cubin", current_cuda_device());
  direct.upload(poisoned);
  attention_extend_call a;
  a.q = q.data(), a.out = direct.data(), a.k_extend = ke.data(), a.v_extend = ve.data(), a.q_tokens = tokens, a.k_buffer = k.data(), a.v_buffer = v.data();
  a.slots = slots, a.qo_indptr = qo.data(), a.kv_indptr = kvp.data(), a.kv_indices = idx.data(), a.kv_indices_count = entries;
  a.k_scale = scales.data(), a.v_scale = scales.data() + 1, a.batch = c.batch;
  attention_extend(h, nullptr, a);
  CHECK(std::memcmp(got.data(), direct.download().data(), got.size() * 2) == 0);
  const gqa8_expected e = reference(c);
  std::size_t beyond = 0;
  for (std::size_t i = 0; i < got.size(); ++i) beyond += !(std::fabs(f32_from_bf16(got[i]) - e.out[i]) <= e.bound[i]);
  CHECK(beyond == 0);
}
