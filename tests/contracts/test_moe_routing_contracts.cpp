// The routing contracts: derived constants, run-time admission (the first refusing field, in
// order) and instance names; the route layout both MoE helpers share.
#include <doctest/doctest.h>

#include <boost/hana.hpp>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "netra/contracts/moe/act_quant.hpp"
#include "netra/contracts/moe/route_layout.hpp"
#include "netra/contracts/moe/router.hpp"
#include "netra/contracts/moe/shared_gate.hpp"
#include "netra/kernels/moe/router_cluster.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/kernel_traits.hpp"
#include "netra/runtime/tactics/moe_grouped.hpp"
#include "netra/runtime/tactics/moe_routing.hpp"

using namespace netra;

namespace {
alignas(16) unsigned char storage[4096];
constexpr device_ref gpu{2, 0};  // kDLCUDA, ordinal 0
std::string field_of(const decision& d) { return d.admitted() ? "" : d.field; }

/// A compact tensor on `gpu` (its data is only an address: nothing is dereferenced).
tensor_arg tensor(const void* data, dtype type, std::initializer_list<i64> extents) {
  tensor_arg t;
  t.data = data;
  t.type = type;
  t.device = gpu;
  t.rank = static_cast<i32>(extents.size());
  int i = 0;
  for (const i64 e : extents) t.shape[i++] = e;
  i64 compact = 1;
  for (i = t.rank - 1; i >= 0; --i) {
    t.strides[i] = compact;
    compact *= t.shape[i];
  }
  return t;
}

/// A routing call (router or shared gate) that its contract admits, on `target`.
template <class Signature> Signature good_routing_call(target_id target, long tokens) {
  Signature s{};
  s.target = target;
  s.device = gpu;
  s.hidden = tensor(storage, dtype::bf16, {tokens, 2048});
  if constexpr (std::is_same_v<Signature, moe_shared_gate_signature>) s.gate_weight = tensor(storage + 16, dtype::bf16, {2048});
  else s.gate_weight = tensor(storage + 16, dtype::bf16, {256, 2048});
  s.ids = tensor(storage + 32, dtype::i32, {tokens, 9});
  s.weights = tensor(storage + 36, dtype::f32, {tokens, 9});
  return s;
}

/// The refusals every routing call shares (contracts/moe/routing_call.hpp), one field at a time
/// from `good()` (at least 2 tokens), which C admits: each names its field.
template <class C, class Good> void check_routing_call_refusals(Good good, target_id other_target, long too_many_tokens) {
  CHECK(C::admits(good()).admitted());
  auto refused = [&](auto change) {
    auto s = good();
    change(s);
    return field_of(C::admits(s));
  };
  CHECK(refused([&](auto& s) { s.target = other_target; }) == "target");
  CHECK(refused([](auto& s) { s.hidden.type = dtype::f16; }) == "hidden_states");
  CHECK(refused([](auto& s) { s.gate_weight.type = dtype::e4m3; }) == "gate_weight");
  CHECK(refused([](auto& s) { s.ids.type = dtype::i64; }) == "route_ids");
  CHECK(refused([](auto& s) { s.weights.type = dtype::bf16; }) == "route_weights");
  CHECK(refused([](auto& s) { s.hidden.device = {1, 0}; }) == "hidden_states");
  CHECK(refused([](auto& s) { s.weights.device = {2, 1}; }) == "route_weights");
  for (long size : {2047L, 4096L}) CHECK(refused([&](auto& s) { s.hidden.shape[1] = size; }) == "hidden_size");
  for (long m : {0L, too_many_tokens}) CHECK(refused([&](auto& s) { s.hidden.shape[0] = m; }) == "tokens");
  for (long stride : {2044L, 2049L}) CHECK(refused([&](auto& s) { s.hidden.strides[0] = stride; }) == "hidden_stride");
  CHECK(refused([](auto& s) { s.hidden.strides[1] = 2; }) == "hidden_states");  // elements of a row not contiguous
  CHECK(refused([](auto& s) { s.hidden.data = storage + 8; }) == "hidden_states");
  for (const void* p : {static_cast<const void*>(nullptr), static_cast<const void*>(storage + 2)})
    CHECK(refused([&](auto& s) { s.gate_weight.data = p; }) == "gate_weight");
  CHECK(refused([](auto& s) { s.gate_weight.rank = -1; }) == "gate_weight");
  CHECK(refused([](auto& s) { s.ids.data = storage + 2; }) == "route_ids");
  CHECK(refused([](auto& s) { s.ids.shape[0] -= 1; }) == "route_ids");  // smaller than the call needs
  CHECK(refused([](auto& s) { s.weights.shape[1] = 8; }) == "route_weights");
  for (const void* p : {static_cast<const void*>(nullptr), static_cast<const void*>(storage + 1)})
    CHECK(refused([&](auto& s) { s.weights.data = p; }) == "route_weights");
  auto s = good();
  s.ids.shape[1] = 8;
  CHECK(to_string(C::admits(s)) == "refused at field 'route_ids': requires shape [tokens, 9] = [" + std::to_string(s.hidden.shape[0]) +
                                       ", 9], got shape [" + std::to_string(s.hidden.shape[0]) + ", 8]");
  s = good();
  s.target = other_target;
  CHECK(to_string(C::admits(s)).ends_with(std::string("got ") + target_name(other_target)));  // a target, never a number
}
}  // namespace

