// netra/kernels/moe/router.hpp — the two kernels of contracts::moe_router (both tactics): logits
// (partial logits into the workspace) and route (softmax -> top-8 -> weights, slots 0..7).
//
// Contract: route slots 0..7 (top-8 ids, renormalised softmax weights) from BF16 hidden x gate
// weight, see contracts/moe/router.hpp for the semantics, the orders and the policies.
// logits kernel:
//   exact_fp32: grid (128, ceil(M / 8)), 64 threads = 2 groups of 32 lanes. Workgroup (x, y) owns
//     expert tile x / 4 (8 experts) and tokens 8y .. 8y + 7; its group j owns K group
//     g = 2 (x % 4) + j (k = 256g .. 256g + 255). Lane l owns slice 32g + l (k = 8 (32g + l) ..
//     + 7): 8 weight + up to 8 hidden 16-byte loads, all issued before the first use; per 4 tokens
//     32 chains of 8 exact-product fmas (value 8t + e), a 32-lane reduce-scatter (xor 16 .. 1: the
//     halving tree) leaves G_g of (token l / 8, expert l % 8) in lane l, which stores it at
//     partials[g][token][expert]; on sm90a a tile of one token takes one 8-value pass instead
//     (lanes 4e .. 4e + 3 end with expert e; exact_passes). No LDS, no barrier.
//   matrix_bf16: grid (16, ceil(M / 16)), 256 threads: workgroup (x, y) owns tokens 16y .. 16y + 15,
//     experts 64 (x % 4) .., K split x / 4; see partials_matrix (per target); the waves' partial
//     tiles meet in LDS (rows Contract::matrix_tile_stride floats apart: on sm90a 72, so the 8-byte
//     stores of a D fragment's element pairs fill the 32 banks twice instead of hitting 4 banks 8
//     times), are read back as one 16-byte vector per wave, added in wave order and stored at
//     partials[split][token][expert].
//   On sm90a the workgroup first asks L2 for its weight and hidden rows (cp.async.bulk.prefetch:
//   a hint, it reads nothing into registers), then waits for its predecessor (programmatic
//   dependent launch) before the first load, and releases its successor (the route kernel) after
//   its partials' stores: measured faster at every M than releasing it at once (H200, M = 1 3.99 ->
//   3.79 us, matrix M = 128 7.55 -> 6.00; docs/moe-routing.md).
// route kernel: grid ceil(M / 2), 64 threads (SharedGate: 128, the last 64 computing the two
//   tokens' shared gates with kernels/moe/shared_gate.hpp's shared_gate_lane: slot 8), one
//   32-lane group per token (a warp on sm90a, half a wave64 on gfx950, every shuffle inside the
//   group); lane l owns experts 8l .. 8l + 7: two strong
//   16-byte loads per split (the logits kernel's completion is waited for, not its L1 state), all
//   issued before a workgroup barrier, split partials added in split order, then route(): max and
//   sums by 32-lane butterflies, top-8 by a bitonic selection of 64-bit keys (router_sort8 /
//   router_merge8 below), weights.
#pragma once
#include "netra/contracts/moe/router.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/float_ops.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/fragment/lds_tile.hpp"
#include "netra/dsl/fragment/register_tile.hpp"
#include "netra/dsl/fragment/target_shapes.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/prefetch.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/moe/shared_gate.hpp"

// Loops kept rolled on purpose (NETRA_* compiler names only, dsl/config.hpp).
#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
#define NETRA_ROUTER_ROLLED _Pragma("unroll 1")
#else
#define NETRA_ROUTER_ROLLED
#endif

