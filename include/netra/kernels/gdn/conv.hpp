// netra/kernels/gdn/conv.hpp — the causal conv update of contracts::gdn_conv.
//
// Grid (D / (C N), B, G); workgroup N = Threads threads (256: gfx950 4 wave64, sm90a 8 warps; or
// 64), no LDS, no barriers; C = ChannelsPerThread (8, or 4: vectors of 16 or 8 bytes). Thread x of
// workgroup (w, b, g) owns channels c0 .. c0 + C - 1, c0 = C (N w + x), of request b for the
// T / G tokens of group g (G = TokenGroups): it loads its 4 taps x C channels of weights (C / 2 x
// 16 B), the history before its first token (the slot's 3 vectors, kernels/gdn/conv_history.hpp,
// for positions before token 0; else copies of the preceding tokens' x vectors — the same values
// the serial walk would hold) and its tokens' x vectors (one each: in the token loop with Staging
// per_token, all issued before the first token with Staging block, token t + 1's issued before
// token t's arithmetic with Staging next_token), then per token computes C outputs in the
// contract's tap order and stores one y vector (and, Writes = windows, its 3 window vectors of
// that token; WindowStores streaming: those stored with cache_policy::streaming, evict first). SiLU
// is kernels/gdn/conv_silu.hpp's (silu_f32's bits): silu with its division branch-free, or with
// Silu lean silu_lean (fewer selects); the reciprocal as Division says. Writes = final_state: the
// 3 history vectors go back to the slot after the last token, unless the slot is the sentinel —
// written by the one workgroup that reads the slot: with G > 1 the groups whose first token reads
// it (first < 3) are merged into group 0 (which walks their tokens; the others of them exit), and
// group 0 stores tokens T - 3 .. T - 1's x vectors after its own slot loads (program order), so no
// workgroup reads a slot another one writes (before, group G - 1 stored it while group 0, and
// group 1 at G 6, could still be loading it: a race between workgroups). Launch bound: at least
// WorkgroupsPerProcessor resident workgroups per SM where set. Every output element has one
// writer and every slot its writer as its only reader; the result does not depend on scheduling.
#pragma once
#include "netra/contracts/gdn/conv.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/kernels/gdn/conv_history.hpp"
#include "netra/kernels/gdn/conv_silu.hpp"
#include "netra/kernels/gdn/token_loop.hpp"

