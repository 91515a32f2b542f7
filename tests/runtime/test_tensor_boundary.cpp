// The typed tensor boundary without a GPU: DLTensors (DLPack 0.6 structs with host or bogus
// device pointers, nothing is dereferenced) become tensor_args (runtime/tensor.hpp) — data +
// byte_offset, NULL strides as compact row-major, DLPack 1.x FP8 codes, uint8 as E4M3 bytes — and
// a contract refuses each bad tensor by name with its typed value: dtype, shape, strides,
// device, alignment, a missing tensor. Every field is refused in the contract's order.
#include <doctest/doctest.h>

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>

#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/ops/argmax.hpp"
#include "netra/runtime/ops/moe_experts.hpp"
#include "netra/runtime/tensor.hpp"

using namespace netra;

namespace {
using served = contracts::argmax<sm90a, 32768, 16, 8>;
const device_info gpu0 = [] {
  device_info d;
  d.api = backend_api::cuda;
  d.target = target_id::sm90a;
  d.ordinal = 0;
  return d;
}();
alignas(16) unsigned char workspace[16];

/// A DLTensor over fixed arrays; data is a made-up device address (never dereferenced).
struct fake {
  std::int64_t shape[8] = {};
  std::int64_t strides[8] = {};
  DLTensor t{};
  fake(std::uintptr_t address, DLDataType type, std::initializer_list<std::int64_t> extents, bool with_strides = false) {
    t.data = reinterpret_cast<void*>(address);
    t.device = {kDLCUDA, 0};
    t.dtype = type;
    t.ndim = static_cast<std::int32_t>(extents.size());
    int i = 0;
    for (auto e : extents) shape[i++] = e;
    std::int64_t compact = 1;
    for (i = t.ndim - 1; i >= 0; --i) {
      strides[i] = compact;
      compact *= shape[i];
    }
    t.shape = shape;
    t.strides = with_strides ? strides : nullptr;
  }
};
constexpr DLDataType f32{kDLFloat, 32, 1}, f64{kDLFloat, 64, 1}, int64{kDLInt, 64, 1}, int32{kDLInt, 32, 1};

std::string verdict(const fake& logits, const fake& out) {
  argmax_signature s = argmax_call_signature(gpu0, tensor_of(&logits.t), tensor_of(&out.t), workspace, served::workspace_bytes);
  return to_string(served::admits(s));
}
}  // namespace

TEST_CASE("a DLTensor becomes a tensor_arg: byte_offset, NULL strides, dtype codes, device") {
  fake x(0x10000, f32, {3, 32768});
  x.t.byte_offset = 64;
  const tensor_arg a = tensor_of(&x.t);
  CHECK(a.data == reinterpret_cast<const void*>(0x10040));
  CHECK(a.rank == 2);
  CHECK(a.shape[0] == 3);
  CHECK(a.shape[1] == 32768);
  CHECK(a.strides[0] == 32768);  // NULL strides: compact row-major
  CHECK(a.strides[1] == 1);
  CHECK(a.type == dtype::f32);
  CHECK(a.device == device_ref{kDLCUDA, 0});
  x.t.strides = x.strides;
  x.strides[0] = 40000;
  CHECK(tensor_of(&x.t).strides[0] == 40000);
  CHECK(tensor_of(nullptr).rank == -1);
  CHECK(dtype_of({kDLBfloat, 16, 1}) == dtype::bf16);
  CHECK(dtype_of({kDLFloat, 16, 1}) == dtype::f16);
  CHECK(dtype_of({10, 8, 1}) == dtype::e4m3);  // DLPack 1.x kDLFloat8_e4m3fn
  CHECK(dtype_of({12, 8, 1}) == dtype::e5m2);  // DLPack 1.x kDLFloat8_e5m2
  CHECK(dtype_of({kDLUInt, 8, 1}) == dtype::u8);
  CHECK(dtype_of({kDLFloat, 32, 4}) == dtype::other);  // vector lanes
  CHECK(dtype_accepts(dtype::e4m3, dtype::u8));        // uint8 tensors holding E4M3 bytes
  CHECK_FALSE(dtype_accepts(dtype::e4m3, dtype::i8));
  CHECK_FALSE(dtype_accepts(dtype::u8, dtype::e4m3));
  CHECK(device_of(gpu0) == device_ref{kDLCUDA, 0});
}

