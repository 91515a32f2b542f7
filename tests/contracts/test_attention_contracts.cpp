// contracts/attention/gqa8_paged.hpp: run-time admission field by field, the slice policy, and
// graph phase as a dispatch dimension — the article's mistake (a broad "M <= 16" predicate sent a
// piecewise prefill chunk to the extend kernel) repeated against netra's dispatch list.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/tensor.hpp"
#include "netra/runtime/tactics/attention.hpp"

using namespace netra;
using decode = contracts::attention_gqa8_decode<sm90a>;
using verify = contracts::attention_gqa8_verify<sm90a>;

namespace {
alignas(64) unsigned char buffer[4096];
constexpr device_ref gpu{2, 0};
attention_signature good(attention_phase phase, i64 tq) {
  attention_signature s{};
  s.target = target_id::sm90a;
  s.device = gpu;
  s.phase = phase, s.tq = tq, s.page_size = 1, s.softmax_scale = 0.0625f;
  s.q = strided_tensor(buffer, dtype::bf16, gpu, {4 * tq, 16, 256});
  s.out = strided_tensor(buffer, dtype::bf16, gpu, {4 * tq, 16, 256});
  s.k_buffer = strided_tensor(buffer, dtype::e4m3, gpu, {1000, 2, 256});
  s.v_buffer = strided_tensor(buffer, dtype::u8, gpu, {1000, 2, 256});  // uint8 holding E4M3 bytes
  s.qo_indptr = strided_tensor(buffer + 64, dtype::i64, gpu, {5});
  s.kv_indptr = strided_tensor(buffer + 64, dtype::i32, gpu, {5});
  s.kv_indices = strided_tensor(buffer + 64, dtype::i64, gpu, {100});
  s.k_scale = strided_tensor(buffer + 64, dtype::f32, gpu, {});
  s.v_scale = strided_tensor(buffer + 64, dtype::f32, gpu, {1});
  s.slices = 1;
  return s;
}
template <class C> std::string refused_field(const attention_signature& s) {
  const decision d = C::admits(s);
  return d.admitted() ? std::string("(admitted)") : std::string(d.field);
}
/// The first contract of a dispatch list that admits `s` (its index), or -1: the dispatch rule.
template <class List> int first_admitting(List list, const attention_signature& s) {
  int index = 0, chosen = -1;
  boost::hana::for_each(list, [&](auto t) {
    using T = typename decltype(t)::type;
    if (chosen < 0 && tactic_traits<T>::condition(s).admitted() && contract_of<T>::admits(s).admitted()) chosen = index;
    ++index;
  });
  return chosen;
}
}  // namespace

