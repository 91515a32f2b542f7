// contracts::argmax: derived constants, run-time admission (first refusing field, in order),
// and the instance naming the build and the JIT share.
#include <doctest/doctest.h>

#include <string>

#include "netra/contracts/argmax.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/instance.hpp"

using namespace netra;
using ref950 = contracts::argmax_reference<gfx950>;
using ref90 = contracts::argmax_reference<sm90a>;

TEST_CASE("reference contract constants") {
  CHECK(ref950::chunk_length == 1940);
  CHECK_FALSE(ref950::has_tail);
  CHECK(ref950::workspace_bytes == 128u * 128u * 8u);
  CHECK(ref950::waves_per_workgroup == 1);
  CHECK(ref90::waves_per_workgroup == 4);
  CHECK(ref950::wave_size == 64);
  CHECK(ref90::wave_size == 32);
  using tail = contracts::argmax<sm90a, 4100, 10, 8, 2>;
  CHECK(tail::chunk_length == 412);
  CHECK(tail::has_tail);
  CHECK(tail::last_chunk_length == 4100 - 9 * 412);
}

namespace {
alignas(16) float logits_storage[8];
alignas(16) long long out_storage[4];
alignas(16) unsigned long long workspace_storage[4];
constexpr device_ref gpu{2, 0};  // kDLCUDA, ordinal 0

tensor_arg tensor(const void* data, dtype type, i32 rank, const i64 (&shape)[2], const i64 (&strides)[2]) {
  tensor_arg t;
  t.data = data;
  t.type = type;
  t.rank = rank;
  t.device = gpu;
  for (int i = 0; i < rank; ++i) {
    t.shape[i] = shape[i];
    t.strides[i] = strides[i];
  }
  return t;
}

argmax_signature good() {
  argmax_signature s{};
  s.target = target_id::sm90a;
  s.device = gpu;
  s.logits = tensor(logits_storage, dtype::f32, 2, {16, 248320}, {248320, 1});
  s.out = tensor(out_storage, dtype::i64, 1, {16, 0}, {1, 0});
  s.workspace = workspace_storage;
  s.workspace_bytes = ref90::workspace_bytes;
  return s;
}
std::string field_of(const decision& d) { return d.admitted() ? "" : d.field; }
}  // namespace

TEST_CASE("admits the reference call and refuses each field with its name and typed value") {
  CHECK(ref90::admits(good()).admitted());
  auto s = good();
  s.target = target_id::gfx950;
  CHECK(to_string(ref90::admits(s)) == "refused at field 'target': requires sm90a, got gfx950");
  s = good();
  s.logits.type = dtype::bf16;
  CHECK(to_string(ref90::admits(s)) == "refused at field 'logits': requires float32, got bfloat16");
  s = good();
  s.logits.type = dtype::other;
  s.logits.dlpack_dtype = 5 | 64 << 8 | 1 << 16;  // complex64
  CHECK(to_string(ref90::admits(s)) == "refused at field 'logits': requires float32, got DLPack dtype (code 5, bits 64, lanes 1)");
  s = good();
  s.out.type = dtype::i32;
  CHECK(to_string(ref90::admits(s)) == "refused at field 'out': requires int64, got int32");
  s = good();
  s.logits.shape[1] = 248321;
  CHECK(to_string(ref90::admits(s)) == "refused at field 'logits': requires shape [rows, N] = [*, 248320], got shape [16, 248321]");
  s = good();
  s.logits.rank = 1;
  CHECK(to_string(ref90::admits(s)) == "refused at field 'logits': requires shape [rows, N] = [*, 248320], got shape [16]");
  s = good();
  s.logits.device = {1, 0};
  CHECK(to_string(ref90::admits(s)) == "refused at field 'logits': requires the handle's device (cuda:0), got cpu");
  s = good();
  s.out.device = {2, 1};
  CHECK(to_string(ref90::admits(s)) == "refused at field 'out': requires the handle's device (cuda:0), got cuda:1");
  s = good();
  s.logits.rank = -1;
  CHECK(to_string(ref90::admits(s)) == "refused at field 'logits': requires a tensor, got NULL");
  for (long long rows : {0LL, 129LL}) {
    s = good();
    s.logits.shape[0] = rows;
    CHECK(field_of(ref90::admits(s)) == "rows");
  }
  for (long long stride : {248316LL, 248322LL}) {
    s = good();
    s.logits.strides[0] = stride;
    CHECK(field_of(ref90::admits(s)) == "row_stride");
  }
  s = good();
  s.logits.strides[1] = 2;
  CHECK(to_string(ref90::admits(s)) == "refused at field 'logits': requires contiguous rows (last stride 1), got strides [248320, 2]");
  s = good();
  s.logits.shape[0] = 1;
  s.logits.strides[0] = 7;  // a single row's stride does not matter
  s.out.shape[0] = 1;
  CHECK(ref90::admits(s).admitted());
  s = good();
  s.logits.data = reinterpret_cast<const char*>(logits_storage) + 4;
  CHECK(to_string(ref90::admits(s)).starts_with("refused at field 'logits': requires non-null and 16-byte aligned data, got 0x"));
  s = good();
  s.logits.data = nullptr;
  CHECK(to_string(ref90::admits(s)) == "refused at field 'logits': requires non-null and 16-byte aligned data, got 0x0");
  s = good();
  s.out.shape[0] = 8;  // smaller than the call needs
  CHECK(to_string(ref90::admits(s)) == "refused at field 'out': requires shape [rows] = [16], got shape [8]");
  s = good();
  s.out.strides[0] = 2;
  CHECK(to_string(ref90::admits(s)) == "refused at field 'out': requires compact row-major strides, got strides [2]");
  s = good();
  s.out.data = reinterpret_cast<const char*>(out_storage) + 4;
  CHECK(field_of(ref90::admits(s)) == "out");
  s = good();
  s.workspace = nullptr;
  CHECK(field_of(ref90::admits(s)) == "workspace");
  s = good();
  s.workspace_bytes = ref90::workspace_bytes - 8;
  CHECK(field_of(ref90::admits(s)) == "workspace_bytes");
  s.logits.shape[0] = 0;  // the first refusing field is reported
  CHECK(to_string(ref90::admits(s)) == "refused at field 'rows': requires in [1, MaxRows], got 0");
}

TEST_CASE("instance names, spellings and the generated translation unit") {
  CHECK(contract_spelling<ref950>() == "netra::contracts::argmax<netra::gfx950, 248320, 128, 128, 1>");
  CHECK(instance_name<ref950>() == "argmax-gfx950-248320-128-128-1");
  CHECK(instance_name<ref90>() == "argmax-sm90a-248320-128-128-4");
  CHECK(instantiation_source<ref90>() ==
        "#include <netra/instantiate/argmax.hpp>\nNETRA_INSTANTIATE(netra::contracts::argmax<netra::sm90a, 248320, 128, 128, 4>)\n");
}
