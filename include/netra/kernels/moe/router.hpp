// netra/kernels/moe/router.hpp — the one kernel of contracts::moe_router (both tactics).
//
// Contract: route slots 0..7 (top-8 ids, renormalised softmax weights) from BF16 hidden x gate
// weight, see contracts/moe/router.hpp for the semantics, the orders and the policies.
// Mapping: grid (expert_tiles * k_splits, ceil(M / token_tile)), 256 threads per workgroup.
//   Workgroup (x, y) owns token tile y, expert tile x % expert_tiles, K split x / expert_tiles,
//   and writes those partial logits to the workspace:
//   exact_fp32 (4 experts x 8 tokens x 2048 K): thread i owns K slice [8i, 8i + 8): 4 + 8 16-byte
//     loads, 32 fma chains; a 32-lane reduce-scatter leaves pair (expert l / 8, token l % 8) in
//     lane l of each group of 32; group sums meet in LDS; threads 0..31 add them in group order.
//   matrix_bf16 (16 tokens x 64 experts x 512 K): see partials_matrix below (per target).
// Then the arrival protocol of dsl/sync.hpp: writers fence_release; barrier; thread 0 counts the
// workgroup in its token tile's counter; the last to arrive acquires, adds the K-split partials in
// split order and routes its tile's tokens (one 32-lane group per token: a warp on sm90a, half a
// wave64 on gfx950, every shuffle inside the group), then resets the counter. On sm90a the kernel
// is launched with programmatic dependent launch.
#pragma once
#include "netra/contracts/moe/router.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/float_ops.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/matrix_fragment_bf16.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/workgroup_barrier.hpp"

// Loops kept rolled on purpose (the finishing path runs once per token tile; unrolling it would
// multiply its code, which is fetched cold). NETRA_* compiler names only (dsl/config.hpp).
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

