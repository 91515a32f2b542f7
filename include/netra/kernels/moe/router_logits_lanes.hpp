// netra/kernels/moe/router_logits_lanes.hpp — the router's logits kernel (router_logits.hpp):
// its launch shape, the workspace layout (router_partial_index), and the exact_fp32 tactic's
// lane code, which the cluster kernel (router_cluster.hpp) shares.
//   exact_fp32: grid (128, ceil(M / 8)), 64 threads = 2 groups of 32 lanes. Workgroup (x, y) owns
//     expert tile x / 4 (8 experts) and tokens 8y .. 8y + 7; its group j owns K group
//     g = 2 (x % 4) + j (k = 256g .. 256g + 255). Lane l owns slice 32g + l (k = 8 (32g + l) ..
//     + 7): 8 weight + up to 8 hidden 16-byte loads, all issued before the first use; per 4 tokens
//     32 chains of 8 exact-product fmas (value 8t + e), a 32-lane reduce-scatter (xor 16 .. 1: the
//     halving tree) leaves G_g of (token l / 8, expert l % 8) in lane l, which stores it at
//     partials[g][token][expert]; with Contract::exact_one_token_passes a tile of one token takes
//     one 8-value pass instead (lanes 4e .. 4e + 3 end with expert e; exact_passes). The bits do
//     not depend on the pass size. No LDS but the +0.0 slot, one barrier.
#pragma once
#include "netra/contracts/moe/router.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/float_ops.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/prefetch.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/workgroup_barrier.hpp"

