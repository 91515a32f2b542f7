// gfx942 and gfx1151 in the contracts (issue 31): which contracts admit them, their mappings at
// wave64 / wave32, and the FP8 format of every FP8 tensor: an E4M3FNUZ tensor handed to a
// contract whose format is OCP E4M3FN (an act_quant output, a checkpoint's expert weights) is
// refused at its field, never misread.
#include <doctest/doctest.h>

#include "netra/contracts/argmax.hpp"
#include "netra/contracts/attention/gqa8_paged.hpp"
#include "netra/contracts/gdn/conv.hpp"
#include "netra/contracts/gdn/precompute.hpp"
#include "netra/contracts/moe/act_quant.hpp"
#include "netra/contracts/moe/expert_down.hpp"
#include "netra/contracts/moe/expert_gate_up.hpp"
#include "netra/contracts/moe/expert_weights.hpp"
#include "netra/contracts/moe/shared_gate.hpp"
#include "netra/contracts/norm/norm.hpp"
#include "netra/dsl/block_quant.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/tensor.hpp"

using namespace netra;

namespace {
alignas(16) unsigned char storage[1 << 16];
constexpr device_ref gpu{10, 0};  // kDLROCM, ordinal 0

moe_act_quant_signature act_quant_call(target_id t, dtype out_type) {
  moe_act_quant_signature s{};
  s.target = t;
  s.device = gpu;
  s.in = strided_tensor(storage, dtype::bf16, gpu, {9, 1024});
  s.out = strided_tensor(storage + 32768, out_type, gpu, {9, 512});
  s.scales = strided_tensor(storage + 40960, dtype::f32, gpu, {9, 4});
  return s;
}

/// A GQA8 decode call of 4 requests whose pools hold FP8 of type `pool`.
attention_signature attention_call(target_id t, dtype pool) {
  attention_signature s{};
  s.target = t;
  s.device = gpu;
  s.phase = attention_phase::decode, s.tq = 1, s.page_size = 1, s.softmax_scale = 0.0625f;
  s.q = strided_tensor(storage, dtype::bf16, gpu, {4, 16, 256});
  s.out = strided_tensor(storage, dtype::bf16, gpu, {4, 16, 256});
  s.k_buffer = strided_tensor(storage, pool, gpu, {64, 2, 256});
  s.v_buffer = strided_tensor(storage, pool, gpu, {64, 2, 256});
  s.qo_indptr = strided_tensor(storage + 64, dtype::i64, gpu, {5});
  s.kv_indptr = strided_tensor(storage + 64, dtype::i32, gpu, {5});
  s.kv_indices = strided_tensor(storage + 64, dtype::i64, gpu, {100});
  s.k_scale = strided_tensor(storage + 64, dtype::f32, gpu, {});
  s.v_scale = strided_tensor(storage + 64, dtype::f32, gpu, {1});
  s.slices = 1;
  return s;
}
}  // namespace

TEST_CASE("gfx942 and gfx1151: the vector contracts admit them with the target's wave size") {
  CHECK(contracts::argmax_reference<gfx942>::wave_size == 64);
  CHECK(contracts::argmax_reference<gfx1151>::wave_size == 32);
  CHECK(contracts::moe_act_quant_decode<gfx1151>::workgroup_size == 64);  // two waves32 per row
  CHECK(contracts::norm_decode<gfx1151, 0, 0, 0>::waves_per_row == 2);   // as sm90a's warps
  CHECK(contracts::norm_decode<gfx942, 0, 0, 0>::waves_per_row == 1);    // as gfx950's wave64
  CHECK(contracts::gdn_precompute<gfx942, 1, 16>::wave_size == 64);
  CHECK(contracts::moe_shared_gate_reference<gfx1151>::workgroup_size == 64);  // two tokens, one wave32 each
  CHECK(contract_spelling<contracts::argmax_reference<gfx942>>() == "netra::contracts::argmax<netra::gfx942, 248320, 128, 128, 1>");
  CHECK(instance_name<contracts::argmax_reference<gfx1151>>() == "argmax-gfx1151-248320-128-128-1");
  // Budgets exist for both (the audit checks the built objects against them).
  CHECK(contracts::argmax_reference<gfx1151>::budget().max_vgprs == 96);
  CHECK(contracts::norm_prefill<gfx1151, 1, 0, 1>::budget().max_vgprs == 160);
  CHECK(contracts::gdn_conv<gfx942, 1, 16, gdn::conv_layout::channel_major, gdn::conv_writes::final_state>::budget().max_vgprs == 104);
}