template <class Contract> struct moe_router_kernel {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_moe_router";
  static constexpr u32 workgroup_size = Contract::workgroup_size;
  static constexpr bool programmatic_dependent_launch = same_v<target, sm90a>;
  static constexpr u32 group = 32;                       // lanes per routed token / per reduce-scatter
  static constexpr u32 groups = workgroup_size / group;  // 8
  static constexpr u32 waves = workgroup_size / target::wave_size;
  static constexpr u32 E = Contract::experts;

  struct params {
    const u16* hidden;  // BF16 [tokens, hidden_stride]
    i64 hidden_stride;  // elements
    const u16* weight;  // BF16 [256, 2048]
    i32* ids;           // int32 [tokens, 9]
    float* weights;     // FP32 [tokens, 9]
    float* partials;    // workspace: FP32 [k_splits][padded_tokens][256]
    u32* counters;      // workspace: u32 [token tiles]
    u32 tokens;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{Contract::expert_tiles * Contract::k_splits, ceil_div(tokens, Contract::token_tile), 1}, workgroup_size, 0};
  }
  /// Index of the partial logit (split, token, expert) in the workspace.
  NETRA_HOST_DEVICE static constexpr u64 partial_index(u32 split, u32 token, u32 expert) {
    return (static_cast<u64>(split) * Contract::padded_tokens + token) * E + expert;
  }
  /// exact_fp32: the (expert, token) pair, inside the workgroup's 4 x 8 tile, that lane l of a
  /// group holds after the reduce-scatter, and the K slice of thread i.
  NETRA_HOST_DEVICE static constexpr u32 exact_expert_of(u32 lane) { return lane / 8; }
  NETRA_HOST_DEVICE static constexpr u32 exact_token_of(u32 lane) { return lane % 8; }
  NETRA_HOST_DEVICE static constexpr u32 exact_first_k(u32 thread) { return 8 * thread; }

  /// matrix_bf16 lane maps (host models compose them with the instruction models):
  /// the first K of the 16-byte vector lane `lane` of wave `wave` loads for chunk `chunk` (A and B
  /// alike). sm90a: 8 warps x 64 K, chunk 0..1, 8 K per lane quad position t = lane & 3;
  /// gfx950: 4 waves x 128 K, chunk 0..3, 8 K per K group q = lane / 16.
  NETRA_HOST_DEVICE static constexpr u32 matrix_k(u32 split, u32 wave, u32 lane, u32 chunk) {
    if constexpr (same_v<target, sm90a>) return split * Contract::k_chunk + 64 * wave + 32 * chunk + 8 * (lane & 3);
    else return split * Contract::k_chunk + 128 * wave + 32 * chunk + 8 * (lane / 16);
  }
  /// Token row (inside the 16-token tile) of A vector `half` of a lane (sm90a: rows g and g + 8;
  /// gfx950: one row, l % 16).
  NETRA_HOST_DEVICE static constexpr u32 matrix_a_row(u32 lane, u32 half) {
    if constexpr (same_v<target, sm90a>) return (lane >> 2) + 8 * half;
    else return lane % 16 + 0 * half;
  }
  /// Expert (inside the 64-expert tile) of B vector `n` of a lane (n8 tiles on sm90a, n16 on gfx950).
  NETRA_HOST_DEVICE static constexpr u32 matrix_b_col(u32 lane, u32 n) {
    if constexpr (same_v<target, sm90a>) return 8 * n + (lane >> 2);
    else return 16 * n + lane % 16;
  }
  /// Which loaded word forms operand word `word` of instruction step `step`: sm90a step = 2c + h,
  /// A words {lo P(2h), hi P(2h), lo P(2h+1), hi P(2h+1)} and B words {P(2h), P(2h+1)} of chunk c;
  /// gfx950 step = chunk, all four words of the chunk's vector in order.
  struct operand_word {
    u32 chunk, half, word;
  };
  NETRA_HOST_DEVICE static constexpr operand_word matrix_a_word(u32 step, u32 word) {
    if constexpr (same_v<target, sm90a>) return {step / 2, word & 1, 2 * (step % 2) + word / 2};
    else return {step, 0, word};
  }
  NETRA_HOST_DEVICE static constexpr operand_word matrix_b_word(u32 step, u32 word) {
    if constexpr (same_v<target, sm90a>) return {step / 2, 0, 2 * (step % 2) + word};
    else return {step, 0, word};
  }

  static NETRA_DEVICE float bf16_lo(u32 w) { return bit_cast<float>(w << 16); }
  static NETRA_DEVICE float bf16_hi(u32 w) { return bit_cast<float>(w & 0xFFFF0000u); }
  static NETRA_DEVICE const u16* hidden_row(const params& p, u32 token) {
    return p.hidden + static_cast<i64>(token < p.tokens ? token : p.tokens - 1) * p.hidden_stride;
  }

  /// One stage of the 32-lane reduce-scatter and the stages after it (D = 16, 8, 4, 2, 1): lane
  /// bit D selects the half of the D * 2 values the lane keeps; the other half goes to lane ^ D.
  /// After the last stage v[0] of lane l holds value l summed over the 32 lanes (the halving tree).
  template <u32 D> static NETRA_DEVICE void reduce_scatter(float (&v)[32], u32 lane) {
    const bool upper = (lane & D) != 0;
NETRA_UNROLL
    for (u32 j = 0; j < D; ++j) {
      const float send = upper ? v[j] : v[j + D];
      const float keep = upper ? v[j + D] : v[j];
      v[j] = add_rn(keep, xor_shuffle_f32<target>(send, D));
    }
    if constexpr (D > 1) reduce_scatter<D / 2>(v, lane);
  }

  /// exact_fp32: the workgroup's 4 x 8 logits (complete: one K split) into the workspace.
  static NETRA_DEVICE void partials_exact(const params& p, u32 tile, u32 expert_tile) {
    const u32 thread = thread_id<target>();
    const u32 lane = thread % group, grp = thread / group;
    const u32 k0 = exact_first_k(thread);
    u32x4 w[4], h[8];
NETRA_UNROLL
    for (u32 e = 0; e < 4; ++e) w[e] = load_16B<target>(p.weight + static_cast<u64>(expert_tile * 4 + e) * Contract::hidden_size + k0);
NETRA_UNROLL
    for (u32 t = 0; t < 8; ++t) h[t] = load_16B<target>(hidden_row(p, tile * 8 + t) + k0);
    float v[32];
NETRA_UNROLL
    for (u32 e = 0; e < 4; ++e) {
NETRA_UNROLL
      for (u32 t = 0; t < 8; ++t) {
        float acc = 0.0f;
NETRA_UNROLL
        for (u32 j = 0; j < 4; ++j) {
          acc = fma_rn(bf16_lo(h[t][j]), bf16_lo(w[e][j]), acc);
          acc = fma_rn(bf16_hi(h[t][j]), bf16_hi(w[e][j]), acc);
        }
        v[8 * e + t] = acc;
      }
    }
    reduce_scatter<16>(v, lane);
    NETRA_SHARED float group_sums[groups][group];
    group_sums[grp][lane] = v[0];
    workgroup_barrier<target>();
    if (thread < group) {
      float s = group_sums[0][lane];
NETRA_UNROLL
      for (u32 g = 1; g < groups; ++g) s = add_rn(s, group_sums[g][lane]);
      const u32 token = tile * 8 + exact_token_of(lane);
      if (token < p.tokens) p.partials[partial_index(0, token, expert_tile * 4 + exact_expert_of(lane))] = s;
      fence_release<target>();
    }
  }

  /// matrix_bf16: the workgroup's 16 x 64 partial logits over its 512-K split into the workspace.
  static NETRA_DEVICE void partials_matrix(const params& p, u32 tile, u32 expert_tile, u32 split) {
    constexpr u32 tile_cols = Contract::expert_tile;  // 64
    const u32 thread = thread_id<target>();
    const u32 lane = lane_id<target>(), wave = wave_id<target>();
    NETRA_SHARED float tiles[waves][16][tile_cols];
    if constexpr (same_v<target, sm90a>) {
      // 8 warps, warp w: K [split * 512 + 64w, + 64) = 2 chunks of 32; all 64 experts = 8 n8 tiles.
      // Lane (g, t): 16 bytes of row g and of row g + 8 at chunk K 8t .. 8t + 7 (words P0..P3);
      // mma step 2c + h reads P(2h) as its K pair (2t, 2t + 1) and P(2h + 1) as (2t + 8, 2t + 9),
      // in A and in B alike: every physical K of the chunk is used once, in the same place on both
      // sides (matrix_a_word / matrix_b_word).
      using shape_t = mma_m16n8k16_bf16;
      u32x4 a[2][2], b[8][2];  // a[chunk][half]
NETRA_UNROLL
      for (u32 c = 0; c < 2; ++c)
NETRA_UNROLL
        for (u32 h = 0; h < 2; ++h) a[c][h] = load_16B<target>(hidden_row(p, tile * 16 + matrix_a_row(lane, h)) + matrix_k(split, wave, lane, c));
NETRA_UNROLL
      for (u32 n = 0; n < 8; ++n)
NETRA_UNROLL
        for (u32 c = 0; c < 2; ++c)
          b[n][c] = load_16B<target>(p.weight + static_cast<u64>(expert_tile * tile_cols + matrix_b_col(lane, n)) * Contract::hidden_size +
                                     matrix_k(split, wave, lane, c));
      float acc[8][4];
NETRA_UNROLL
      for (u32 n = 0; n < 8; ++n)
NETRA_UNROLL
        for (u32 i = 0; i < 4; ++i) acc[n][i] = 0.0f;
NETRA_UNROLL
      for (u32 step = 0; step < 4; ++step) {
        u32 aw[4];
NETRA_UNROLL
        for (u32 w = 0; w < 4; ++w) {
          const operand_word o = matrix_a_word(step, w);
          aw[w] = a[o.chunk][o.half][o.word];
        }
NETRA_UNROLL
        for (u32 n = 0; n < 8; ++n) {
          u32 bw[2];
NETRA_UNROLL
          for (u32 w = 0; w < 2; ++w) {
            const operand_word o = matrix_b_word(step, w);
            bw[w] = b[n][o.chunk][o.word];
          }
          mma<shape_t>(acc[n], aw, bw, acc[n]);
        }
      }
NETRA_UNROLL
      for (u32 n = 0; n < 8; ++n)
NETRA_UNROLL
        for (u32 i = 0; i < 4; ++i) {
          const fragment_element d = shape_t::d_element(lane, i);
          tiles[wave][d.row][8 * n + d.col] = acc[n][i];
        }
    } else if constexpr (same_v<target, gfx950>) {
      // 4 waves, wave w: K [split * 512 + 128w, + 128) = 4 chunks of 32; all 64 experts = 4 n16
      // tiles. Lane l (row l % 16, K group q = l / 16): 16 bytes at chunk K 8q .. 8q + 7 for A
      // (token row) and for B (expert column): the same K in the same register on both sides.
      using shape_t = mfma_f32_16x16x32_bf16;
      u32x4 a[4][1], b[4][4];  // a[chunk][half]
NETRA_UNROLL
      for (u32 c = 0; c < 4; ++c) a[c][0] = load_16B<target>(hidden_row(p, tile * 16 + matrix_a_row(lane, 0)) + matrix_k(split, wave, lane, c));
NETRA_UNROLL
      for (u32 n = 0; n < 4; ++n)
NETRA_UNROLL
        for (u32 c = 0; c < 4; ++c)
          b[n][c] = load_16B<target>(p.weight + static_cast<u64>(expert_tile * tile_cols + matrix_b_col(lane, n)) * Contract::hidden_size +
                                     matrix_k(split, wave, lane, c));
      float acc[4][4];
NETRA_UNROLL
      for (u32 n = 0; n < 4; ++n)
NETRA_UNROLL
        for (u32 i = 0; i < 4; ++i) acc[n][i] = 0.0f;
NETRA_UNROLL
      for (u32 step = 0; step < 4; ++step) {
        u32 aw[4];
NETRA_UNROLL
        for (u32 w = 0; w < 4; ++w) {
          const operand_word o = matrix_a_word(step, w);
          aw[w] = a[o.chunk][o.half][o.word];
        }
NETRA_UNROLL
        for (u32 n = 0; n < 4; ++n) {
          u32 bw[4];
NETRA_UNROLL
          for (u32 w = 0; w < 4; ++w) {
            const operand_word o = matrix_b_word(step, w);
            bw[w] = b[n][o.chunk][o.word];
          }
          mma<shape_t>(acc[n], aw, bw, acc[n]);
        }
      }
NETRA_UNROLL
      for (u32 n = 0; n < 4; ++n)
NETRA_UNROLL
        for (u32 i = 0; i < 4; ++i) {
          const fragment_element d = shape_t::d_element(lane, i);
          tiles[wave][d.row][16 * n + d.col] = acc[n][i];
        }
    } else {
      static_assert(dependent_false_v<target>, "netra::kernels::moe_router: no matrix_bf16 mapping for this target");
    }
    workgroup_barrier<target>();
    // 16 x 64 outputs, 4 consecutive experts per thread, waves added in order.
    const u32 row = thread / 16, col = 4 * (thread % 16);
    float s[4];
NETRA_UNROLL
    for (u32 j = 0; j < 4; ++j) s[j] = tiles[0][row][col + j];
NETRA_UNROLL
    for (u32 w = 1; w < waves; ++w)
NETRA_UNROLL
      for (u32 j = 0; j < 4; ++j) s[j] = add_rn(s[j], tiles[w][row][col + j]);
    const u32 token = tile * 16 + row;
    if (token < p.tokens)
      store_16B<target>(p.partials + partial_index(split, token, expert_tile * tile_cols + col),
                        u32x4{bit_cast<u32>(s[0]), bit_cast<u32>(s[1]), bit_cast<u32>(s[2]), bit_cast<u32>(s[3])});
    fence_release<target>();
  }

  static NETRA_DEVICE u32 group_or(u32 v) {
NETRA_UNROLL
    for (u32 m = 1; m < group; m <<= 1) v |= xor_shuffle_u32<target>(v, m);
    return v;
  }
  static NETRA_DEVICE float group_max(float v) {
NETRA_UNROLL
    for (u32 m = 1; m < group; m <<= 1) v = max_num<target>(v, xor_shuffle_f32<target>(v, m));
    return v;
  }
  static NETRA_DEVICE float group_sum(float v) {
NETRA_UNROLL
    for (u32 m = 1; m < group; m <<= 1) v = add_rn(v, xor_shuffle_f32<target>(v, m));
    return v;
  }
  static NETRA_DEVICE u64 group_max_u64(u64 v) {
NETRA_UNROLL
    for (u32 m = 1; m < group; m <<= 1) v = max_of(v, xor_shuffle_u64<target>(v, m));
    return v;
  }

  /// Routes one token from its 256 logits (lane l of the group holds experts 8l .. 8l + 7).
  static NETRA_DEVICE void route(const params& p, u32 token, u32 lane, const float (&l)[8]) {
    u32 nan = 0;
    float m = bit_cast<float>(0xFF800000u);  // -inf
NETRA_UNROLL
    for (u32 x = 0; x < 8; ++x) {
      nan |= l[x] != l[x] ? 1u : 0u;
      m = max_num<target>(m, l[x]);
    }
    nan = group_or(nan);
    m = group_max(m);
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
      s = group_sum(s);
      float pr[8];
NETRA_UNROLL
      for (u32 x = 0; x < 8; ++x) pr[x] = div_rn(e[x], s);
      u32 taken = 0;
      float s8 = 0.0f, my_p = 0.0f;
NETRA_ROUTER_ROLLED
      for (u32 slot = 0; slot < Contract::top_k; ++slot) {
        u64 best = 0;
NETRA_UNROLL
        for (u32 x = 0; x < 8; ++x) {
          const u64 key = (taken >> x) & 1u ? 0 : router_key(pr[x], 8 * lane + x);
          best = max_of(best, key);
        }
        best = group_max_u64(best);
        const u32 id = router_key_expert(best);
        const float pv = router_key_p(best);
        if (id / 8 == lane) taken |= 1u << (id % 8);
        s8 = add_rn(s8, pv);
        if (lane == slot) {
          my_id = static_cast<i32>(id);
          my_p = pv;
        }
      }
      my_weight = div_rn(my_p, s8);
    }
    if (lane < Contract::top_k) {
      const u64 index = moe::route_layout::index(token, lane);
      store_4B<target>(p.ids + index, static_cast<u32>(my_id));
      store_4B<target>(p.weights + index, bit_cast<u32>(my_weight));
    }
  }

  /// The last workgroup of a token tile: sum the K-split partials in split order, route.
  static NETRA_DEVICE void finish(const params& p, u32 tile) {
    const u32 thread = thread_id<target>();
    const u32 lane = thread % group, grp = thread / group;
NETRA_ROUTER_ROLLED
    for (u32 pass = 0; pass < Contract::token_tile / groups; ++pass) {
      const u32 token = tile * Contract::token_tile + pass * groups + grp;
      if (token < p.tokens) {  // uniform over the 32-lane group
        float l[8];
NETRA_UNROLL
        for (u32 s = 0; s < Contract::k_splits; ++s) {
          const float* base = p.partials + partial_index(s, token, 8 * lane);
          const u32x4 v0 = load_16B_after_acquire<target>(base), v1 = load_16B_after_acquire<target>(base + 4);
          const float v[8] = {bit_cast<float>(v0.x), bit_cast<float>(v0.y), bit_cast<float>(v0.z), bit_cast<float>(v0.w),
                              bit_cast<float>(v1.x), bit_cast<float>(v1.y), bit_cast<float>(v1.z), bit_cast<float>(v1.w)};
NETRA_UNROLL
          for (u32 x = 0; x < 8; ++x) l[x] = s == 0 ? v[x] : add_rn(l[x], v[x]);
        }
        route(p, token, lane, l);
      }
    }
  }

  static NETRA_DEVICE void run(const params& p) {
    const u32 tile = workgroup_id<target, 1>();
    const u32 x = workgroup_id<target, 0>();
    const u32 expert_tile = x % Contract::expert_tiles, split = x / Contract::expert_tiles;
    launch_dependents<target>();
    wait_for_prerequisites<target>();
    if constexpr (Contract::exact) partials_exact(p, tile, expert_tile);
    else partials_matrix(p, tile, expert_tile, split);

    NETRA_SHARED u32 last;
    workgroup_barrier<target>();
    if (thread_id<target>() == 0) last = atomic_add_relaxed<target>(p.counters + tile, 1) == Contract::arrivals_per_tile - 1 ? 1u : 0u;
    workgroup_barrier<target>();
    if (last == 0) return;
    fence_acquire<target>();
    finish(p, tile);
    if (thread_id<target>() == 0) p.counters[tile] = 0;  // ready for the next call
  }
};

template <class Target, u32 Tactic, u32 MaxTokens, u32 WaveSize>
struct kernels_of<contracts::moe_router<Target, Tactic, MaxTokens, WaveSize>> {
  using contract = contracts::moe_router<Target, Tactic, MaxTokens, WaveSize>;
  using type = type_list<moe_router_kernel<contract>>;
};

}  // namespace netra::kernels