TEST_CASE("route layout: slot s of token t at t * 9 + s; slot 8 is the shared expert") {
  using L = moe::route_layout;
  CHECK(L::slots == 9);
  CHECK(L::top_k == 8);
  CHECK(L::shared_slot == 8);
  CHECK(L::shared_expert_id == 256);
  CHECK(L::index(0, 0) == 0);
  CHECK(L::index(3, 8) == 35);
  CHECK(L::token_of(35) == 3);
  CHECK(L::slot_of(35) == 8);
  CHECK(L::routes(512) == 4608);
}

TEST_CASE("act_quant contracts: mappings and constants") {
  using d950 = contracts::moe_act_quant_decode<gfx950>;
  using d90 = contracts::moe_act_quant_decode<sm90a>;
  using b950 = contracts::moe_act_quant_batch<gfx950>;
  using b90 = contracts::moe_act_quant_batch<sm90a>;
  CHECK(d950::workgroup_size == 64);  // one wave64 per row
  CHECK(d90::workgroup_size == 64);   // two warps per row
  CHECK(b950::workgroup_size == 256);
  CHECK(b950::lanes_per_row == 64);
  CHECK(b90::lanes_per_row == 64);  // two warps per row (measured fastest on the H200)
  CHECK(b90::workgroup_size == 256);
  CHECK(b90::max_rows == 4608);
  CHECK(d950::max_rows == 9);
  CHECK(d950::workspace_bytes == 0);
  CHECK(instance_name<d950>() == "moe-act-quant-gfx950-9-1-1");
  CHECK(contract_spelling<b90>() == "netra::contracts::moe_act_quant<netra::sm90a, 4608, 1, 4>");
  // The decode block's act_quant calls (9 M rows, M <= 16) release the down kernel at once, so its
  // prologue overlaps them; larger calls release after their stores.
  CHECK(b90::release_at_start_max_rows == 9 * 16);
  CHECK(d90::release_at_start_max_rows >= d90::max_rows);
}

