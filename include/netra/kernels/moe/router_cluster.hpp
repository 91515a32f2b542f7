// netra/kernels/moe/router_cluster.hpp — the one kernel of a contracts::moe_router with Cluster 16
// (exact_fp32, targets with workgroup clusters: sm90a), and the router family's kernel lists.
//
// Contract: route slots 0..7 (+ slot 8 with SharedGate) bitwise as the two-kernel mapping writes
// them (contracts/moe/router.hpp): the same G_g, added in the same order, routed by the same
// lane code. Mapping: grid (16, ceil(M / 4)), clusters of 16 workgroups along x: cluster y owns
// tokens 4y .. 4y + 3 (n of them below M). Workgroup c (its rank) owns experts 16c .. 16c + 15:
//   waves 0..15: wave w is the logits kernel's 32-lane group for K group w % 8 of expert tile
//     2c + w / 8 (its loads, fma chains and reduce-scatter), storing G_g into LDS sums[g][t][e];
//   after a workgroup barrier wave 0 adds G_0 .. G_7 in order (lane i < 16: token i / 4,
//     experts 4 (i % 4) .. + 3) and pushes the 16-byte result into workgroup t's `logits` (st.async,
//     counted on its mbarrier `arrived`, which workgroup t set up to expect 1 KiB before the
//     cluster barrier that every push waits behind);
//   workgroup t < n: wave 0 waits for its 256 logits, then routes token 4y + t (lane l: experts
//     8l .. 8l + 7, moe_router_route_kernel::route); SharedGate: wave 1, after its G_g, computes
//     the token's gate (shared_gate_lane, its operands asked into L2 at the start) and writes
//     slot 8. (16 waves, not a 17th for the gate: 17 put 5 warps on one of the SM's 4 register
//     partitions, which caps a thread at 96 registers — ptxas spilled.)
// Before its wait the workgroup puts its 16 weight rows (64 KiB, contiguous: no netra kernel
// writes them) into dynamic LDS by one bulk copy and asks L2 for its hidden rows and the gate
// weight; then it releases its successor and waits for its predecessor (programmatic dependent
// launch) before the first load; its lanes then load only hidden vectors and read their 8 weight
// vectors from LDS. Every wave waits on the rows' mbarrier only after the post-load workgroup
// barrier, which orders wave 0's init before the first poll (docs/target-notes.md §9).
// A workgroup exits once its pushes are issued; a receiver only after its bytes landed.
#pragma once
#include "netra/dsl/cluster.hpp"
#include "netra/kernels/moe/router.hpp"

