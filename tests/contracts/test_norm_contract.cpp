// contracts::norm on the host: the mapping figures each instance derives, budgets, and admits():
// a valid call of each kind is admitted; each bad field (target, kind, fp8_out, every tensor's
// dtype / shape / strides / device / alignment, token count, token strides, a too-small output or
// scales, eps, overlaps) is refused with its field name, in the documented order.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "netra/contracts/norm/norm.hpp"
#include "netra/kernels/norm/rms_norm.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/tactics/norm.hpp"
#include "netra/runtime/tensor.hpp"

using namespace netra;

namespace {
constexpr device_ref gpu{2, 0};

tensor_arg tensor(const void* data, dtype type, std::initializer_list<i64> shape, std::initializer_list<i64> strides = {}) {
  return strided_tensor(data, type, gpu, shape, strides);
}

/// Disjoint fake device addresses (never dereferenced).
const char* at(u64 offset) { return reinterpret_cast<const char*>(0x100000000ull + offset); }

template <class C> norm_signature valid(i64 tokens) {
  norm_signature s;
  s.target = C::target::id;
  s.device = gpu;
  s.kind = C::kind;
  s.weight_form = C::weight_form;
  s.fp8_out = C::fp8_out;
  s.eps = 1e-6f;
  const i64 cols = C::cols;
  s.x = tensor(at(0), dtype::bf16, {tokens, cols}, {cols + 64, 1});
  s.residual = tensor(at(1ull << 28), dtype::bf16, {tokens, cols}, {cols + 8, 1});
  s.gate = tensor(at(2ull << 28), dtype::bf16, {tokens, cols}, {3 * cols, 1});
  s.weight = tensor(at(3ull << 28), dtype::bf16, {C::n});
  s.out = tensor(at(4ull << 28), C::fp8_out ? dtype::e4m3 : dtype::bf16, {tokens, cols});
  s.scales = tensor(at(5ull << 28), dtype::f32, {tokens, cols / 128});
  return s;
}

template <class C, class Edit> void refused(const char* field, i64 tokens, Edit edit) {
  norm_signature s = valid<C>(tokens);
  edit(s);
  const decision d = C::admits(s);
  INFO("expected a refusal of ", field);
  REQUIRE(!d.admitted());
  CHECK(std::string(d.field) == field);
}
}  // namespace

using rms_decode = contracts::norm_decode<sm90a, 0, 0, 0>;
using rms_prefill_fp8 = contracts::norm_prefill<gfx950, 0, 1, 1>;
using add_decode = contracts::norm_decode<sm90a, 1, 0, 0>;
using gated_fp8 = contracts::norm_prefill<sm90a, 2, 0, 1>;

TEST_CASE("norm mapping figures") {
  CHECK(rms_decode::threads_per_row == 64);  // two warps per row
  CHECK(rms_decode::slices_per_thread == 1);
  CHECK(rms_decode::lds_bytes == 8);
  CHECK(contracts::norm_prefill<sm90a, 0, 0, 0>::threads_per_row == 64);  // warp32 prefill: the decode mapping
  CHECK(contracts::norm_prefill<sm90a, 0, 0, 0>::slices_per_thread == 1);
  CHECK(contracts::norm_prefill<sm90a, 0, 0, 0>::workgroup_size == 64);
  CHECK(contracts::norm_prefill<gfx950, 1, 0, 0>::workgroup_size == 256);  // wave64: 4 rows of one wave each
  CHECK(contracts::rms_norm<sm90a, 0, 0, 8192, 1, 4>::threads_per_row == 32);  // the one-warp-per-row alternative
  CHECK(contracts::rms_norm<sm90a, 0, 0, 8192, 1, 4>::slices_per_thread == 2);
  CHECK(rms_prefill_fp8::threads_per_row == 64);
  CHECK(rms_prefill_fp8::lds_bytes == 0);
  CHECK(rms_prefill_fp8::budget().max_lds_bytes == 0);
  CHECK(rms_prefill_fp8::groups_per_row == 16);
  CHECK(gated_fp8::n == 128);
  CHECK(gated_fp8::heads == 32);
  CHECK(gated_fp8::threads_per_row == 8);  // sm90a's gated prefill: a head over 8 threads (SlicesPerThread 2)
  CHECK(gated_fp8::slices_per_thread == 2);
  CHECK(gated_fp8::cols == 4096);
  CHECK(contracts::norm_mid<sm90a, 2, 0, 1>::threads_per_row == 16);  // its middle tier, <= 512 tokens
  CHECK(contracts::norm_mid<sm90a, 2, 0, 1>::max_tokens == 512);
  CHECK(contracts::norm_has_mid<sm90a, 2>);
  CHECK(!contracts::norm_has_mid<gfx950, 2>);
  CHECK(!contracts::norm_has_mid<sm90a, 0>);
  CHECK(contracts::norm_prefill<gfx950, 2, 0, 1>::threads_per_row == 16);
  CHECK(contracts::norm_decode<gfx950, 2, 0, 0>::workgroup_size == 64);
  CHECK(contracts::norm_decode<sm90a, 2, 0, 0>::workgroup_size == 32);
  // the sm90a gated FP8 decode: 8 heads (four warps) a workgroup, its successor released at start
  // up to 16 tokens; one-warp workgroups (BF16, norm_decode16) up to 64 tokens
  CHECK(contracts::norm_decode<sm90a, 2, 0, 1>::workgroup_size == 128);
  CHECK(contracts::norm_decode<sm90a, 2, 0, 1>::release_at_start_max_tokens == 16);
  CHECK(contracts::norm_decode<sm90a, 2, 0, 0>::release_at_start_max_tokens == 64);
  CHECK(contracts::norm_decode16<sm90a>::release_at_start_max_tokens == 64);
  CHECK(contracts::norm_decode<sm90a, 0, 0, 1>::release_at_start_max_tokens == 64);  // two warps, not gated
}

