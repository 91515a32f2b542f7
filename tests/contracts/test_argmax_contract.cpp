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

argmax_signature good() {
  argmax_signature s{};
  s.target = target_id::sm90a;
  s.rows = 16;
  s.cols = 248320;
  s.row_stride = 248320;
  s.logits = logits_storage;
  s.out = out_storage;
  s.workspace = workspace_storage;
  s.workspace_bytes = ref90::workspace_bytes;
  return s;
}
std::string field_of(const decision& d) { return d.admitted() ? "" : d.field; }
}  // namespace

TEST_CASE("admits the reference call and refuses each field with its name") {
  CHECK(ref90::admits(good()).admitted());
  auto s = good();
  s.target = target_id::gfx950;
  CHECK(field_of(ref90::admits(s)) == "target");
  CHECK(to_string(ref90::admits(s)) == "refused at field 'target': requires sm90a, got gfx950");
  s = good();
  s.input = dtype::bf16;
  CHECK(field_of(ref90::admits(s)) == "input dtype");
  CHECK(to_string(ref90::admits(s)) == "refused at field 'input dtype': requires f32, got bf16");
  s = good();
  s.output = dtype::i32;
  CHECK(field_of(ref90::admits(s)) == "output dtype");
  s = good();
  s.cols = 248321;
  CHECK(field_of(ref90::admits(s)) == "cols");
  for (long long rows : {0LL, -1LL, 129LL}) {
    s = good();
    s.rows = rows;
    CHECK(field_of(ref90::admits(s)) == "rows");
  }
  for (long long stride : {248316LL, 248322LL}) {
    s = good();
    s.row_stride = stride;
    CHECK(field_of(ref90::admits(s)) == "row_stride");
  }
  s = good();
  s.logits = reinterpret_cast<const char*>(logits_storage) + 4;
  CHECK(field_of(ref90::admits(s)) == "logits");
  s = good();
  s.logits = nullptr;
  CHECK(field_of(ref90::admits(s)) == "logits");
  s = good();
  s.out = reinterpret_cast<const char*>(out_storage) + 4;
  CHECK(field_of(ref90::admits(s)) == "out");
  s = good();
  s.workspace = nullptr;
  CHECK(field_of(ref90::admits(s)) == "workspace");
  s = good();
  s.workspace_bytes = ref90::workspace_bytes - 8;
  CHECK(field_of(ref90::admits(s)) == "workspace_bytes");
  s.rows = 0;  // the first refusing field is reported
  CHECK(field_of(ref90::admits(s)) == "rows");
  CHECK(to_string(ref90::admits(s)) == "refused at field 'rows': requires in [1, MaxRows], got 0");
}

TEST_CASE("instance names, spellings and the generated translation unit") {
  CHECK(contract_spelling<ref950>() == "netra::contracts::argmax<netra::gfx950, 248320, 128, 128, 1>");
  CHECK(instance_name<ref950>() == "argmax-gfx950-248320-128-128-1");
  CHECK(instance_name<ref90>() == "argmax-sm90a-248320-128-128-4");
  CHECK(instantiation_source<ref90>() ==
        "#include <netra/instantiate/argmax.hpp>\nNETRA_INSTANTIATE(netra::contracts::argmax<netra::sm90a, 248320, 128, 128, 4>)\n");
}
