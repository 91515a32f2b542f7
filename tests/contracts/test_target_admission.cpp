// gfx942 and gfx1151 in the contracts (issue 31): which contracts admit them, their mappings at
// wave64 / wave32, and the FP8 format of every FP8 tensor: an E4M3FNUZ tensor handed to a
// contract whose format is OCP E4M3FN (an act_quant output, a checkpoint's expert weights) is
// refused at its field, never misread.
#include <doctest/doctest.h>

#include "netra/contracts/argmax.hpp"
#include "netra/contracts/gdn/conv.hpp"
#include "netra/contracts/gdn/precompute.hpp"
#include "netra/contracts/moe/act_quant.hpp"
#include "netra/contracts/moe/expert_weights.hpp"
#include "netra/contracts/moe/shared_gate.hpp"
#include "netra/contracts/norm/norm.hpp"
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