TEST_CASE("argmax refuses each bad tensor by name with its typed value") {
  const fake logits(0x10000, f32, {3, 32768}), out(0x20000, int64, {3});
  CHECK(verdict(logits, out) == "admitted");
  CHECK(verdict(fake(0x10000, f64, {3, 32768}), out) == "refused at field 'logits': requires float32, got float64");
  CHECK(verdict(fake(0x10000, {5, 64, 1}, {3, 32768}), out) ==
        "refused at field 'logits': requires float32, got DLPack dtype (code 5, bits 64, lanes 1)");
  CHECK(verdict(logits, fake(0x20000, int32, {3})) == "refused at field 'out': requires int64, got int32");
  CHECK(verdict(fake(0x10000, f32, {9, 1000}), out) == "refused at field 'logits': requires shape [rows, N] = [*, 32768], got shape [9, 1000]");
  CHECK(verdict(fake(0x10000, f32, {1, 3, 32768}), out) ==
        "refused at field 'logits': requires shape [rows, N] = [*, 32768], got shape [1, 3, 32768]");
  CHECK(verdict(fake(0x10000, f32, {1, 1, 1, 1, 32768}), out) ==
        "refused at field 'logits': requires shape [rows, N] = [*, 32768], got shape [1, 1, 1, 1]");  // rank 5: the first four
  CHECK(verdict(logits, fake(0x20000, int64, {2})) == "refused at field 'out': requires shape [rows] = [3], got shape [2]");
  CHECK(verdict(logits, fake(0x20000, int64, {3, 1})) == "refused at field 'out': requires shape [rows] = [3], got shape [3, 1]");
  fake columns(0x10000, f32, {3, 32768}, true);  // a transposed view: elements of a row 3 apart
  columns.strides[0] = 1;
  columns.strides[1] = 3;
  CHECK(verdict(columns, out) == "refused at field 'logits': requires contiguous rows (last stride 1), got strides [1, 3]");
  fake strided_out(0x20000, int64, {3}, true);
  strided_out.strides[0] = 2;
  CHECK(verdict(logits, strided_out) == "refused at field 'out': requires compact row-major strides, got strides [2]");
  fake wide(0x10000, f32, {3, 32768}, true);
  wide.strides[0] = 32772;  // rows of a wider tensor: admitted
  CHECK(verdict(wide, out) == "admitted");
  wide.strides[0] = 32770;  // rows 8 bytes off 16-byte alignment
  CHECK(verdict(wide, out) == "refused at field 'row_stride': requires >= N and a multiple of 4 elements (16-byte aligned rows), got 32770");
  fake host(0x10000, f32, {3, 32768});
  host.t.device = {kDLCPU, 0};
  CHECK(verdict(host, out) == "refused at field 'logits': requires the handle's device (cuda:0), got cpu");
  fake other_gpu(0x20000, int64, {3});
  other_gpu.t.device = {kDLCUDA, 1};
  CHECK(verdict(logits, other_gpu) == "refused at field 'out': requires the handle's device (cuda:0), got cuda:1");
  fake managed(0x10000, f32, {3, 32768});
  managed.t.device = {kDLCUDAManaged, 0};
  CHECK(verdict(managed, out) == "refused at field 'logits': requires the handle's device (cuda:0), got cuda_managed:0");
  fake offset(0x10000, f32, {3, 32768});
  offset.t.byte_offset = 4;  // a view one element in: misaligned
  CHECK(verdict(offset, out) == "refused at field 'logits': requires non-null and 16-byte aligned data, got 0x10004");
  CHECK(verdict(logits, fake(0x20004, int64, {3})) == "refused at field 'out': requires non-null and 8-byte aligned data, got 0x20004");
  CHECK(verdict(fake(0, f32, {3, 32768}), out) == "refused at field 'logits': requires non-null and 16-byte aligned data, got 0x0");
  argmax_signature s = argmax_call_signature(gpu0, tensor_of(&logits.t), tensor_of(nullptr), workspace, served::workspace_bytes);
  CHECK(to_string(served::admits(s)) == "refused at field 'out': requires a tensor, got NULL");
  s.target = target_id::gfx950;
  CHECK(to_string(served::admits(s)) == "refused at field 'target': requires sm90a, got gfx950");
}

TEST_CASE("refusal values never read as bare enum numbers") {
  CHECK(to_string(refuse("target", "sm90a", target_id::gfx950)) == "refused at field 'target': requires sm90a, got gfx950");
  CHECK(to_string(refuse("x", "bfloat16", dtype::f32)) == "refused at field 'x': requires bfloat16, got float32");
  for (int t = 0; t <= static_cast<int>(dtype::other); ++t) CHECK(std::string(dtype_name(static_cast<dtype>(t))).find_first_of("0123456789") != 0);
  CHECK(device_text(kDLROCM, 3) == "rocm:3");
  CHECK(device_text(99, 1) == "device type 99:1");
}