TEST_CASE("norm Split: a row over Split workgroups, a cluster for add_rms; Split 1 keeps the names") {
  using split2 = contracts::norm<sm90a, 1, 0, 1, 64, 2, 1, 0, 2>;
  using split4 = contracts::norm<sm90a, 0, 0, 1, 64, 2, 1, 0, 4>;
  using K2 = kernels::norm_kernel<split2>;
  using K4 = kernels::norm_kernel<split4>;
  CHECK(instance_name<split2>() == "norm-sm90a-1-0-1-64-2-1-0-2");
  CHECK(instance_name<contracts::norm<sm90a, 1, 0, 1, 64, 2, 1, 0, 1>>() == "norm-sm90a-1-0-1-64-2-1-0");
  CHECK(K2::shape(64).grid[0] == 128);
  CHECK(K2::row_of(5, 63) == 2);
  CHECK(K2::cluster_size == 2);  // add_rms: r' only after every part has read r
  CHECK(K4::cluster_size == 1);  // rms writes nothing it reads
  // Thread j's chunks j + 64 k (k < 4): part s of Split 2 stores k = 2 s, 2 s + 1; of Split 4, k = s.
  CHECK(K2::owns(0, 0));
  CHECK(K2::owns(0, 1));
  CHECK(K2::owns(1, 2));
  CHECK(!K2::owns(1, 1));
  CHECK(K4::owns(3, 3));
  CHECK(!K4::owns(2, 3));
  // Dispatch: add_rms FP8 decode splits its rows where the target has clusters.
  CHECK(same_v<contracts::norm_decode<sm90a, 1, 0, 1>, split2>);
  CHECK(contracts::norm_decode<sm90a, 1, 1, 1>::split == 2);
  CHECK(contracts::norm_decode<sm90a, 1, 0, 0>::split == 1);
  CHECK(contracts::norm_decode<sm90a, 0, 0, 1>::split == 1);
  CHECK(contracts::norm_decode<gfx950, 1, 0, 1>::split == 1);
  CHECK(contracts::norm_decode<gfx1151, 1, 0, 1>::split == 1);
  CHECK(contracts::norm_prefill<sm90a, 1, 0, 1>::split == 1);
}

TEST_CASE("norm SlicesPerThread: a gated head over 16 / P threads; 0 keeps the names") {
  using p2 = contracts::gated_rms_norm<sm90a, 1, 64, 4, 0, 2>;
  using p4 = contracts::gated_rms_norm<sm90a, 0, 64, 8, 0, 4>;
  using K2 = kernels::norm_kernel<p2>;
  CHECK(instance_name<p2>() == "norm-sm90a-2-0-1-64-1-4-0-1-2");
  CHECK(instance_name<contracts::gated_rms_norm<sm90a, 1, 64, 2>>() == "norm-sm90a-2-0-1-64-1-2-0");
  CHECK(p2::threads_per_row == 8);
  CHECK(p2::slices_per_thread == 2);
  CHECK(p2::workgroup_size == 32);  // 4 heads per warp
  CHECK(p2::group_threads == 8);
  CHECK(p4::threads_per_row == 4);
  CHECK(p4::workgroup_size == 32);
  CHECK(contracts::norm_decode<sm90a, 0, 0, 1>::group_threads == 16);
  // Thread j of a head holds chunks j and j + 8; the thread of chunk 0 stores the head's scale.
  CHECK(K2::chunk_of(3, 1) == 11);
  CHECK(K2::row_of(2, 9) == 9);
  CHECK(K2::stores_scale(0, 0));
  CHECK(!K2::stores_scale(0, 1));
  CHECK(!K2::stores_scale(1, 0));
  CHECK(K2::stores_scale(8, 0));  // head 1 of the workgroup
  CHECK(K2::group_slots == 1);
  CHECK(kernels::norm_kernel<contracts::norm_decode<sm90a, 0, 0, 1>>::group_slots == 4);
}