TEST_CASE("a well-formed decode and verify call is admitted; each field refuses on its own") {
  CHECK(decode::admits(good(attention_phase::decode, 1)).admitted());
  CHECK(verify::admits(good(attention_phase::verify, 12)).admitted());
  auto with = [](auto change) {
    attention_signature s = good(attention_phase::decode, 1);
    change(s);
    return refused_field<decode>(s);
  };
  CHECK(with([](auto& s) { s.target = target_id::gfx950; }) == "target");
  CHECK(with([](auto& s) { s.phase = attention_phase::verify; }) == "phase");
  // A refused phase reads as its name (a named-value refusal), never as the enumerator's number.
  const decision prefill = decode::admits(good(attention_phase::prefill, 1));
  CHECK(prefill.kind == value_kind::named);
  CHECK(to_string(prefill) == "refused at field 'phase': requires decode, got prefill");
  CHECK(to_string(refuse_named("mode", "gated", 0, "rms")) == "refused at field 'mode': requires gated, got rms");
  CHECK(with([](auto& s) { s.tq = 2; }) == "tq");
  CHECK(with([](auto& s) { s.page_size = 16; }) == "page_size");
  CHECK(with([](auto& s) { s.softmax_scale = 0.088f; }) == "softmax_scale");
  CHECK(with([](auto& s) { s.q.type = dtype::f16; }) == "q");
  CHECK(with([](auto& s) { s.q = strided_tensor(buffer, dtype::bf16, gpu, {4, 32, 128}); }) == "q");          // GQA4 heads
  CHECK(with([](auto& s) { s.q = strided_tensor(buffer, dtype::bf16, gpu, {4, 16, 256}, {8192, 256, 1}); }) == "q");  // strided tokens
  CHECK(with([](auto& s) { s.q.data = buffer + 8; }) == "q");
  CHECK(with([](auto& s) { s.q.device = device_ref{1, 0}; }) == "q");  // a host tensor
  CHECK(with([](auto& s) { s.qo_indptr.type = dtype::i32; }) == "qo_indptr");
  CHECK(with([](auto& s) { s.qo_indptr.shape[0] = 1; }) == "batch");
  CHECK(with([](auto& s) { s.qo_indptr.shape[0] = 66; }) == "batch");
  CHECK(with([](auto& s) { s.q.shape[0] = 3; }) == "q");  // fewer tokens than batch * Tq
  CHECK(with([](auto& s) { s.out.shape[0] = 3; }) == "out");  // an output smaller than the call
  CHECK(with([](auto& s) { s.out = {}; }) == "out");
  CHECK(with([](auto& s) { s.k_buffer.type = dtype::e5m2; }) == "k_buffer");
  CHECK(with([](auto& s) { s.k_buffer = strided_tensor(buffer, dtype::e4m3, gpu, {1000, 8, 128}); }) == "k_buffer");
  CHECK(with([](auto& s) { s.v_buffer.shape[0] = 999; }) == "v_buffer");
  CHECK(with([](auto& s) { s.kv_indptr.type = dtype::i64; }) == "kv_indptr");
  CHECK(with([](auto& s) { s.kv_indptr.shape[0] = 4; }) == "kv_indptr");
  CHECK(with([](auto& s) { s.kv_indices.type = dtype::i32; }) == "kv_indices");
  CHECK(with([](auto& s) { s.kv_indices.data = buffer + 4; }) == "kv_indices");
  CHECK(with([](auto& s) { s.k_scale = {}; }) == "k_scale");
  CHECK(with([](auto& s) { s.v_scale = strided_tensor(buffer + 64, dtype::f32, gpu, {2}); }) == "v_scale");
  CHECK(with([](auto& s) { s.v_scale.type = dtype::bf16; }) == "v_scale");
  CHECK(with([](auto& s) { s.slices = 0; }) == "slices");
  CHECK(with([](auto& s) { s.slices = 200; }) == "slices");  // 4 x 200 > SplitCapacity
  CHECK(to_string(decode::admits([] {
          attention_signature s = good(attention_phase::decode, 1);
          s.out.shape[0] = 3;
          return s;
        }())).find("[tokens of q, 16, 256]") != std::string::npos);
  CHECK(with([](auto& s) { s.slices = 4; }) == "workspace");
  CHECK(with([](auto& s) { s.slices = 4, s.workspace = buffer, s.workspace_bytes = 16; }) == "workspace_bytes");
  CHECK(with([](auto& s) { s.slices = 4, s.workspace = buffer, s.workspace_bytes = decode::workspace_bytes; }) == "(admitted)");
}

TEST_CASE("an index outside the pool is refused before launch where the host can see it (the host mirror)") {
  std::vector<i64> indices(100, 5);
  attention_signature s = good(attention_phase::decode, 1);
  s.kv_indices_host = indices.data();
  CHECK(decode::admits(s).admitted());
  indices[73] = 1000;  // == slots
  CHECK(refused_field<decode>(s) == "kv_indices");
  indices[73] = -1;
  CHECK(refused_field<decode>(s) == "kv_indices");
  CHECK(to_string(decode::admits(s)).find("inside the pool") != std::string::npos);
  indices[73] = 999;
  CHECK(decode::admits(s).admitted());
}