TEST_CASE("act_quant admits the reference call and refuses each field by name") {
  using C = contracts::moe_act_quant_batch<sm90a>;
  auto good = [] {
    moe_act_quant_signature s{};
    s.target = target_id::sm90a;
    s.device = gpu;
    s.in = tensor(storage, dtype::bf16, {4608, 1024});
    s.out = tensor(storage + 1024, dtype::e4m3, {4608, 512});
    s.scales = tensor(storage + 2048, dtype::f32, {4608, 4});
    return s;
  };
  CHECK(C::admits(good()).admitted());
  auto s = good();
  s.target = target_id::gfx950;
  CHECK(to_string(C::admits(s)) == "refused at field 'target': requires sm90a, got gfx950");
  s = good();
  s.in.type = dtype::f16;
  CHECK(to_string(C::admits(s)) == "refused at field 'in': requires bfloat16, got float16");
  s = good();
  s.out.type = dtype::e5m2;
  CHECK(to_string(C::admits(s)) == "refused at field 'out': requires float8_e4m3fn, got float8_e5m2");
  s = good();
  s.out.type = dtype::u8;  // uint8 holding E4M3 bytes
  CHECK(C::admits(s).admitted());
  s = good();
  s.scales.type = dtype::bf16;
  CHECK(field_of(C::admits(s)) == "scales");
  s = good();
  s.in.shape[1] = 512;
  CHECK(field_of(C::admits(s)) == "cols");
  for (long rows : {0L, -1L, 4609L}) {
    s = good();
    s.in.shape[0] = rows;
    CHECK(field_of(C::admits(s)) == "rows");
  }
  for (long stride : {1016L, 1028L}) {
    s = good();
    s.in.strides[0] = stride;
    CHECK(field_of(C::admits(s)) == "row_stride");
  }
  s = good();
  s.in.data = storage + 8;
  CHECK(field_of(C::admits(s)) == "in");
  s = good();
  s.out.data = nullptr;
  CHECK(field_of(C::admits(s)) == "out");
  s = good();
  s.out.shape[0] = 2304;  // half the rows the call needs
  CHECK(to_string(C::admits(s)) == "refused at field 'out': requires shape [rows, 512] = [4608, 512], got shape [2304, 512]");
  s = good();
  s.scales.shape[1] = 2;
  CHECK(field_of(C::admits(s)) == "scales");
  s = good();
  s.scales.data = storage + 4;
  CHECK(field_of(C::admits(s)) == "scales");
  // the first refusing field wins
  s = good();
  s.in.shape[0] = 0;
  s.out.data = nullptr;
  CHECK(field_of(C::admits(s)) == "rows");
  CHECK(to_string(C::admits(s)).find("rows") != std::string::npos);
  using D = contracts::moe_act_quant_decode<sm90a>;
  s = good();
  s.in.shape[0] = s.out.shape[0] = s.scales.shape[0] = 10;
  CHECK(field_of(D::admits(s)) == "rows");
  s.in.shape[0] = s.out.shape[0] = s.scales.shape[0] = 9;
  CHECK(D::admits(s).admitted());
}

TEST_CASE("router contracts: tiles, workspace layout and grid") {
  using E = contracts::moe_router<sm90a, router_tactic::exact_fp32, 32>;  // the two-kernel mapping
  using M = contracts::moe_router_matrix<gfx950>;
  CHECK(E::token_tile == 8);
  CHECK(E::expert_tile == 8);
  CHECK(E::expert_tiles == 32);
  CHECK(E::k_splits == 8);  // one partial per K group (G_0 .. G_7), added in order by the route kernel
  CHECK(E::max_token_tiles == 4);
  CHECK(E::partials_bytes == 8u * 32u * 256u * 4u);
  CHECK(E::workspace_bytes == E::partials_bytes);
  CHECK(E::workgroup_size == 64);
  CHECK(E::lds_bytes == 16u);
  CHECK(M::token_tile == 16);
  CHECK(M::expert_tiles == 4);
  CHECK(M::k_splits == 4);
  CHECK(M::partials_bytes == 4u * 128u * 256u * 4u);
  CHECK(M::workspace_bytes % 16 == 0);
  CHECK(M::lds_bytes == 4u * 16u * 64u * 4u + 16u);
  CHECK(M::matrix_tile_stride == 64);
  CHECK(contracts::moe_router_matrix<sm90a>::matrix_tile_stride == 72);  // padded rows: no LDS bank conflicts
  CHECK(contracts::moe_router_matrix<sm90a>::lds_bytes == 8u * 16u * 72u * 4u + 16u);
  // grids: the exact logits kernel spreads the weight over 128 workgroups at any M; one route
  // group per token
  using EL = kernels::moe_router_logits_kernel<E>;
  using ER = kernels::moe_router_route_kernel<E>;
  CHECK(EL::shape(1).grid[0] == 128);
  CHECK(EL::shape(1).grid[1] == 1);
  CHECK(EL::shape(32).grid[1] == 4);
  CHECK(ER::shape(1).grid[0] == 1);
  CHECK(ER::shape(32).grid[0] == 16);
  CHECK(kernels::moe_router_logits_kernel<M>::shape(128).grid[0] == 16);
  CHECK(kernels::moe_router_logits_kernel<M>::shape(128).grid[1] == 8);
  // every (K group, expert) of the exact tactic is owned by exactly one group of one workgroup
  int owners[8][256] = {};
  for (u32 x = 0; x < 128; ++x)
    for (u32 grp = 0; grp < EL::groups; ++grp)
      for (u32 lane = 0; lane < 32; ++lane) ++owners[EL::exact_k_group(x, grp)][EL::exact_expert_tile(x) * 8 + EL::exact_expert_of(lane)];
  for (auto& g : owners)
    for (int c : g) CHECK(c == 4);  // 4 lanes (tokens of the chunk) per (group, expert)
  CHECK(instance_name<E>() == "moe-router-sm90a-0-32");
  CHECK(contract_spelling<M>() == "netra::contracts::moe_router<netra::gfx950, 1, 128>");
}