TEST_CASE("act_quant on gfx942 writes OCP E4M3FN and refuses an E4M3FNUZ output tensor") {
  using C = contracts::moe_act_quant_decode<gfx942>;
  CHECK(same_v<C::fp8_format, fp8::e4m3fn>);
  CHECK(C::admits(act_quant_call(target_id::gfx942, dtype::e4m3)).admitted());
  CHECK(C::admits(act_quant_call(target_id::gfx942, dtype::u8)).admitted());  // raw bytes: the caller vouches for the format
  CHECK(to_string(C::admits(act_quant_call(target_id::gfx942, dtype::e4m3fnuz))) ==
        "refused at field 'out': requires float8_e4m3fn, got float8_e4m3fnuz");
  CHECK(to_string(C::admits(act_quant_call(target_id::gfx950, dtype::e4m3))) == "refused at field 'target': requires gfx942, got gfx950");
}

TEST_CASE("a checkpoint's expert weights in E4M3FNUZ are refused by the E4M3FN contracts") {
  const i64 rows = moe::expert_weights::gate_up_rows, cols = moe::expert_weights::hidden;
  const tensor_arg s13 = strided_tensor(storage + 64, dtype::f32, gpu, {257, rows / 128, cols / 128});
  tensor_arg w13 = strided_tensor(storage, dtype::e4m3, gpu, {257, rows, cols});
  CHECK(moe::expert_weights::require(w13, "w13", "[257, 1024, 2048]", s13, "s13", "[257, 8, 16]", rows, cols, gpu).admitted());
  w13.type = dtype::e4m3fnuz;
  const decision d = moe::expert_weights::require(w13, "w13", "[257, 1024, 2048]", s13, "s13", "[257, 8, 16]", rows, cols, gpu);
  CHECK(to_string(d) == "refused at field 'w13': requires float8_e4m3fn, got float8_e4m3fnuz");
}

TEST_CASE("gate_up on gfx942 reads the E4M3FNUZ weights its Format names and refuses E4M3FN ones; gfx950 the reverse") {
  auto call = [](target_id t, dtype w13_type) {
    moe_gate_up_signature s{};
    s.target = t;
    s.device = gpu;
    s.hidden = strided_tensor(storage, dtype::bf16, gpu, {1, 2048});
    s.ids = strided_tensor(storage + 4096, dtype::i32, gpu, {1, 9});
    s.w13 = strided_tensor(storage + 8192, w13_type, gpu, {257, 1024, 2048});
    s.s13 = strided_tensor(storage + 16384, dtype::f32, gpu, {257, 8, 16});
    s.out = strided_tensor(storage + 32768, dtype::bf16, gpu, {9, 1024});
    return s;
  };
  using G = contracts::moe_expert_gate_up_decode<gfx942>;
  using O = contracts::moe_expert_gate_up_decode<gfx950>;
  CHECK(same_v<G::fp8_format, fp8::e4m3fnuz>);
  CHECK(same_v<O::fp8_format, fp8::e4m3fn>);
  CHECK(G::admits(call(target_id::gfx942, dtype::e4m3fnuz)).admitted());
  CHECK(G::admits(call(target_id::gfx942, dtype::u8)).admitted());  // raw bytes: taken as the contract's format
  CHECK(to_string(G::admits(call(target_id::gfx942, dtype::e4m3))) == "refused at field 'w13': requires float8_e4m3fnuz, got float8_e4m3fn");
  CHECK(O::admits(call(target_id::gfx950, dtype::e4m3)).admitted());
  CHECK(to_string(O::admits(call(target_id::gfx950, dtype::e4m3fnuz))) == "refused at field 'w13': requires float8_e4m3fn, got float8_e4m3fnuz");
  CHECK(instance_name<G>() == "moe-experts-gate-up-gfx942-16");
  CHECK(instance_name<O>() == "moe-experts-gate-up-gfx950-16");  // the format adds nothing to the names
  // the hidden quantization in the contract's format: 240 for 448, NaN bytes 0x80
  CHECK(G::hidden_quant::e4m3_max == 240.0f);
  CHECK(G::hidden_quant::poison_word == 0x80808080u);
  CHECK(O::hidden_quant::poison_word == 0x7F7F7F7Fu);
  CHECK(G::hidden_quant::of(0x4370u).scale == 1.0f);  // amax 240
  CHECK(O::hidden_quant::of(0x43E0u).scale == 1.0f);  // amax 448
  CHECK(G::hidden_quant::of(0x43E0u).scale == div_rn(448.0f, 240.0f));
  CHECK(G::hidden_quant::of(0x7FC0u).poison);
}