TEST_CASE("the slice count fills the device from its processor count") {
  CHECK(decode::slices_for(1, 132) == 66);
  CHECK(decode::slices_for(16, 132) == 16);  // 4 workgroups per SM (Stages 0)
  CHECK(decode::slices_for(64, 132) == 4);
  CHECK(verify::slices_for(1, 132) == 66);
  CHECK(decode::slices_for(1, 256) == 128);  // gfx950's 256 CUs
  for (u32 b = 1; b <= 64; ++b) CHECK(b * decode::slices_for(b, 132) <= decode::split_capacity);
  // Several workgroups per SM (by LDS, and by registers at the budget's cap): up to that many waves
  // of workgroups, at most 32 slices unless covering the device once takes more.
  using ring_2x2 = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 2, 64, 256>;
  using direct_2 = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 0, 64, 512>;
  CHECK(decode::workgroups_per_processor == 4);
  CHECK((contracts::attention_gqa8<sm90a, 0, 1, 1, 4, 3, 64, 128>::workgroups_per_processor == 1));
  CHECK(verify::workgroups_per_processor == 1);
  CHECK(ring_2x2::workgroups_per_processor == 3);
  CHECK(direct_2::workgroups_per_processor == 4);
  CHECK(ring_2x2::slices_for(64, 132) == 3);
  CHECK(ring_2x2::slices_for(16, 132) == 12);
  CHECK(ring_2x2::slices_for(1, 132) == 66);
  CHECK(direct_2::slices_for(64, 132) == 4);
  CHECK(direct_2::slices_for(16, 132) == 16);
  CHECK(direct_2::slices_for(1, 132) == 66);
  for (u32 b = 1; b <= 64; ++b) CHECK(b * direct_2::slices_for(b, 132) <= direct_2::split_capacity);
  CHECK(direct_2::lds_bytes == 2 * 8 * 256 * 4 + 8 * 256 * 2 + 2 * 2 * 64 * 8 + 2 * 8 * 8);  // no ring: epilogue, q, tables, stats
  CHECK(verify::wide_bytes == 32 * 1040);  // the verify block widened once, V's 8-element groups 1040 bytes apart (WarpgroupMma)
  CHECK(verify::workgroup_size == 256);     // two warpgroups: waves 0..5 real, 6 and 7 on the Q tile's padding
  // the ring, Q, two widened blocks, the slot table (4 rounds of 64) and the statistics
  CHECK(verify::lds_bytes == 6 * 64 * 256 + 96 * 256 * 2 + 2 * 32 * 1040 + 4 * 64 * 8 + 6 * 16 * 8);
  CHECK((contracts::attention_gqa8<sm90a, 2, 12, 1, 1, 6, 64, 128, 2>::wide_bytes == 64 * 256 * 2));  // BlockSplit 2: widened once
  CHECK(decode::chunk_for(8192, 66) == 128);  // round_up(125, 64 * 2)
  CHECK(verify::chunk_for(49164, 66) == 768);
  CHECK(decode::chunk_for(0, 66) == 128);
}

TEST_CASE("graph phase is a dispatch dimension: a piecewise-prefill chunk of 12 tokens is not a verification") {
  // The article's call: piecewise prefill of a 12-token chunk over a cached prefix. By shape it is
  // exactly a verification (M = batch * 12 <= 16 per request, the same heads, the same cache).
  attention_signature prefill = good(attention_phase::prefill, 12);
  prefill.qo_indptr.shape[0] = prefill.kv_indptr.shape[0] = 2;  // one request of 12 tokens
  // The broad predicate that once selected the extend kernel admits it...
  auto broad_predicate = [](const attention_signature& s) { return s.tq <= 16 && s.q.shape[1] == 16 && s.q.shape[2] == 256; };
  CHECK(broad_predicate(prefill));
  // ...netra's verify contract refuses it by phase, and no tactic of the dispatch list takes it.
  CHECK(refused_field<verify>(prefill) == "phase");
  CHECK(first_admitting(tactics::attention_gqa8, prefill) == -1);
  // Nor is it inside any tactic's promoted domain, so the call falls back instead of raising.
  bool in_domain = false;
  boost::hana::for_each(tactics::attention_gqa8, [&](auto t) { in_domain |= tactic_traits<typename decltype(t)::type>::in_promoted_domain(prefill); });
  CHECK_FALSE(in_domain);
  // The same shape in the verify phase is taken by the sm90a verify tactic (index 5).
  attention_signature v = prefill;
  v.phase = attention_phase::verify;
  CHECK(first_admitting(tactics::attention_gqa8, v) == 5);
  // And a one-token extend call is not decode.
  attention_signature extend = good(attention_phase::extend, 1);
  CHECK(first_admitting(tactics::attention_gqa8, extend) == -1);
  CHECK(first_admitting(tactics::attention_gqa8, good(attention_phase::decode, 1)) == 3);  // B 4: the 2-wave mapping
}