namespace netra::kernels {

/// The 64-bit selection key of expert x with probability p >= 0: larger p first, then lower x.
NETRA_HOST_DEVICE constexpr u64 router_key(float p, u32 expert) {
  return (static_cast<u64>(bit_cast<u32>(p)) << 32) | static_cast<u32>(~expert);
}
NETRA_HOST_DEVICE constexpr u32 router_key_expert(u64 key) { return ~static_cast<u32>(key); }
NETRA_HOST_DEVICE constexpr float router_key_p(u64 key) { return bit_cast<float>(static_cast<u32>(key >> 32)); }

/// Compare-exchange: the larger key to k[A], the smaller to k[B].
template <u32 A, u32 B> NETRA_HOST_DEVICE constexpr void router_cas(u64 (&k)[8]) {
  const u64 a = k[A], b = k[B];
  const bool swap = a < b;
  k[A] = swap ? b : a;
  k[B] = swap ? a : b;
}
/// Sorts 8 keys descending: the 19-comparator network for 8 inputs (depth 6).
NETRA_HOST_DEVICE constexpr void router_sort8(u64 (&k)[8]) {
  router_cas<0, 2>(k), router_cas<1, 3>(k), router_cas<4, 6>(k), router_cas<5, 7>(k);
  router_cas<0, 4>(k), router_cas<1, 5>(k), router_cas<2, 6>(k), router_cas<3, 7>(k);
  router_cas<0, 1>(k), router_cas<2, 3>(k), router_cas<4, 5>(k), router_cas<6, 7>(k);
  router_cas<2, 4>(k), router_cas<3, 5>(k);
  router_cas<1, 4>(k), router_cas<3, 6>(k);
  router_cas<1, 2>(k), router_cas<3, 4>(k), router_cas<5, 6>(k);
}
/// k (sorted descending) becomes the top 8 of k and q (both sorted descending, all 16 keys
/// distinct), sorted descending: max(k_i, q_(7-i)) is bitonic and holds the top 8; a bitonic merge
/// (distances 4, 2, 1) sorts it. Partner lanes that merge each other's lists get the same list.
NETRA_HOST_DEVICE constexpr void router_merge8(u64 (&k)[8], const u64 (&q)[8]) {
NETRA_UNROLL
  for (u32 i = 0; i < 8; ++i) k[i] = max_of(k[i], q[7 - i]);
  router_cas<0, 4>(k), router_cas<1, 5>(k), router_cas<2, 6>(k), router_cas<3, 7>(k);
  router_cas<0, 2>(k), router_cas<1, 3>(k), router_cas<4, 6>(k), router_cas<5, 7>(k);
  router_cas<0, 1>(k), router_cas<2, 3>(k), router_cas<4, 5>(k), router_cas<6, 7>(k);
}

/// Index of the partial logit (split, token, expert) in the workspace.
template <class Contract> NETRA_HOST_DEVICE constexpr u64 router_partial_index(u32 split, u32 token, u32 expert) {
  return (static_cast<u64>(split) * Contract::padded_tokens + token) * Contract::experts + expert;
}

/// The matrix_bf16 tactic's instruction: the target's BF16 shape (dsl/fragment/target_shapes.hpp).
template <class Target> using router_matrix_shape = typename fragment::matrix_instructions<Target>::bf16;

// ---- the logits kernel ---------------------------------------------------------------------------

template <class Contract> struct moe_router_logits_kernel {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_moe_router_logits";
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 group = 32;                       // lanes of one K group (exact) / reduce-scatter
  static constexpr u32 groups = workgroup_size / group;  // exact 2, matrix 8
  static constexpr u32 waves = workgroup_size / target::wave_size;
  static constexpr u32 E = Contract::experts;
  /// exact: tokens per reduce-scatter (exact_passes): 4 (8 experts x 4 tokens = 32 values per
  /// lane), or 1 (8 values) when the tile has one token. H200 (two kernels, graph-replayed): 4-token
  /// passes only, M = 1 4.52 us; 1-token passes only, M = 1 3.89 but M = 16 7.31 (4.80) and M = 32
  /// 10.17 (5.89): one token's 8 chains and 5 dependent shuffles per pass serialise.
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

  /// matrix_bf16 lane maps (host models compose them with the instruction models): wave w of
  /// a split owns K [split * k_chunk + wave_k * w, + wave_k), `matrix_steps` instructions of the
  /// target's BF16 shape along it; lanes load its A (token rows) and B (expert columns) pieces by
  /// the fragment layer's piece maps (dsl/fragment/operand_pieces.hpp), at piece k past
  /// matrix_wave_k, and instruction q takes its words from them (word_of).
  using matrix_shape = router_matrix_shape<target>;
  using matrix_a = fragment::a_pieces<matrix_shape>;
  using matrix_b = fragment::b_pieces<matrix_shape>;
  static constexpr u32 wave_k = Contract::k_chunk / waves;
  static constexpr u32 matrix_steps = wave_k / matrix_shape::k;
  NETRA_HOST_DEVICE static constexpr u32 matrix_wave_k(u32 split, u32 wave) { return split * Contract::k_chunk + wave_k * wave; }
  /// K of A / B piece v of a lane (one 32-bit offset: the row pointer adds it once).
  NETRA_HOST_DEVICE static constexpr u32 matrix_a_k(u32 split, u32 wave, u32 lane, u32 v) { return matrix_wave_k(split, wave) + matrix_a::piece_of(lane, v).k; }
  NETRA_HOST_DEVICE static constexpr u32 matrix_b_k(u32 split, u32 wave, u32 lane, u32 v) { return matrix_wave_k(split, wave) + matrix_b::piece_of(lane, v).k; }

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

  /// Every D-pair store of the matrix tactic's LDS tile takes the fewest wavefronts its bytes
  /// allow (fragment::store_d_wavefronts; shapes with single-item stores are not constrained).
  NETRA_HOST_DEVICE static constexpr bool stores_spread_evenly() {
    if constexpr (fragment::d_pairs_adjacent<matrix_shape>()) {
      for (u32 n = 0; n < Contract::expert_tile / matrix_shape::n; ++n)
        for (u32 h = 0; 2 * h < matrix_shape::d_items; ++h)
          if (fragment::store_d_wavefronts<matrix_shape, Contract::matrix_tile_stride, target::lds_banks>(n, h) != 2 * matrix_shape::wave_size / target::lds_banks)
            return false;
    }
    return true;
  }
  static_assert(Contract::exact || stores_spread_evenly(),
                "netra::kernels::moe_router: the D-pair stores of the LDS tile take more wavefronts than their bytes need");

  /// matrix_bf16: the workgroup's 16 x 64 partial logits over its 512-K split into the workspace.
  static NETRA_DEVICE void partials_matrix(const params& p, u32 tile, u32 expert_tile, u32 split) {
    constexpr u32 tile_cols = Contract::expert_tile;  // 64
    constexpr u32 tile_stride = Contract::matrix_tile_stride;
    static_assert(tile_stride >= tile_cols && tile_stride % 4 == 0, "netra::kernels::moe_router: LDS tile rows must hold 64 floats, 16-byte aligned");
    const u32 thread = thread_id<target>();
    const u32 lane = lane_id<target>(), wave = wave_id<target>();
    NETRA_SHARED fragment::lds_f32_tile<16, tile_stride> tiles[waves];  // per wave 16 rows of tile_stride floats
    clear_zero_slot(p, thread);
    // Wave w: K [matrix_wave_k(split, w), + wave_k) = matrix_steps instructions (sm90a: 8 warps x
    // 64 K, 4 m16n8k16; gfx950: 4 waves x 128 K, 4 16x16x32); all 64 experts = `n_tiles`
    // instruction tiles (sm90a 8 n8 tiles, gfx950 4 n16). A lane loads its A pieces (token rows)
    // and per tile its B pieces (expert columns) by the piece maps (sm90a: rows g and g + 8 at K
    // 8t + 32c; gfx950: row l % 16 at K 8q + 32c), every load before the first use.
    using shape_t = matrix_shape;
    constexpr u32 n_tiles = tile_cols / shape_t::n;
    fragment::register_tile<matrix_a, matrix_steps> a;
    fragment::register_tile<matrix_b, matrix_steps> b[n_tiles];
NETRA_UNROLL
    for (u32 v = 0; v < a.pieces; ++v)
      a.piece[v] = load_16B<target, cache_policy::streaming_early>(hidden_row(p, tile * 16 + matrix_a::piece_of(lane, v).index) + matrix_a_k(split, wave, lane, v));
NETRA_UNROLL
    for (u32 n = 0; n < n_tiles; ++n)
NETRA_UNROLL
      for (u32 v = 0; v < b[n].pieces; ++v)
        b[n].piece[v] = load_16B<target, cache_policy::streaming_early>(
            p.weight + static_cast<u64>(expert_tile * tile_cols + shape_t::n * n + matrix_b::piece_of(lane, v).index) * Contract::hidden_size +
            matrix_b_k(split, wave, lane, v));
    const float zero = zero_after_loads<target>();
    float acc[n_tiles][shape_t::d_items];
NETRA_UNROLL
    for (u32 n = 0; n < n_tiles; ++n)
NETRA_UNROLL
      for (u32 i = 0; i < shape_t::d_items; ++i) acc[n][i] = zero;
    fragment::multiply<shape_t, matrix_steps>(acc, a, b);
    // The D fragments into the wave's LDS tile: where the shape pairs items in adjacent columns
    // (sm90a) one 8-byte store per pair; rows tile_stride floats apart spread a store over the
    // banks as evenly as its bytes allow (sm90a, 72: lane (g, t) starts at bank 8g + 8n + 2t, two
    // wavefronts for 256 bytes; 64 would put all 8 rows g on the same banks).
    fragment::store_d<shape_t>(tiles[wave], acc, lane);
    workgroup_barrier<target>();
    // 16 x 64 outputs, 4 consecutive experts per thread (one 16-byte LDS read per wave: a warp
    // reads 2 rows x 256 contiguous bytes, four wavefronts), waves added in order.
    const u32 row = thread / 16, col = 4 * (thread % 16);
    float s[4];
NETRA_UNROLL
    for (u32 w = 0; w < waves; ++w) {
      const u32x4 v = tiles[w].v[row][col / 4];
NETRA_UNROLL
      for (u32 j = 0; j < 4; ++j) s[j] = w == 0 ? bit_cast<float>(v[j]) : add_rn(s[j], bit_cast<float>(v[j]));
    }
    const u32 token = tile * 16 + row;
    if (token < p.tokens)
      store_16B<target>(p.partials + partial_index(split, token, expert_tile * tile_cols + col),
                        u32x4{bit_cast<u32>(s[0]), bit_cast<u32>(s[1]), bit_cast<u32>(s[2]), bit_cast<u32>(s[3])});
  }

  static NETRA_DEVICE void run(const params& p) {
    if constexpr (Contract::exact) {
      partials_exact(p);
    } else {
      const u32 x = workgroup_id<target, 0>();
      const u32 tile = workgroup_id<target, 1>();
      const u32 expert_tile = x % Contract::expert_tiles, split = x / Contract::expert_tiles;
      if constexpr (target::has_l2_prefetch) {
        // threads 0..63: the 64 weight rows' K split (1 KiB each); 64..79: the 16 hidden rows'
        const u32 thread = thread_id<target>();
        constexpr u32 bytes = Contract::k_chunk * 2;
        if (thread < Contract::expert_tile)
          prefetch_l2<target>(p.weight + static_cast<u64>(expert_tile * Contract::expert_tile + thread) * Contract::hidden_size + split * Contract::k_chunk,
                              bytes);
        else if (thread < Contract::expert_tile + 16 && tile * 16 + thread - Contract::expert_tile < p.tokens)
          prefetch_l2<target>(p.hidden + static_cast<i64>(tile * 16 + thread - Contract::expert_tile) * p.hidden_stride + split * Contract::k_chunk, bytes);
      }
      wait_for_prerequisites<target>();
      partials_matrix(p, tile, expert_tile, split);
      launch_dependents<target>();  // after the stores (see the file comment)
    }
  }
};

// ---- the route kernel ----------------------------------------------------------------------------

template <class Contract> struct moe_router_route_kernel {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_moe_router_route";
  static constexpr u32 workgroup_size = Contract::route_workgroup_size;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 group = 32;                                // lanes per routed token
  static constexpr u32 tokens_per_workgroup = 2;                  // routing groups; then (SharedGate) as many gate groups
  static_assert(workgroup_size == group * tokens_per_workgroup * (Contract::shared_gate ? 2 : 1),
                "netra::kernels::moe_router: the route workgroup is 2 routing groups (+ 2 gate groups)");
  using gate_part = shared_gate_lane<target>;

  struct params {
    const float* partials;     // workspace: FP32 [k_splits][padded_tokens][256], the logits kernel's
    i32* ids;                  // int32 [tokens, 9]
    float* weights;            // FP32 [tokens, 9]
    u32 tokens;
    const u16* hidden;         // SharedGate: BF16 [tokens, hidden_stride]
    i64 hidden_stride;         // elements
    const u16* gate_weight;    // SharedGate: BF16 [2048]
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{ceil_div(tokens, tokens_per_workgroup), 1, 1}, workgroup_size, 0};
  }
  /// Token of group `grp` of workgroup `workgroup`: routing groups 0, 1 (lane l owns experts
  /// 8l .. 8l + 7), then (SharedGate) gate groups 2, 3 for the same two tokens.
  NETRA_HOST_DEVICE static constexpr u32 token_of(u32 workgroup, u32 grp) { return workgroup * tokens_per_workgroup + grp % tokens_per_workgroup; }
  /// True for the groups that compute the shared gate (SharedGate only).
  NETRA_HOST_DEVICE static constexpr bool gates(u32 grp) { return grp >= tokens_per_workgroup; }