TEST_CASE("router admits the reference call and refuses each field by name") {
  using C = contracts::moe_router_matrix<sm90a>;
  auto good = [] {
    auto s = good_routing_call<moe_router_signature>(target_id::sm90a, 128);
    s.workspace = storage + 64;
    s.workspace_bytes = C::workspace_bytes;
    return s;
  };
  check_routing_call_refusals<C>(good, target_id::gfx950, 129);
  auto s = good();
  s.gate_weight.shape[0] = 128;
  CHECK(field_of(C::admits(s)) == "experts");
  s = good();
  s.workspace = storage + 4;
  CHECK(field_of(C::admits(s)) == "workspace");
  s = good();
  s.workspace_bytes = C::workspace_bytes - 16;
  CHECK(field_of(C::admits(s)) == "workspace_bytes");
  CHECK(refusal_status(C::admits(s)) == status::workspace_too_small);
  using E = contracts::moe_router<sm90a, router_tactic::exact_fp32, 32>;
  s = good_routing_call<moe_router_signature>(target_id::sm90a, 33);
  s.workspace = storage + 64;
  s.workspace_bytes = E::workspace_bytes;
  CHECK(field_of(E::admits(s)) == "tokens");
  s = good_routing_call<moe_router_signature>(target_id::sm90a, 32);
  s.workspace = storage + 64;
  s.workspace_bytes = E::workspace_bytes;
  CHECK(E::admits(s).admitted());
}