TEST_CASE("the expert projections refuse bad DLTensors by name: dtypes, W13 / W2 without the shared expert, small outputs, devices") {
  using gate_up = contracts::moe_expert_gate_up_decode<sm90a>;
  using down = contracts::moe_expert_down_decode<sm90a>;
  constexpr DLDataType bf16{kDLBfloat, 16, 1}, e4m3{10, 8, 1}, u8{kDLUInt, 8, 1}, f16{kDLFloat, 16, 1};
  const fake hidden(0x100000, bf16, {2, 2048}), ids(0x200000, int32, {2, 9}), w13(0x300000, e4m3, {257, 1024, 2048}),
      s13(0x400000, f32, {257, 8, 16}), out(0x500000, bf16, {18, 1024});
  auto gate_up_verdict = [&](const fake& h, const fake& i, const fake& w, const fake& s, const fake& o) {
    return to_string(gate_up::admits(moe_gate_up_call_signature(gpu0, tensor_of(&h.t), tensor_of(&i.t), tensor_of(&w.t), tensor_of(&s.t), tensor_of(&o.t))));
  };
  CHECK(gate_up_verdict(hidden, ids, w13, s13, out) == "admitted");
  CHECK(gate_up_verdict(hidden, ids, fake(0x300000, u8, {257, 1024, 2048}), s13, out) == "admitted");  // uint8 holding E4M3 bytes
  CHECK(gate_up_verdict(fake(0x100000, f32, {2, 2048}), ids, w13, s13, out) == "refused at field 'hidden': requires bfloat16, got float32");
  CHECK(gate_up_verdict(fake(0x100000, f16, {2, 2048}), ids, w13, s13, out) == "refused at field 'hidden': requires bfloat16, got float16");
  CHECK(gate_up_verdict(hidden, fake(0x200000, int64, {2, 9}), w13, s13, out) == "refused at field 'ids': requires int32, got int64");
  CHECK(gate_up_verdict(hidden, ids, fake(0x300000, e4m3, {256, 1024, 2048}), s13, out) ==
        "refused at field 'w13': requires shape [257 experts (256 routed + shared), 1024, 2048] = [257, 1024, 2048], got shape [256, 1024, 2048]");
  CHECK(gate_up_verdict(hidden, ids, w13, s13, fake(0x500000, bf16, {9, 1024})) ==
        "refused at field 'out': requires shape [9 tokens, 1024] = [18, 1024], got shape [9, 1024]");
  fake strided(0x100000, bf16, {2, 2048}, true);
  strided.strides[0] = 4096;
  CHECK(gate_up_verdict(strided, ids, w13, s13, out) == "refused at field 'hidden': requires compact row-major strides, got strides [4096, 1]");
  fake host_w13(0x300000, e4m3, {257, 1024, 2048});
  host_w13.t.device = {kDLCPU, 0};
  CHECK(gate_up_verdict(hidden, ids, host_w13, s13, out) == "refused at field 'w13': requires the handle's device (cuda:0), got cpu");

  const fake act(0x600000, e4m3, {18, 512}), scales(0x700000, f32, {18, 4}), rw(0x800000, f32, {2, 9}), w2(0x900000, e4m3, {257, 2048, 512}),
      s2(0xA00000, f32, {257, 16, 4}), y(0xB00000, bf16, {2, 2048});
  auto down_verdict = [&](const fake& a, const DLTensor* s, const fake& r, const fake& w, const fake& o) {
    return to_string(down::admits(moe_down_call_signature(gpu0, tensor_of(&a.t), tensor_of(s), tensor_of(&ids.t), tensor_of(&r.t), tensor_of(&w.t),
                                                          tensor_of(&s2.t), tensor_of(&o.t))));
  };
  CHECK(down_verdict(act, &scales.t, rw, w2, y) == "admitted");
  CHECK(down_verdict(fake(0x600000, f32, {18, 512}), &scales.t, rw, w2, y) == "refused at field 'act': requires float8_e4m3fn, got float32");
  CHECK(down_verdict(act, nullptr, rw, w2, y) == "refused at field 'act_scales': requires a tensor, got NULL");
  CHECK(down_verdict(act, &scales.t, fake(0x800000, bf16, {2, 9}), w2, y) == "refused at field 'route_weights': requires float32, got bfloat16");
  CHECK(down_verdict(act, &scales.t, fake(0x800000, f64, {2, 9}), w2, y) == "refused at field 'route_weights': requires float32, got float64");
  CHECK(down_verdict(act, &scales.t, rw, fake(0x900000, e4m3, {256, 2048, 512}), y) ==
        "refused at field 'w2': requires shape [257 experts (256 routed + shared), 2048, 512] = [257, 2048, 512], got shape [256, 2048, 512]");
  CHECK(down_verdict(act, &scales.t, rw, w2, fake(0xB00000, bf16, {1, 2048})) ==
        "refused at field 'out': requires shape [tokens, 2048] = [2, 2048], got shape [1, 2048]");
}