  static NETRA_DEVICE u64 shuffle_key(u64 v, u32 mask) { return xor_shuffle_u64<target>(v, mask); }

  /// Routes one token from its 256 logits (lane l of the group holds experts 8l .. 8l + 7):
  /// slots 0..7 of `token` in ids / weights.
  static NETRA_DEVICE void route(i32* ids, float* weights, u32 token, u32 lane, const float (&l)[8]) {
    u32 nan = 0;
    float m = bit_cast<float>(0xFF800000u);  // -inf
NETRA_UNROLL
    for (u32 x = 0; x < 8; ++x) {
      nan |= l[x] != l[x] ? 1u : 0u;
      m = max_num<target>(m, l[x]);
    }
NETRA_UNROLL
    for (u32 mask = 1; mask < group; mask <<= 1) {  // two independent butterflies, interleaved
      const u32 other_nan = xor_shuffle_u32<target>(nan, mask);
      const float other_m = xor_shuffle_f32<target>(m, mask);
      nan |= other_nan;
      m = max_num<target>(m, other_m);
    }
    const bool finite = nan == 0 && m > bit_cast<float>(0xFF800000u) && m < bit_cast<float>(0x7F800000u);
    i32 my_id = static_cast<i32>(lane);
    float my_weight = bit_cast<float>(0x7FC00000u);
    if (finite) {
      float e[8], s = 0.0f;
NETRA_UNROLL
      for (u32 x = 0; x < 8; ++x) {
        e[x] = exp_f32(sub_rn(l[x], m));
        s = add_rn(s, e[x]);
      }
NETRA_UNROLL
      for (u32 mask = 1; mask < group; mask <<= 1) s = add_rn(s, xor_shuffle_f32<target>(s, mask));
      u64 k[8];
NETRA_UNROLL
      for (u32 x = 0; x < 8; ++x) k[x] = router_key(div_rn(e[x], s), 8 * lane + x);
      router_sort8(k);
NETRA_ROUTER_ROLLED  // five dependent stages: rolled, the code stays small (it is fetched cold)
      for (u32 mask = 1; mask < group; mask <<= 1) {
        u64 q[8];
NETRA_UNROLL
        for (u32 i = 0; i < 8; ++i) q[i] = shuffle_key(k[i], mask);
        router_merge8(k, q);
      }
      // every lane holds the top 8, descending; s8 in slot order, lane s < 8 owns slot s
      float s8 = 0.0f;
      u64 mine = k[0];
NETRA_UNROLL
      for (u32 i = 0; i < 8; ++i) {
        s8 = add_rn(s8, router_key_p(k[i]));
        mine = lane == i ? k[i] : mine;
      }
      my_id = static_cast<i32>(router_key_expert(mine));
      my_weight = div_rn(router_key_p(mine), s8);
    }
    if (lane < Contract::top_k) {
      const u64 index = moe::route_layout::index(token, lane);
      store_4B<target>(ids + index, static_cast<u32>(my_id));
      store_4B<target>(weights + index, bit_cast<u32>(my_weight));
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    const u32 thread = thread_id<target>();
    const u32 lane = thread % group, grp = thread / group;
    const u32 token = token_of(workgroup_id<target, 0>(), grp);
    const bool live = token < p.tokens;  // uniform over the 32-lane group
    NETRA_SHARED float one_slot;
    if (thread == 0) one_slot = static_cast<float>(p.tokens != 0);  // 1.0 (tokens >= 1), unknown to the compiler
    if constexpr (Contract::shared_gate && target::has_l2_prefetch) {
      // the gate weight (4 KiB) into L2 while the logits kernel runs (a hint): after the wait the
      // gate lanes then meet L2, as the routing lanes do for the partials
      if (grp == tokens_per_workgroup && lane == 0) prefetch_l2<target>(p.gate_weight, 2 * Contract::hidden_size);
    }
    launch_dependents<target>();
    wait_for_prerequisites<target>();  // the logits kernel has completed
    if constexpr (Contract::shared_gate) {
      if (gates(grp)) {  // whole waves on both targets: groups 2, 3 are warps 2, 3 / the second wave64
        const u64 t = live ? token : p.tokens - 1;
        gate_part part;
        part.load(p.hidden + static_cast<i64>(t) * p.hidden_stride, p.gate_weight, lane);
        workgroup_barrier<target>();  // the routing groups' barrier (below)
        const float g = part.value();
        if (live && lane == 0) gate_part::store(p.ids, p.weights, t, g);
        return;
      }
    }
    u32x4 v[Contract::k_splits][2];
NETRA_UNROLL
    for (u32 s = 0; s < Contract::k_splits; ++s) {
      const float* base = p.partials + router_partial_index<Contract>(s, live ? token : 0, 8 * lane);
      v[s][0] = load_16B_after_acquire<target>(base);
      v[s][1] = load_16B_after_acquire<target>(base + 4);
    }
    // Every load above is issued before the first addition: the sums start from split 0 times a
    // 1.0 read from LDS after a barrier (x * 1 = x exactly), and strong loads stay above the
    // barrier, so the compiler cannot trade registers for a second L2 round trip.
    workgroup_barrier<target>();
    const float one = one_slot;
    if (!live) return;
    float l[8];
NETRA_UNROLL
    for (u32 s = 0; s < Contract::k_splits; ++s)
NETRA_UNROLL
      for (u32 x = 0; x < 8; ++x) {
        const float f = bit_cast<float>(v[s][x / 4][x % 4]);
        l[x] = s == 0 ? mul_rn(f, one) : add_rn(l[x], f);
      }
    route(p.ids, p.weights, token, lane, l);
  }
};

}  // namespace netra::kernels