namespace netra::kernels {

template <class Contract> struct moe_router_cluster_kernel {
  using target = typename Contract::target;
  using logits = moe_router_logits_kernel<Contract>;  // its exact_fp32 lane code
  using route_part = moe_router_route_kernel<Contract>;  // its route()
  using gate_part = shared_gate_lane<target>;
  static_assert(Contract::cluster == 16 && Contract::exact, "netra::kernels::moe_router_cluster: the mapping is 16 workgroups, exact_fp32");
  static_assert(target::has_clusters && target::has_bulk_copy, "netra::kernels::moe_router_cluster: the target has no workgroup clusters");
  static constexpr const char* symbol = "netra_moe_router";
  static constexpr u32 cluster_size = Contract::cluster;
  static constexpr u32 workgroup_size = Contract::cluster_workgroup_size;
  static constexpr bool programmatic_dependent_launch = true;
  static constexpr u32 group = 32;
  static constexpr u32 experts = Contract::cluster_experts;       // 16 per workgroup
  static constexpr u32 waves = workgroup_size / group;             // 16
  static constexpr u32 gate_wave = 1;
  static constexpr u32 T = Contract::cluster_token_tile;           // 4 tokens per cluster
  static constexpr u32 G = Contract::k_splits;                     // 8 K groups
  static constexpr u32 pushers = T * experts / 4;                   // lanes of wave 0 that push (16 bytes each)
  static_assert(pushers <= group, "netra::kernels::moe_router_cluster: wave 0 pushes one 16-byte vector per lane");
  static_assert(T <= cluster_size, "netra::kernels::moe_router_cluster: one routing workgroup per token of the tile");

  struct params {
    const u16* hidden;        // BF16 [tokens, hidden_stride]
    i64 hidden_stride;        // elements
    const u16* weight;        // BF16 [256, 2048]
    i32* ids;                 // int32 [tokens, 9]
    float* weights;           // FP32 [tokens, 9]
    u32 tokens;
    const u16* gate_weight;   // SharedGate: BF16 [2048]
  };

  /// The workgroup's 16 weight rows, staged into dynamic LDS before the wait.
  static constexpr u32 dynamic_lds_bytes = Contract::cluster_staged_weight_bytes;
  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{cluster_size, ceil_div(tokens, T), 1}, workgroup_size, dynamic_lds_bytes};
  }
  /// Expert tile and K group of logits wave w of workgroup c.
  NETRA_HOST_DEVICE static constexpr u32 expert_tile_of(u32 c, u32 w) { return (experts / 8) * c + w / G; }
  NETRA_HOST_DEVICE static constexpr u32 k_group_of(u32 w) { return w % G; }
  /// Wave 0's push: lane i sends token i / 4's logits of experts 16c + 4 (i % 4) .. + 3.
  NETRA_HOST_DEVICE static constexpr u32 push_token(u32 lane) { return lane / 4; }
  NETRA_HOST_DEVICE static constexpr u32 push_first_expert(u32 c, u32 lane) { return experts * c + 4 * (lane % 4); }

  struct lds_layout {
    float sums[G][T][experts];                        // G_g of (token in tile, expert of the workgroup)
    alignas(16) float logits[Contract::experts];      // the routed token's 256 logits (pushed)
    lds_copy_barrier arrived;                         // completes when all 1 KiB have landed
    lds_copy_barrier weights_ready;                   // completes when the staged weight rows have landed
    float zero;                                       // +0.0 unknown to the compiler
  };
  /// Tokens of this workgroup's tile, and whether workgroup `rank` routes one (token t0 + rank).
  static NETRA_DEVICE u32 tile_tokens(const params& p) {
    const u32 t0 = workgroup_id<target, 1>() * T;
    return p.tokens - t0 < T ? p.tokens - t0 : T;
  }
  static NETRA_DEVICE bool routes_token(const params& p, u32 rank) { return rank < tile_tokens(p); }

  static_assert(sizeof(lds_layout) <= Contract::cluster_static_lds_bytes, "netra::kernels::moe_router_cluster: static LDS beyond the contract's cluster_static_lds_bytes");

  static NETRA_DEVICE void run(const params& p) {
    using cluster = cluster_ops<target>;
    using copy = bulk_copy_ops<target>;
    NETRA_SHARED lds_layout lds;
    NETRA_DYNAMIC_SHARED_BYTES(staged_weights);  // [experts][hidden_size] BF16: the workgroup's weight rows
    const u32 thread = thread_id<target>();
    const u32 lane = thread % group, wave = thread / group;
    const u32 t0 = workgroup_id<target, 1>() * T;
    const u32 et = expert_tile_of(cluster::rank(), wave), g = k_group_of(wave);
    if (thread == 0) {
      lds.zero = static_cast<float>(p.tokens == 0);
      if (routes_token(p, cluster::rank())) {
        copy::init(lds.arrived);
        copy::expect_bytes(lds.arrived, Contract::experts * 4);
      }
    }
    if (wave == 0) {  // the rows into LDS before the wait; every wave waits for them after a workgroup barrier
      if (lane == 0) copy::init(lds.weights_ready);
      copy::release_for_copy();
      if (lane == 0) {
        copy::expect_bytes(lds.weights_ready, dynamic_lds_bytes);
        copy::copy(staged_weights, p.weight + static_cast<u64>(experts * cluster::rank()) * Contract::hidden_size, dynamic_lds_bytes, lds.weights_ready);
      }
    }
    cluster::arrive();  // the receivers' barriers are initialised before anyone waits below
    if constexpr (target::has_l2_prefetch) {
      constexpr u32 bytes = group * 8 * 2;  // a K group's 512 bytes of one row
      if (lane < T && t0 + lane < p.tokens) prefetch_l2<target>(p.hidden + static_cast<i64>(t0 + lane) * p.hidden_stride + group * 8 * g, bytes);
      if constexpr (Contract::shared_gate)
        if (wave == gate_wave && lane == 31) prefetch_l2<target>(p.gate_weight, 2 * Contract::hidden_size);
    }
    launch_dependents<target>();
    wait_for_prerequisites<target>();
    {
      typename logits::template exact_operands<T> o;
      const u32 k0 = logits::exact_first_k(g, lane);
      logits::exact_load_hidden(o, p.hidden, p.hidden_stride, p.tokens, t0, k0);
      workgroup_barrier<target>();  // every load issued before the first use (see logits::zero_after_loads); wave 0's
                                    // init of weights_ready is seen by every wave before it waits on it
      copy::wait(lds.weights_ready, 0);
      const u8* rows = staged_weights + static_cast<u64>((et % (experts / 8)) * 8) * Contract::hidden_size * 2;
      NETRA_UNROLL
      for (u32 e = 0; e < 8; ++e) o.w[e] = *reinterpret_cast<const u32x4*>(rows + (static_cast<u64>(e) * Contract::hidden_size + k0) * 2);
      float* sums = &lds.sums[g][0][(et % (experts / 8)) * 8];  // [token - t0][expert]: rows `experts` apart
      logits::exact_passes(o, lds.zero, lane, t0, p.tokens, [&](u32 token, u32 e, float v) { sums[(token - t0) * experts + e] = v; });
    }
    workgroup_barrier<target>();  // every G_g in LDS
    cluster::wait();
    // read again here rather than kept through the sums (registers: the sums use all 128)
    const u32 c = cluster::rank();
    const u32 n = tile_tokens(p);
    const bool routes = c < n;
    if constexpr (Contract::shared_gate) {
      if (wave == gate_wave && routes) {
        gate_part part;
        part.load(p.hidden + static_cast<i64>(t0 + c) * p.hidden_stride, p.gate_weight, lane);
        const float gate = part.value();
        if (lane == 0) gate_part::store(p.ids, p.weights, t0 + c, gate);
        return;
      }
    }
    if (wave != 0) return;
    const u32 pt = push_token(lane);
    if (lane < pushers && pt < n) {
      float l[4];
NETRA_UNROLL
      for (u32 k = 0; k < G; ++k) {
        const u32x4 v = *reinterpret_cast<const u32x4*>(&lds.sums[k][pt][4 * (lane % 4)]);
NETRA_UNROLL
        for (u32 j = 0; j < 4; ++j) l[j] = k == 0 ? bit_cast<float>(v[j]) : add_rn(l[j], bit_cast<float>(v[j]));
      }
      cluster::push_16B(&lds.logits[push_first_expert(c, lane)], pt, u32x4{bit_cast<u32>(l[0]), bit_cast<u32>(l[1]), bit_cast<u32>(l[2]), bit_cast<u32>(l[3])},
                        lds.arrived);
    }
    if (!routes) return;
    copy::wait(lds.arrived, 0);
    float l[8];
    const u32x4 a = *reinterpret_cast<const u32x4*>(&lds.logits[8 * lane]), b = *reinterpret_cast<const u32x4*>(&lds.logits[8 * lane + 4]);
NETRA_UNROLL
    for (u32 j = 0; j < 4; ++j) l[j] = bit_cast<float>(a[j]), l[4 + j] = bit_cast<float>(b[j]);
    route_part::route(p.ids, p.weights, t0 + c, lane, l);
  }
};

/// The router family's kernels, in launch order: Cluster 0 the logits and route kernels, Cluster
/// 16 the one cluster kernel.
template <class Target, u32 Tactic, u32 MaxTokens, u32 SharedGate, u32 Cluster, u32 WaveSize>
struct kernels_of<contracts::moe_router<Target, Tactic, MaxTokens, SharedGate, Cluster, WaveSize>> {
  using contract = contracts::moe_router<Target, Tactic, MaxTokens, SharedGate, Cluster, WaveSize>;
  using type = conditional_t<Cluster == 0, type_list<moe_router_logits_kernel<contract>, moe_router_route_kernel<contract>>,
                             type_list<moe_router_cluster_kernel<contract>>>;
};

}  // namespace netra::kernels