TEST_CASE("down on gfx942 (act_quant fused) reads E4M3FNUZ W2 and quantizes to FNUZ (amax / 240); E4M3FN W2 refused") {
  auto call = [](target_id t, dtype w2_type) {
    moe_down_signature s{};
    s.target = t;
    s.device = gpu;
    s.act = strided_tensor(storage, dtype::bf16, gpu, {9, 1024});
    s.ids = strided_tensor(storage + 4096, dtype::i32, gpu, {1, 9});
    s.route_weights = strided_tensor(storage + 8192, dtype::f32, gpu, {1, 9});
    s.w2 = strided_tensor(storage + 16384, w2_type, gpu, {257, 2048, 512});
    s.s2 = strided_tensor(storage + 32768, dtype::f32, gpu, {257, 16, 4});
    s.out = strided_tensor(storage + 40960, dtype::bf16, gpu, {1, 2048});
    return s;
  };
  using D = contracts::moe_expert_down_fused_decode<gfx942>;
  CHECK(same_v<D::fp8_format, fp8::e4m3fnuz>);
  CHECK(D::admits(call(target_id::gfx942, dtype::e4m3fnuz)).admitted());
  CHECK(to_string(D::admits(call(target_id::gfx942, dtype::e4m3))) == "refused at field 'w2': requires float8_e4m3fnuz, got float8_e4m3fn");
  CHECK(to_string(contracts::moe_expert_down_fused_decode<gfx950>::admits(call(target_id::gfx950, dtype::e4m3fnuz))) ==
        "refused at field 'w2': requires float8_e4m3fn, got float8_e4m3fnuz");
  CHECK(instance_name<D>() == "moe-experts-down-gfx942-4-1");
  // the fused act_quant's scale in each format (0x4370: 240, 0x43E0: 448)
  CHECK(act_quant_scale<fp8::e4m3fnuz>(0x4370u) == 1.0f);
  CHECK(act_quant_scale(0x43E0u) == 1.0f);
  CHECK(act_quant_scale<fp8::e4m3fnuz>(0x43E0u) == div_rn(448.0f, 240.0f));
}

TEST_CASE("DLPack's FP8 codes: 10 is E4M3FN, 11 E4M3FNUZ, and they stay apart") {
  CHECK(dtype_of(DLDataType{10, 8, 1}) == dtype::e4m3);
  CHECK(dtype_of(DLDataType{11, 8, 1}) == dtype::e4m3fnuz);
  CHECK(fp8::e4m3fn::dlpack_code == 10);
  CHECK(fp8::e4m3fnuz::dlpack_code == 11);
  CHECK(fp8_dtype_v<fp8::e4m3fnuz> == dtype::e4m3fnuz);
  CHECK(fp8_dtype_v<native_fp8_t<gfx942>> == dtype::e4m3fnuz);
  CHECK_FALSE(dtype_accepts(dtype::e4m3, dtype::e4m3fnuz));
  CHECK_FALSE(dtype_accepts(dtype::e4m3fnuz, dtype::e4m3));
  CHECK(dtype_accepts(dtype::e4m3fnuz, dtype::u8));
  CHECK(std::string(dtype_name(dtype::e4m3fnuz)) == "float8_e4m3fnuz");
}

TEST_CASE("GQA8 decode on gfx942 reads E4M3FNUZ pools (its Format) and refuses E4M3FN ones at k_buffer / v_buffer; gfx950 the reverse") {
  using g942 = contracts::attention_gqa8<gfx942, 0, 1, 1, 2, 0, 64, 512>;
  using g950 = contracts::attention_gqa8_decode<gfx950>;
  CHECK(same_v<g942::kv_format, fp8::e4m3fnuz>);
  CHECK(same_v<g950::kv_format, fp8::e4m3fn>);
  CHECK(g942::workgroup_size == 2 * 64);
  CHECK(g942::lds_bytes <= gfx942::lds_bytes_per_workgroup);
  CHECK(instance_name<g942>() == "attention-gqa8-gfx942-0-1-1-2-0-64-512");  // Format is the target's default: not in the name
  CHECK(g942::admits(attention_call(target_id::gfx942, dtype::e4m3fnuz)).admitted());
  CHECK(g942::admits(attention_call(target_id::gfx942, dtype::u8)).admitted());  // uint8 holding the contract's format
  const decision ocp = g942::admits(attention_call(target_id::gfx942, dtype::e4m3));
  REQUIRE_FALSE(ocp.admitted());
  CHECK(std::string(ocp.field) == "k_buffer");
  attention_signature mixed = attention_call(target_id::gfx942, dtype::e4m3fnuz);
  mixed.v_buffer = strided_tensor(storage, dtype::e4m3, gpu, {64, 2, 256});
  const decision v = g942::admits(mixed);
  REQUIRE_FALSE(v.admitted());
  CHECK(std::string(v.field) == "v_buffer");
  CHECK(g950::admits(attention_call(target_id::gfx950, dtype::e4m3)).admitted());
  const decision fnuz = g950::admits(attention_call(target_id::gfx950, dtype::e4m3fnuz));
  REQUIRE_FALSE(fnuz.admitted());
  CHECK(std::string(fnuz.field) == "k_buffer");
  CHECK_FALSE(g942::admits(attention_call(target_id::gfx950, dtype::e4m3fnuz)).admitted());  // the target field
}