TEST_CASE("sm90a decode: BlockSplit 4 at B = 1 (the list's measured range), the 2-wave mapping from B = 2; both in the same ABI") {
  using split = tactics::attention_gqa8_block_split_decode;
  static_assert(split::block_warps == 2 && split::stages == 0 && split::block_split == 4 && split::workgroup_size == 256);
  static_assert(split::split_capacity == decode::split_capacity && split::workspace_bytes == decode::workspace_bytes);
  CHECK(split::slices_for(1, 132) == decode::slices_for(1, 132));  // 66 on the H200: 2 x 0's grid, 4 warps a block
  attention_signature s = good(attention_phase::decode, 1);  // B 4
  CHECK(tactics::up_to_block_split_max_batch::decide(s).field == std::string("batch"));
  CHECK_FALSE(tactics::attention_gqa8_when_domain<split, tactics::up_to_block_split_max_batch>::contains(s));
  s.qo_indptr.shape[0] = s.kv_indptr.shape[0] = 2;  // B 1
  s.q.shape[0] = s.out.shape[0] = 1;
  CHECK(tactics::up_to_block_split_max_batch::decide(s).admitted());
  CHECK(tactics::attention_gqa8_when_domain<split, tactics::up_to_block_split_max_batch>::contains(s));
  CHECK(first_admitting(tactics::attention_gqa8, s) == 2);
  s.qo_indptr.shape[0] = s.kv_indptr.shape[0] = 3;  // B 2
  s.q.shape[0] = s.out.shape[0] = 2;
  CHECK(first_admitting(tactics::attention_gqa8, s) == 3);
  s.target = target_id::gfx950;  // sm90a only: gfx950's B 1 stays on its served decode
  s.qo_indptr.shape[0] = s.kv_indptr.shape[0] = 2;
  s.q.shape[0] = s.out.shape[0] = 1;
  CHECK(first_admitting(tactics::attention_gqa8, s) == 0);
}

TEST_CASE("sm90a decode: the 8-wave mapping from B = 64 (the list's measured threshold), the 2-wave one below; both in the same ABI") {
  using eight = tactics::attention_gqa8_eight_wave_decode;
  static_assert(eight::block_warps == 8 && eight::stages == 0 && eight::workgroup_size == 256 && eight::workgroups_per_processor == 1);
  static_assert(eight::workspace_bytes == decode::workspace_bytes);
  for (u32 B : {34u, 63u, 64u}) CHECK(eight::slices_for(B, 132) == 1);  // one workgroup per (KV head, request): no stage two
  attention_signature s = good(attention_phase::decode, 1);
  CHECK(tactics::from_eight_wave_min_batch::decide(s).field == std::string("batch"));
  s.qo_indptr.shape[0] = s.kv_indptr.shape[0] = 65;  // B 64
  s.q.shape[0] = s.out.shape[0] = 64;
  CHECK(tactics::from_eight_wave_min_batch::decide(s).admitted());
  CHECK(tactics::attention_gqa8_eight_wave_domain<eight>::contains(s));
  s.qo_indptr.shape[0] = s.kv_indptr.shape[0] = 64;  // B 63
  s.q.shape[0] = s.out.shape[0] = 63;
  CHECK_FALSE(tactics::attention_gqa8_eight_wave_domain<eight>::contains(s));  // not strict there: the next tactic decides
}

namespace {
using extend = contracts::attention_gqa4_extend_served<sm90a>;
attention_signature good_extend(attention_phase phase, i64 tq) {
  attention_signature s{};
  s.target = target_id::sm90a;
  s.device = gpu;
  s.phase = phase, s.tq = tq, s.page_size = 1, s.softmax_scale = extend::softmax_scale;
  s.q = strided_tensor(buffer, dtype::bf16, gpu, {16, 32, 128});
  s.out = strided_tensor(buffer, dtype::bf16, gpu, {16, 32, 128});
  s.k_extend = strided_tensor(buffer, dtype::bf16, gpu, {16, 8, 128});
  s.v_extend = strided_tensor(buffer, dtype::bf16, gpu, {16, 8, 128});
  s.k_buffer = strided_tensor(buffer, dtype::e4m3, gpu, {1000, 8, 128});
  s.v_buffer = strided_tensor(buffer, dtype::u8, gpu, {1000, 8, 128});
  s.qo_indptr = strided_tensor(buffer + 64, dtype::i64, gpu, {3});
  s.kv_indptr = strided_tensor(buffer + 64, dtype::i32, gpu, {3});
  s.kv_indices = strided_tensor(buffer + 64, dtype::i64, gpu, {100});
  s.k_scale = strided_tensor(buffer + 64, dtype::f32, gpu, {});
  s.v_scale = strided_tensor(buffer + 64, dtype::f32, gpu, {1});
  s.slices = 2, s.workspace = buffer, s.workspace_bytes = extend::workspace_bytes;
  return s;
}
}  // namespace