TEST_CASE("the decode block's router appends the shared gate: names, route workgroup, shared_gate_weight refused by name") {
  using G = contracts::moe_router<sm90a, router_tactic::exact_fp32, 16, 1>;  // the two-kernel mapping
  using E = contracts::moe_router_exact<sm90a>;
  CHECK(G::shared_gate);
  CHECK_FALSE(E::shared_gate);
  CHECK(instance_name<G>() == "moe-router-sm90a-0-16-1");
  CHECK(instance_name<E>() == "moe-router-sm90a-0-32");  // SharedGate 0 keeps the name
  CHECK(contract_spelling<G>() == "netra::contracts::moe_router<netra::sm90a, 0, 16, 1>");
  CHECK(contract_spelling<contracts::moe_router_exact_shared_gate<gfx950>>() == "netra::contracts::moe_router<netra::gfx950, 0, 16, 1>");
  // route kernel: 2 routing groups, then the same 2 tokens' gate groups (whole waves on gfx950)
  using R = kernels::moe_router_route_kernel<G>;
  CHECK(G::route_workgroup_size == 128);
  CHECK(E::route_workgroup_size == 64);
  CHECK(R::shape(3).grid[0] == 2);
  for (u32 grp = 0; grp < 4; ++grp) {
    CHECK(R::token_of(5, grp) == 10 + grp % 2);
    CHECK(R::gates(grp) == (grp >= 2));
  }
  CHECK(contracts::moe_router_exact_shared_gate<gfx950>::route_workgroup_size % 64 == 0);
  auto good = [] {
    auto s = good_routing_call<moe_router_signature>(target_id::sm90a, 16);
    s.workspace = storage + 64;
    s.workspace_bytes = G::workspace_bytes;
    s.shared_gate_weight = tensor(storage + 32, dtype::bf16, {2048});
    return s;
  };
  CHECK(G::admits(good()).admitted());
  auto s = good();
  s.shared_gate_weight = {};
  CHECK(to_string(G::admits(s)) == "refused at field 'shared_gate_weight': requires a tensor, got NULL");
  s.workspace_bytes = E::workspace_bytes;
  CHECK(E::admits(s).admitted());  // the plain router never reads it
  s.workspace_bytes = G::workspace_bytes;
  s.shared_gate_weight = tensor(storage + 34, dtype::bf16, {2048});
  CHECK(field_of(G::admits(s)) == "shared_gate_weight");
  s.shared_gate_weight = tensor(storage + 32, dtype::bf16, {1024});
  CHECK(field_of(G::admits(s)) == "shared_gate_weight");
  s = good();
  s.hidden.shape[0] = 17;
  CHECK(field_of(G::admits(s)) == "tokens");  // the routing-call fields come first
}

TEST_CASE("the block's router list serves every M in 1..768 on both targets: exact 1..16, matrix with the shared gate 17..768") {
  using G = contracts::moe_router_matrix_shared_gate<sm90a>;
  CHECK(G::shared_gate);
  CHECK_FALSE(G::exact);
  CHECK(G::max_tokens == 768);
  CHECK(G::workspace_bytes == 4u * 768u * 256u * 4u);  // the K-split partials of 768 tokens: 3 MiB
  CHECK(instance_name<G>() == "moe-router-sm90a-1-768-1");
  CHECK(kernels::moe_router_logits_kernel<G>::shape(768).grid[1] == 48);
  CHECK(kernels::moe_router_route_kernel<G>::shape(767).grid[0] == 384);
  for (const target_id target : {target_id::gfx950, target_id::sm90a})
    for (long m = 1; m <= 769; ++m) {
      auto s = good_routing_call<moe_router_signature>(target, m);
      s.workspace = storage + 64;
      s.workspace_bytes = G::workspace_bytes;
      s.shared_gate_weight = tensor(storage + 32, dtype::bf16, {2048});
      // the first tactic of the list whose domain holds the call, and whether its contract admits it
      long first = -1, index = 0;
      bool admitted = false, exact = false;
      boost::hana::for_each(tactics::moe_block_router, [&](auto t) {
        using T = typename decltype(t)::type;
        if (first < 0 && T::domain::contains(s)) {
          first = index;
          admitted = T::contract::admits(s).admitted();
          exact = T::contract::exact;
        }
        ++index;
      });
      INFO("target ", target_name(target), " tokens ", m);
      if (m == 769) {
        CHECK(first == -1);  // beyond the envelope: no tactic (the caller's own path)
        continue;
      }
      CHECK(first >= 0);
      CHECK(admitted);
      CHECK(exact == (m <= 16));
      // the experts after the router: the decode kernels up to 16 tokens, the grouped configurations above
      if (m >= tactics::grouped_min_tokens)
        CHECK(std::string(target == target_id::sm90a ? tactics::grouped_configuration<sm90a>(m) : tactics::grouped_configuration<gfx950>(m)) != "");
    }
  auto s = good_routing_call<moe_router_signature>(target_id::sm90a, 769);
  s.workspace = storage + 64;
  s.workspace_bytes = G::workspace_bytes;
  s.shared_gate_weight = tensor(storage + 32, dtype::bf16, {2048});
  CHECK(field_of(G::admits(s)) == "tokens");
  s.hidden.shape[0] = 768;
  s.ids.shape[0] = s.weights.shape[0] = 768;
  s.workspace_bytes = G::workspace_bytes - 16;
  CHECK(field_of(G::admits(s)) == "workspace_bytes");
}