TEST_CASE("a valid call of each kind is admitted; out may be x itself when x is compact") {
  CHECK(rms_decode::admits(valid<rms_decode>(64)).admitted());
  CHECK(rms_prefill_fp8::admits(valid<rms_prefill_fp8>(8192)).admitted());
  CHECK(add_decode::admits(valid<add_decode>(1)).admitted());
  CHECK(gated_fp8::admits(valid<gated_fp8>(100)).admitted());
  norm_signature s = valid<add_decode>(4);
  s.x = tensor(at(0), dtype::bf16, {4, 2048});
  s.out = s.x;
  CHECK(add_decode::admits(s).admitted());
  norm_signature one = valid<rms_decode>(1);
  one.x.strides[0] = 2050;  // a single token's stride does not matter
  CHECK(rms_decode::admits(one).admitted());
}

TEST_CASE("each bad field is refused by name") {
  refused<rms_decode>("target", 4, [](norm_signature& s) { s.target = target_id::gfx950; });
  refused<rms_decode>("kind", 4, [](norm_signature& s) { s.kind = norm_kind::gated; });
  refused<rms_decode>("weight_form", 4, [](norm_signature& s) { s.weight_form = norm_weight::zero_centred; });
  refused<rms_decode>("fp8_out", 4, [](norm_signature& s) { s.fp8_out = true; });
  refused<rms_decode>("x", 4, [](norm_signature& s) { s.x.type = dtype::f16; });
  refused<rms_decode>("x", 4, [](norm_signature& s) { s.x.shape[1] = 4096; });
  refused<rms_decode>("x", 4, [](norm_signature& s) { s.x.strides[1] = 2; });
  refused<rms_decode>("x", 4, [](norm_signature& s) { s.x.device = {2, 1}; });
  refused<rms_decode>("x", 4, [](norm_signature& s) { s.x.data = at(2); });
  refused<rms_decode>("x", 4, [](norm_signature& s) { s.x.rank = -1; });
  refused<rms_decode>("tokens", 65, [](norm_signature&) {});
  refused<rms_decode>("tokens", 4, [](norm_signature& s) { s.x.shape[0] = 0; });
  refused<rms_decode>("x", 4, [](norm_signature& s) { s.x.strides[0] = 2052; });
  refused<rms_decode>("x", 4, [](norm_signature& s) { s.x.strides[0] = 1024; });
  refused<add_decode>("residual", 4, [](norm_signature& s) { s.residual.rank = -1; });
  refused<add_decode>("residual", 4, [](norm_signature& s) { s.residual.shape[0] = 3; });
  refused<add_decode>("residual", 4, [](norm_signature& s) { s.residual.strides[0] = 2049; });
  refused<gated_fp8>("gate", 4, [](norm_signature& s) { s.gate.type = dtype::f32; });
  refused<gated_fp8>("gate", 4, [](norm_signature& s) { s.gate.strides[0] = 4100; });
  refused<rms_decode>("weight", 4, [](norm_signature& s) { s.weight.shape[0] = 1024; });
  refused<rms_decode>("weight", 4, [](norm_signature& s) { s.weight.rank = -1; });
  refused<rms_decode>("out", 4, [](norm_signature& s) { s.out.shape[0] = 3; });  // too small
  refused<rms_decode>("out", 4, [](norm_signature& s) { s.out.type = dtype::e4m3; });
  refused<rms_decode>("out", 4, [](norm_signature& s) { s.out.strides[0] = 2056; });
  refused<rms_prefill_fp8>("out", 4, [](norm_signature& s) { s.out.type = dtype::bf16; });
  refused<rms_prefill_fp8>("scales", 4, [](norm_signature& s) { s.scales.shape[1] = 15; });  // too small
  refused<rms_prefill_fp8>("scales", 4, [](norm_signature& s) { s.scales.rank = -1; });
  refused<rms_prefill_fp8>("scales", 4, [](norm_signature& s) { s.scales.type = dtype::bf16; });
  refused<rms_decode>("eps", 4, [](norm_signature& s) { s.eps = 0.0f; });
  refused<rms_decode>("eps", 4, [](norm_signature& s) { s.eps = -1e-6f; });
  refused<rms_decode>("eps", 4, [](norm_signature& s) { s.eps = 1e-40f; });
  refused<rms_decode>("eps", 4, [](norm_signature& s) { s.eps = INFINITY; });
  refused<rms_decode>("eps", 4, [](norm_signature& s) { s.eps = NAN; });
  refused<rms_decode>("out", 4, [](norm_signature& s) { s.out.data = at(4096); });  // inside x, not x
  refused<rms_decode>("out", 4, [](norm_signature& s) { s.out.data = s.x.data; });  // x is strided
  refused<rms_prefill_fp8>("scales", 4, [](norm_signature& s) { s.scales.data = at(512); });
  refused<add_decode>("residual", 4, [](norm_signature& s) { s.residual.data = at(8192); });
  refused<gated_fp8>("gate", 4, [](norm_signature& s) { s.gate.data = s.out.data; });
}