namespace netra::kernels {

/// Index of the partial logit (split, token, expert) in the workspace.
template <class Contract> NETRA_HOST_DEVICE constexpr u64 router_partial_index(u32 split, u32 token, u32 expert) {
  return (static_cast<u64>(split) * Contract::padded_tokens + token) * Contract::experts + expert;
}

template <class Contract> struct router_logits_lanes {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_moe_router_logits";
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 group = 32;                       // lanes of one K group (exact) / reduce-scatter
  static constexpr u32 groups = workgroup_size / group;  // exact 2, matrix 8
  static constexpr u32 waves = workgroup_size / target::wave_size;
  static constexpr u32 E = Contract::experts;
  /// exact: tokens per reduce-scatter (exact_passes): 4 (8 experts x 4 tokens = 32 values per
  /// lane), or 1 (8 values) when the tile has one token (one_token_passes).
  static constexpr u32 pass_tokens = 4;
  /// 1-token passes for one-token tiles where the contract asks for them (exact_one_token_passes).
  static constexpr bool one_token_passes = Contract::exact_one_token_passes;

  struct params {
    const u16* hidden;  // BF16 [tokens, hidden_stride]
    i64 hidden_stride;  // elements
    const u16* weight;  // BF16 [256, 2048]
    float* partials;    // workspace: FP32 [k_splits][padded_tokens][256]
    u32 tokens;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    if constexpr (Contract::exact)
      return {{Contract::expert_tiles * (Contract::k_splits / groups), ceil_div(tokens, Contract::token_tile), 1}, workgroup_size, 0};
    else
      return {{Contract::expert_tiles * Contract::k_splits, ceil_div(tokens, Contract::token_tile), 1}, workgroup_size, 0};
  }
  NETRA_HOST_DEVICE static constexpr u64 partial_index(u32 split, u32 token, u32 expert) {
    return router_partial_index<Contract>(split, token, expert);
  }

  /// exact_fp32 maps: the expert tile and K group of group `grp` of workgroup x, the first k of
  /// lane `lane` of K group g, the value index of (token, expert) of a 4-token chunk, and the pair
  /// (token in the chunk, expert in the tile) lane l holds after the reduce-scatter.
  NETRA_HOST_DEVICE static constexpr u32 exact_expert_tile(u32 x) { return x / (Contract::k_splits / groups); }
  NETRA_HOST_DEVICE static constexpr u32 exact_k_group(u32 x, u32 grp) { return groups * (x % (Contract::k_splits / groups)) + grp; }
  NETRA_HOST_DEVICE static constexpr u32 exact_first_k(u32 k_group, u32 lane) { return 8 * (group * k_group + lane); }
  /// A pass of P tokens (1 or 4): a lane's 8 P values, value 8t + e for (token t of the pass,
  /// expert e); after the reduce-scatter the 32 / (8 P) lanes l with value l / (4 / P) hold it.
  NETRA_HOST_DEVICE static constexpr u32 exact_value(u32 token, u32 expert) { return 8 * token + expert; }
  template <u32 P = pass_tokens> NETRA_HOST_DEVICE static constexpr u32 exact_token_of(u32 lane) { return lane / (4 / P) / 8; }
  template <u32 P = pass_tokens> NETRA_HOST_DEVICE static constexpr u32 exact_expert_of(u32 lane) { return lane / (4 / P) % 8; }
  /// The lane of each value group that stores it.
  template <u32 P = pass_tokens> NETRA_HOST_DEVICE static constexpr bool exact_stores(u32 lane) { return lane % (4 / P) == 0; }

  /// +0.0 read from LDS after a workgroup barrier that follows the operand loads: the fma / matrix
  /// chains start from it, so the compiler can neither start a chain before the barrier nor sink
  /// a (coherent) load below it: every load is in flight before the first use (one round trip).
  static NETRA_DEVICE float& zero_slot() {
    NETRA_SHARED float slot;
    return slot;
  }
  /// +0.0 as the compiler cannot know it (tokens >= 1 by admission), so it cannot fold the slot.
  static NETRA_DEVICE void clear_zero_slot(const params& p, u32 thread) {
    if (thread == 0) zero_slot() = static_cast<float>(p.tokens == 0);
  }
  template <class T> static NETRA_DEVICE float zero_after_loads() {
    workgroup_barrier<T>();
    return zero_slot();
  }

  static NETRA_DEVICE float bf16_lo(u32 w) { return bit_cast<float>(w << 16); }
  static NETRA_DEVICE float bf16_hi(u32 w) { return bit_cast<float>(w & 0xFFFF0000u); }
  static NETRA_DEVICE const u16* hidden_row(const params& p, u32 token) {
    return p.hidden + static_cast<i64>(token < p.tokens ? token : p.tokens - 1) * p.hidden_stride;
  }

  /// One stage of the 32-lane reduce-scatter of N values and the stages after it (D = 16, 8, 4,
  /// 2, 1): while a lane holds N > 1 values, lane bit D selects the half it keeps (the other half
  /// goes to lane ^ D); with one value left it adds lane ^ D's. Every value is summed over the
  /// 32 lanes pairing l with l ^ 16, then ^ 8, ^ 4, ^ 2, ^ 1: the halving tree. After the last
  /// stage v[0] of lane l holds value l / (32 / N).
  template <u32 D, u32 N> static NETRA_DEVICE void reduce_scatter(float (&v)[N], u32 lane) {
    if constexpr (N > 1) {
      const bool upper = (lane & D) != 0;
NETRA_UNROLL
      for (u32 j = 0; j < N / 2; ++j) {
        const float send = upper ? v[j] : v[j + N / 2];
        const float keep = upper ? v[j + N / 2] : v[j];
        v[j] = add_rn(keep, xor_shuffle_f32<target>(send, D));
      }
      if constexpr (D > 1) reduce_scatter<D / 2, N / 2>(reinterpret_cast<float (&)[N / 2]>(v), lane);
    } else {
      v[0] = add_rn(v[0], xor_shuffle_f32<target>(v[0], D));
      if constexpr (D > 1) reduce_scatter<D / 2, 1>(v, lane);
    }
  }

  /// exact_fp32: one lane's operands of a K group: the 16-byte vectors at k0 = exact_first_k(g,
  /// lane) of the 8 expert rows from `w0` and of tokens t0 .. t0 + Tokens - 1 (past `tokens`: 0).
  template <u32 Tokens = Contract::token_tile> struct exact_operands {
    u32x4 w[8], h[Tokens];
  };
  template <u32 Tokens>
  static NETRA_DEVICE void exact_load(exact_operands<Tokens>& o, const u16* w0, const u16* hidden, i64 hidden_stride, u32 tokens, u32 t0, u32 k0) {
NETRA_UNROLL
    for (u32 e = 0; e < 8; ++e) o.w[e] = load_16B<target, cache_policy::streaming_early>(w0 + static_cast<u64>(e) * Contract::hidden_size + k0);
    exact_load_hidden(o, hidden, hidden_stride, tokens, t0, k0);
  }
  /// The hidden vectors alone (the cluster kernel reads the weight vectors from LDS).
  template <u32 Tokens>
  static NETRA_DEVICE void exact_load_hidden(exact_operands<Tokens>& o, const u16* hidden, i64 hidden_stride, u32 tokens, u32 t0, u32 k0) {
NETRA_UNROLL
    for (u32 t = 0; t < Tokens; ++t)
      o.h[t] = t0 + t < tokens ? load_16B<target, cache_policy::streaming_early>(hidden + static_cast<i64>(t0 + t) * hidden_stride + k0)
                               : u32x4{0, 0, 0, 0};
  }
  /// exact_fp32: the K group sums G_g of the 8 experts x the tile's tokens below `tokens`, from a
  /// 32-lane group's operands, P tokens per pass (passes past `tokens` skipped): 8 P fma chains
  /// from `zero`, the reduce-scatter, then store(token, expert in the tile, G_g) in the lanes
  /// exact_stores<P> for (token exact_token_of<P>, expert exact_expert_of<P>) of the pass. The
  /// bits do not depend on P (the same pairs are added in the same order).
  template <u32 P, u32 Tokens, class Store>
  static NETRA_DEVICE void exact_sums(const exact_operands<Tokens>& o, float zero, u32 lane, u32 t0, u32 tokens, Store store) {
    static_assert(P == 1 || P == 4, "netra::kernels::moe_router: a pass is 1 or 4 tokens (8 or 32 values per lane)");
NETRA_UNROLL
    for (u32 c = 0; c < Tokens / P; ++c) {
      if (t0 + c * P >= tokens) break;  // uniform over the group
      float v[8 * P];
NETRA_UNROLL
      for (u32 t = 0; t < P; ++t)
NETRA_UNROLL
        for (u32 e = 0; e < 8; ++e) {
          const u32x4 hv = o.h[c * P + t];
          float acc = zero;
NETRA_UNROLL
          for (u32 j = 0; j < 4; ++j) {
            acc = fma_rn(bf16_lo(hv[j]), bf16_lo(o.w[e][j]), acc);
            acc = fma_rn(bf16_hi(hv[j]), bf16_hi(o.w[e][j]), acc);
          }
          v[exact_value(t, e)] = acc;
        }
      reduce_scatter<16>(v, lane);
      const u32 token = t0 + c * P + exact_token_of<P>(lane);
      if (exact_stores<P>(lane) && token < tokens) store(token, exact_expert_of<P>(lane), v[0]);
    }
  }

  /// exact_sums with 1-token passes for a tile of one token (a quarter of the fmas of a 4-token
  /// pass; one_token_passes), else 4-token passes. The bits are the same either way.
  template <u32 Tokens, class Store>
  static NETRA_DEVICE void exact_passes(const exact_operands<Tokens>& o, float zero, u32 lane, u32 t0, u32 tokens, Store store) {
    if constexpr (one_token_passes) {
      if (tokens - t0 == 1) return exact_sums<1>(o, zero, lane, t0, tokens, store);
    }
    exact_sums<pass_tokens>(o, zero, lane, t0, tokens, store);
  }

  /// exact_fp32: group grp's K group sums G_g of 8 experts x up to 8 tokens into the workspace.
  static NETRA_DEVICE void partials_exact(const params& p) {
    const u32 thread = thread_id<target>();
    const u32 lane = thread % group, grp = thread / group;
    const u32 x = workgroup_id<target, 0>();
    const u32 et = exact_expert_tile(x), g = exact_k_group(x, grp);
    const u32 t0 = workgroup_id<target, 1>() * Contract::token_tile;
    const u16* w0 = p.weight + static_cast<u64>(et * Contract::expert_tile) * Contract::hidden_size;
    if constexpr (target::has_l2_prefetch) {
      // lanes 0..7: the 8 weight rows' 512 bytes of this K group; lanes 8..15: the hidden rows'
      constexpr u32 bytes = group * 8 * 2;
      if (lane < 8) prefetch_l2<target>(w0 + static_cast<u64>(lane) * Contract::hidden_size + group * 8 * g, bytes);
      else if (lane < 8 + Contract::token_tile && t0 + lane - 8 < p.tokens)
        prefetch_l2<target>(p.hidden + static_cast<i64>(t0 + lane - 8) * p.hidden_stride + group * 8 * g, bytes);
    }
    clear_zero_slot(p, thread);
    wait_for_prerequisites<target>();
    exact_operands<> o;
    exact_load(o, w0, p.hidden, p.hidden_stride, p.tokens, t0, exact_first_k(g, lane));
    const float zero = zero_after_loads<target>();
    exact_passes(o, zero, lane, t0, p.tokens,
               [&](u32 token, u32 e, float v) { p.partials[partial_index(g, token, et * Contract::expert_tile + e)] = v; });
    launch_dependents<target>();  // after the stores (see the file comment)
  }

};

}  // namespace netra::kernels