TEST_CASE("the cluster router (Cluster 16): names, no workspace, every (K group, expert) owned once, every routed token's logits pushed once") {
  using C = contracts::moe_router<sm90a, router_tactic::exact_fp32, 32, 0, 16>;
  using G = contracts::moe_router_exact_shared_gate<sm90a>;
  using K = kernels::moe_router_cluster_kernel<C>;
  static_assert(G::cluster == 16, "sm90a's block router is the cluster kernel");
  static_assert(contracts::moe_router_exact_shared_gate<gfx950>::cluster == 0, "gfx950 has no clusters: two kernels");
  static_assert(contracts::moe_router_exact<sm90a>::cluster == 0, "the standalone decode router stays two kernels (measured)");
  CHECK(std::string(C::family) == "moe_router_cluster");
  CHECK(instance_name<C>() == "moe-router-cluster-sm90a-0-32-0-16");
  CHECK(instance_name<G>() == "moe-router-cluster-sm90a-0-16-1-16");
  CHECK(contract_spelling<G>() == "netra::contracts::moe_router<netra::sm90a, 0, 16, 1, 16>");
  CHECK(instance_name<contracts::moe_router_exact_shared_gate<gfx950>>() == "moe-router-gfx950-0-16-1");
  CHECK(C::workspace_bytes == 0);
  CHECK(K::workgroup_size == 512);
  CHECK(K::cluster_size == 16);
  CHECK(cluster_size_of<K>() == 16);
  CHECK(K::shape(1).grid[0] == 16);
  CHECK(K::shape(1).grid[1] == 1);
  CHECK(K::shape(32).grid[1] == 8);
  CHECK(K::shape(5).grid[1] == 2);
  // the logits: (K group, expert) -> exactly one wave of one workgroup, 32 lanes (slices) each
  int owners[8][256] = {};
  for (u32 c = 0; c < K::cluster_size; ++c)
    for (u32 w = 0; w < K::waves; ++w)
      for (u32 e = 0; e < 8; ++e) ++owners[K::k_group_of(w)][K::expert_tile_of(c, w) * 8 + e];
  for (auto& g : owners)
    for (int n : g) CHECK(n == 1);
  // the pushes: token t of a tile receives each of its 256 logits once, in 16-byte pieces, 1 KiB
  // in all (the bytes its mbarrier expects)
  for (u32 t = 0; t < K::T; ++t) {
    int received[256] = {};
    u32 bytes = 0;
    for (u32 c = 0; c < K::cluster_size; ++c)
      for (u32 lane = 0; lane < K::pushers; ++lane)
        if (K::push_token(lane) == t) {
          for (u32 j = 0; j < 4; ++j) ++received[K::push_first_expert(c, lane) + j];
          bytes += 16;
          CHECK(K::push_first_expert(c, lane) % 4 == 0);  // 16-byte aligned in the receiver's logits
        }
    for (int n : received) CHECK(n == 1);
    CHECK(bytes == C::experts * 4);
  }
  CHECK(sizeof(typename K::lds_layout) <= C::lds_bytes);
  // admitted without a workspace (it has none); the gate weight still refused by name
  auto s = good_routing_call<moe_router_signature>(target_id::sm90a, 16);
  CHECK(C::admits(s).admitted());
  CHECK(field_of(G::admits(s)) == "shared_gate_weight");
  s.shared_gate_weight = tensor(storage + 32, dtype::bf16, {2048});
  CHECK(G::admits(s).admitted());
}

TEST_CASE("shared gate admits the reference call and refuses each field by name") {
  using C = contracts::moe_shared_gate_reference<gfx950>;
  CHECK(C::workgroup_size == 64);
  CHECK(C::k_per_thread == 64);
  CHECK(instance_name<C>() == "moe-shared-gate-gfx950-512-2");
  check_routing_call_refusals<C>([] { return good_routing_call<moe_shared_gate_signature>(target_id::gfx950, 2); }, target_id::sm90a, 513);
}