TEST_CASE("norm Chain: named only when set; bits 2 and 4 with an FP8 output; bit 32 for the rms / add_rms FP8 forms of Split 1") {
  CHECK(instance_name<contracts::gated_rms_norm<sm90a, 1, 64, 2, 0, 0, 7>>() == "norm-sm90a-2-0-1-64-1-2-0-1-0-7");
  CHECK(instance_name<contracts::gated_rms_norm<sm90a, 0, 64, 2, 0, 0, 1>>() == "norm-sm90a-2-0-0-64-1-2-0-1-0-1");
  CHECK(instance_name<contracts::gated_rms_norm<sm90a, 1, 64, 2, 0, 0, 0>>() == "norm-sm90a-2-0-1-64-1-2-0");
  CHECK(contracts::gated_rms_norm<gfx950, 1, 64, 4, 0, 0, 6>::chain == 6);
  // served: sm90a's rms / add_rms FP8 forms of one row part per workgroup take 50, the others 0
  CHECK(instance_name<contracts::norm_prefill<sm90a, 0, 0, 1>>() == "norm-sm90a-0-0-1-8192-2-1-0-1-0-50");
  CHECK(instance_name<contracts::norm_decode<sm90a, 0, 1, 1>>() == "norm-sm90a-0-1-1-64-2-1-0-1-0-50");
  CHECK(contracts::norm_prefill<sm90a, 1, 0, 1>::chain == 50);
  CHECK(contracts::norm_decode<sm90a, 1, 0, 1>::chain == 0);  // Split 2
  CHECK(contracts::norm_prefill<sm90a, 0, 0, 0>::chain == 0);
  CHECK(contracts::norm_prefill<gfx950, 0, 0, 1>::chain == 0);
}

TEST_CASE("norm dispatch order: sm90a's gated FP8 up to 16 tokens, then each form's catalogued tiers") {
  namespace hana = boost::hana;
  constexpr auto gfx950_tiers = hana::length(catalog::norm_detail::of_target<gfx950>);
  constexpr auto sm90a_tiers = hana::length(catalog::norm_detail::of_target<sm90a>);
  static_assert(hana::length(tactics::norm) == gfx950_tiers + hana::size_c<1> + sm90a_tiers);
  static_assert(gfx950_tiers == hana::size_c<20> && sm90a_tiers == hana::size_c<22>);  // sm90a's gated norm: three tiers
  using decode16 = tactics::norm_strict<contracts::norm_decode16<sm90a>>;
  static_assert(hana::at(tactics::norm, gfx950_tiers) == hana::type_c<decode16>);
  // sm90a's gated BF16: decode, middle (<= 512 tokens), prefill (a head over 8 threads)
  constexpr auto gated = gfx950_tiers + hana::size_c<1> + hana::size_c<16>;
  static_assert(hana::at(tactics::norm, gated) == hana::type_c<tactics::norm_strict<contracts::norm_decode<sm90a, 2, 0, 0>>>);
  static_assert(hana::at(tactics::norm, gated + hana::size_c<1>) == hana::type_c<tactics::norm_strict<contracts::norm_mid<sm90a, 2, 0, 0>>>);
  static_assert(hana::at(tactics::norm, gated + hana::size_c<2>) == hana::type_c<tactics::norm_strict<contracts::norm_prefill<sm90a, 2, 0, 0>>>);
  CHECK(contracts::norm_prefill<sm90a, 2, 0, 0>::slices_per_thread == 2);
}