namespace netra::kernels {

template <class Contract> struct gdn_conv_update {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_gdn_conv_update";
  static constexpr u32 workgroup_size = Contract::threads;
  static constexpr bool preload = Contract::staging == gdn::token_staging::block;
  static constexpr bool programmatic_dependent_launch = false;
  static constexpr u32 min_workgroups_per_processor = Contract::workgroups_per_processor;
  static constexpr u32 C = Contract::channels_per_thread;  // a thread's channels: vectors of C BF16 values
  static constexpr u32 channels_per_workgroup = workgroup_size * C;
  static_assert(gdn::channels % channels_per_workgroup == 0, "netra::kernels::gdn_conv_update: D must be whole workgroups");
  using vec = conditional_t<C == 8, u32x4, gdn_conv_map::bf16_vector<4>>;  // a vector of C BF16 values
  using reciprocal = conditional_t<Contract::division == gdn::conv_division::instruction_seed, gdn_conv_silu::two_steps_from_instruction, integer_seeded>;
  static constexpr bool streaming_windows = Contract::window_stores == gdn::window_stores::streaming;
  static constexpr bool lean_silu = Contract::silu == gdn::conv_silu_form::lean;

  struct params {
    const u16* x;
    i64 x_row_stride;  // elements
    const u16* weight; // [D, 4]
    u16* y;            // [B T, D]
    u16* state;        // pool
    const i32* slots;  // [B]
    u16* windows;      // [B, T, slot] (Writes = windows)
    i32 state_slots;
  };

  static constexpr u32 groups = Contract::token_groups;
  static constexpr u32 group_tokens = Contract::tokens / groups;
  static constexpr bool writes_state = Contract::writes == gdn::conv_writes::final_state;
  /// Writes = final_state: the groups whose first token reads the slot (first < 3), walked by
  /// group 0 alone (lead_tokens tokens), so the slot's reader is its writer; 1 otherwise.
  static constexpr u32 slot_groups = (gdn::conv_history + group_tokens - 1) / group_tokens;
  static constexpr u32 lead_groups = !writes_state || groups == 1 ? 1 : slot_groups < groups ? slot_groups : groups;
  static constexpr u32 lead_tokens = lead_groups * group_tokens;
  template <u32 N> struct token_count {
    static constexpr u32 value = N;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) {
    return {{gdn::channels / channels_per_workgroup, batch, groups}, workgroup_size, 0};
  }
  /// First channel of thread `thread` of workgroup x.
  NETRA_HOST_DEVICE static constexpr u32 first_channel(u32 workgroup_x, u32 thread) { return workgroup_x * channels_per_workgroup + thread * C; }

  static NETRA_DEVICE void run(const params& p) {
    using namespace gdn_conv_map;
    constexpr u32 layout = Contract::layout;
    const u32 b = workgroup_id<target, 1>();
    const u32 g = groups == 1 ? 0u : workgroup_id<target, 2>();
    if constexpr (lead_groups > 1)
      if (g != 0 && g < lead_groups) return;  // its tokens are group 0's (final state: one reader of the slot)
    const u32 first = g * group_tokens;  // the group's first token
    const u32 c0 = first_channel(workgroup_id<target, 0>(), thread_id<target>());
    const i32 requested = p.slots[b];
    const bool real = static_cast<u32>(requested) < static_cast<u32>(p.state_slots - 1);
    const u64 slot = real ? static_cast<u32>(requested) : static_cast<u32>(p.state_slots - 1);

    // Weights stay packed (two BF16 per register: taps 2i, 2i + 1 of a channel) and widen at use.
    u32x4 w[C / 2];
    NETRA_UNROLL
    for (u32 v = 0; v < C / 2; ++v) w[v] = load_16B<target>(p.weight + u64{c0} * 4 + 8 * v);
    u16* const slot_base = p.state + slot * slot_elements;
    const u16* const x_base = p.x + u64{b} * Contract::tokens * p.x_row_stride + c0;
    // The history before token `first`: positions first - 3 .. first - 1, from the slot where
    // negative (the state holds positions -3 .. -1), else copies of those tokens' x.
    u16 h[C][gdn::conv_history];
    if (first < gdn::conv_history) {
      u16 slot_h[C][gdn::conv_history];  // the slot: positions -3, -2, -1
      NETRA_UNROLL
      for (u32 v = 0; v < vectors; ++v) {
        const vec hv = load<cache_policy::normal>(slot_base + vector_offset(layout, c0, v, C));
        NETRA_UNROLL
        for (u32 c = 0; c < C; ++c)
          NETRA_UNROLL
          for (u32 j = 0; j < gdn::conv_history; ++j)
            if (vector_of(layout, c, j, C) == v) slot_h[c][j] = half_of(hv, element_of(layout, c, j, C));
      }
      NETRA_UNROLL
      for (u32 c = 0; c < C; ++c)
        NETRA_UNROLL
        for (u32 j = 0; j < gdn::conv_history; ++j) {
          const u32 at = first + j;  // the slot index of history position j (selects: no run-time register index)
          if (at < gdn::conv_history) h[c][j] = at == 0 ? slot_h[c][0] : at == 1 ? slot_h[c][1] : slot_h[c][2];
        }
    }
    // The history as x vectors: hv[j] holds position j of the C channels (the register form of a token's x).
    vec hv[gdn::conv_history];
    NETRA_UNROLL
    for (u32 j = 0; j < gdn::conv_history; ++j)
      if (groups == 1 || first + j < gdn::conv_history)
        hv[j] = position(h, j);
      else
        hv[j] = load<cache_policy::streaming>(x_base + (first + j - gdn::conv_history) * p.x_row_stride);

    // One token: C outputs from the history and x vector xv, the history shifted, y (and windows) stored.
    auto token = [&](u32 t, const vec& xv) {
      const u64 row = u64{b} * Contract::tokens + t;
      float out[C];
      NETRA_UNROLL
      for (u32 c = 0; c < C; ++c) {
        const u16 xc = half_of(xv, c);
        const u32 w01 = w[c / 2][static_cast<int>(2 * (c % 2))], w23 = w[c / 2][static_cast<int>(2 * (c % 2) + 1)];
        float acc = mul_rn(bit_cast<float>(w01 << 16), f32_from_bf16(half_of(hv[0], c)));
        acc = fma_rn(bit_cast<float>(w01 & 0xFFFF0000u), f32_from_bf16(half_of(hv[1], c)), acc);
        acc = fma_rn(bit_cast<float>(w23 << 16), f32_from_bf16(half_of(hv[2], c)), acc);
        acc = fma_rn(bit_cast<float>(w23 & 0xFFFF0000u), f32_from_bf16(xc), acc);
        out[c] = silu(acc);
      }
      hv[0] = hv[1], hv[1] = hv[2], hv[2] = xv;
      u32 y[C / 2];
      NETRA_UNROLL
      for (u32 e = 0; e < C / 2; ++e) y[e] = pack_bf16x2<target>(out[2 * e], out[2 * e + 1]);
      store(p.y + row * gdn::channels + c0, make(y));
      if constexpr (Contract::writes == gdn::conv_writes::windows) store_history<streaming_windows>(p.windows + row * slot_elements, c0, hv);
    };
    // The group's tokens first .. first + count - 1 (count: group_tokens, or lead_tokens for group 0).
    auto walk = [&](auto count_of) {
      constexpr u32 count = decltype(count_of)::value;
      if constexpr (preload) {  // every x vector of the group's tokens in flight before its first token
        vec xs[count];
        NETRA_UNROLL
        for (u32 t = 0; t < count; ++t) xs[t] = load<cache_policy::streaming>(x_base + (first + t) * p.x_row_stride);
        NETRA_UNROLL
        for (u32 t = 0; t < count; ++t) token(first + t, xs[t]);
      } else if constexpr (Contract::staging == gdn::token_staging::next_token) {  // the last token reloads its own vector
        vec next = load<cache_policy::streaming>(x_base + first * p.x_row_stride);
        NETRA_GDN_TOKEN_LOOP
        for (u32 t = first; t < first + count; ++t) {
          const vec xv = next;
          next = load<cache_policy::streaming>(x_base + (t + 1 < first + count ? t + 1 : t) * p.x_row_stride);
          token(t, xv);
        }
      } else {
        NETRA_GDN_TOKEN_LOOP
        for (u32 t = first; t < first + count; ++t) token(t, load<cache_policy::streaming>(x_base + t * p.x_row_stride));
      }
    };
    if constexpr (lead_groups > 1) {
      if (g == 0) walk(token_count<lead_tokens>{});
      else walk(token_count<group_tokens>{});
    } else {
      walk(token_count<group_tokens>{});
    }
    if constexpr (writes_state) {
      if constexpr (groups == 1 || lead_tokens == Contract::tokens) {  // group 0 walked every token: hv is the final history
        if (real && g == 0) store_history<false>(slot_base, c0, hv);
      } else if (real && g == 0) {  // the final history is tokens T - 3 .. T - 1's x (T > lead_tokens >= 3); stored after this thread's slot loads
        vec last[gdn::conv_history];
        NETRA_UNROLL
        for (u32 j = 0; j < gdn::conv_history; ++j) last[j] = load<cache_policy::normal>(x_base + (Contract::tokens - gdn::conv_history + j) * p.x_row_stride);
        store_history<false>(slot_base, c0, last);
      }
    }
  }

 private:
  /// silu_f32(acc) in the contract's form (the same bits either way).
  static NETRA_DEVICE float silu(float acc) {
    if constexpr (lean_silu) return gdn_conv_silu::silu_lean(acc, reciprocal{});
    else return gdn_conv_silu::silu(acc, reciprocal{});
  }
  /// One vector of C BF16 values: a 16-byte access (Policy as given), or an 8-byte one (plain).
  template <cache_policy Policy> static NETRA_DEVICE vec load(const u16* address) {
    if constexpr (C == 8) {
      return load_16B<target, Policy>(address);
    } else {
      const u32x2 v = *reinterpret_cast<const u32x2*>(address);
      return {{v.x, v.y}};
    }
  }
  /// History position j of the thread's C channels as one vector.
  static NETRA_DEVICE vec position(const u16 (&h)[C][gdn::conv_history], u32 j) {
    const auto pair = [&](u32 c) { return static_cast<u32>(h[c][j]) | static_cast<u32>(h[c + 1][j]) << 16; };
    if constexpr (C == 8) return u32x4{pair(0), pair(2), pair(4), pair(6)};
    else return {{pair(0), pair(2)}};
  }
  static NETRA_DEVICE vec make(const u32 (&w)[C / 2]) {
    if constexpr (C == 8) return u32x4{w[0], w[1], w[2], w[3]};
    else return {{w[0], w[1]}};
  }
  /// One vector store (Streaming: evict first).
  template <bool Streaming = false> static NETRA_DEVICE void store(u16* address, const vec& v) {
    constexpr cache_policy policy = Streaming ? cache_policy::streaming : cache_policy::normal;
    if constexpr (C == 8) store_16B<target, policy>(address, v);
    else if constexpr (Streaming) store_8B<target, policy>(address, v.w[0], v.w[1]);
    else *reinterpret_cast<u64*>(address) = u64{v.w[0]} | u64{v.w[1]} << 32;  // one 8-byte store (a u32x2 store of y split in two)
  }
  template <bool Streaming> static NETRA_DEVICE void store_history(u16* base, u32 c0, const vec (&hv)[gdn::conv_history]) {
    using namespace gdn_conv_map;
    NETRA_UNROLL
    for (u32 v = 0; v < vectors; ++v) {
      u32 words[C / 2] = {};
      NETRA_UNROLL
      for (u32 c = 0; c < C; ++c)
        NETRA_UNROLL
        for (u32 j = 0; j < gdn::conv_history; ++j)
          if (vector_of(Contract::layout, c, j, C) == v) {
            const u32 e = element_of(Contract::layout, c, j, C);
            words[e / 2] |= static_cast<u32>(half_of(hv[j], c)) << (16 * (e % 2));
          }
      store<Streaming>(base + vector_offset(Contract::layout, c0, v, C), make(words));
    }
  }
};

template <class Target, u32 MaxBatch, u32 Tokens, u32 Layout, u32 Writes, u32 Staging, u32 Threads, u32 Groups, u32 Resident, u32 Channels, u32 Division,
          u32 WindowStores, u32 Silu, u32 WaveSize>
struct kernels_of<contracts::gdn_conv<Target, MaxBatch, Tokens, Layout, Writes, Staging, Threads, Groups, Resident, Channels, Division, WindowStores, Silu, WaveSize>> {
  using type =
      type_list<gdn_conv_update<contracts::gdn_conv<Target, MaxBatch, Tokens, Layout, Writes, Staging, Threads, Groups, Resident, Channels, Division, WindowStores, Silu, WaveSize>>>;
};

}  // namespace netra::kernels