TEST_CASE("GQA4 extend: a well-formed call is admitted; each field refuses on its own") {
  CHECK(extend::admits(good_extend(attention_phase::extend, 12)).admitted());
  CHECK(extend::admits(good_extend(attention_phase::extend, 1)).admitted());
  auto with = [](auto change) {
    attention_signature s = good_extend(attention_phase::extend, 12);
    change(s);
    return refused_field<extend>(s);
  };
  CHECK(with([](auto& s) { s.phase = attention_phase::decode; }) == "phase");
  CHECK(with([](auto& s) { s.tq = 13; }) == "tq");
  CHECK(with([](auto& s) { s.tq = 0; }) == "tq");
  CHECK(with([](auto& s) { s.softmax_scale = 0.0625f; }) == "softmax_scale");
  CHECK(with([](auto& s) { s.q = strided_tensor(buffer, dtype::bf16, gpu, {16, 16, 256}); }) == "q");  // GQA8 heads
  CHECK(with([](auto& s) { s.q.shape[0] = 1; }) == "q");  // fewer tokens than requests
  CHECK(with([](auto& s) { s.out.shape[0] = 15; }) == "out");
  CHECK(with([](auto& s) { s.k_extend = {}; }) == "k_extend");
  CHECK(with([](auto& s) { s.k_extend.type = dtype::e4m3; }) == "k_extend");
  CHECK(with([](auto& s) { s.v_extend.shape[0] = 15; }) == "v_extend");
  CHECK(with([](auto& s) { s.v_extend.data = buffer + 2; }) == "v_extend");
  CHECK(with([](auto& s) { s.k_buffer = strided_tensor(buffer, dtype::e4m3, gpu, {1000, 2, 256}); }) == "k_buffer");
  CHECK(with([](auto& s) { s.v_buffer.shape[0] = 999; }) == "v_buffer");
  CHECK(with([](auto& s) { s.kv_indptr.shape[0] = 2; }) == "kv_indptr");
  CHECK(with([](auto& s) { s.slices = 1; }) == "slices");  // the prefix state always goes through the workspace
  CHECK(with([](auto& s) { s.slices = 65; }) == "slices");
  CHECK(with([](auto& s) { s.workspace = nullptr; }) == "workspace");
  CHECK(with([](auto& s) { s.workspace_bytes = extend::workspace_bytes - 1; }) == "workspace_bytes");
  CHECK(extend::slices_for(64, 132) == 2);
  CHECK(extend::slices_for(16, 132) == 2);
  CHECK(extend::slices_for(1, 132) == 33);
  for (u32 b = 1; b <= 64; ++b) CHECK(b * extend::slices_for(b, 132) <= extend::split_capacity);
}

TEST_CASE("graph phase is a dispatch dimension: a piecewise-prefill call of <= 16 tokens is not an extension") {
  // The article's call: piecewise prefill of a 12-token chunk over a cached prefix, GQA4 heads. By
  // shape (M = 12 <= 16, the same heads, pools and extension tensors) it is exactly an extend call.
  attention_signature prefill = good_extend(attention_phase::prefill, 12);
  auto broad_predicate = [](const attention_signature& s) { return s.tq <= 16 && s.q.shape[1] == 32 && s.q.shape[2] == 128; };
  CHECK(broad_predicate(prefill));
  // The extend contract refuses it by phase, naming the phase...
  const decision d = extend::admits(prefill);
  CHECK(std::string(d.admitted() ? "" : d.field) == "phase");
  CHECK(to_string(d) == "refused at field 'phase': requires extend, got prefill");
  // ...no extend tactic takes it, and it is inside no tactic's promoted domain: the call falls back.
  CHECK(first_admitting(tactics::attention_gqa4_extend, prefill) == -1);
  bool in_domain = false;
  boost::hana::for_each(tactics::attention_gqa4_extend,
                        [&](auto t) { in_domain |= tactic_traits<typename decltype(t)::type>::in_promoted_domain(prefill); });
  CHECK_FALSE(in_domain);
  // The same call in the extend phase is taken by the sm90a warpgroup form (index 3: 3 stages at
  // B = 2; 0 and 1 are gfx950's, 2 the 6-stage form of B = 1), and one request by index 2.
  attention_signature e = prefill;
  e.phase = attention_phase::extend;
  CHECK(first_admitting(tactics::attention_gqa4_extend, e) == 3);
  attention_signature one = e;
  one.qo_indptr.shape[0] = one.kv_indptr.shape[0] = 2;
  CHECK(first_admitting(tactics::attention_gqa4_extend, one) == 2);
  // Neither GQA8 list takes an extend call, nor the extend list a decode or verify call.
  CHECK(first_admitting(tactics::attention_gqa8, e) == -1);
  CHECK(first_admitting(tactics::attention_gqa4_extend, good_extend(attention_phase::verify, 12)) == -1);
  CHECK(first_admitting(tactics::attention_gqa4_extend, good_extend(attention_phase::decode, 1)) == -1);
}
