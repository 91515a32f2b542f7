// netra/contracts/gdn/conv.hpp — the causal conv update of the M12 verify step (width 4, SiLU),
// over the q | k | v channels of each token (contracts/gdn/model.hpp).
//
// Semantics, per request b (rows b * T + t, t = 0..T-1) and channel c:
//   h_0 = state[slot(b)] (3 BF16 values, oldest first: history position 0 is the oldest input);
//   for each t: acc = w[c][0] * h[0] (mul), acc = fma(w[c][1], h[1], acc),
//               acc = fma(w[c][2], h[2], acc), acc = fma(w[c][3], x[b T + t][c], acc)   (FP32)
//               y[b T + t][c] = bf16(silu_f32(acc))                                      (RNE)
//               h <- (h[1], h[2], x[b T + t][c])                     (a shift: no ring offset)
// Writes = final_state: state[slot(b)] <- h_T. Writes = windows: windows[b][t] <- h_(t+1) for every
// t and the slot is not written (verification: the accepted prefix commits later, see the replay
// contract's conv commit). Windows have the state's layout per (b, t): [B, T, D, 3] channel-major
// or [B, T, 3, D] tap-major. History values are BF16 copies of inputs: no rounding on the state.
// Slots: state_slots slots; the last (state_slots - 1) is the padding sentinel: a slot index
// outside [0, state_slots - 2] reads the sentinel and writes no state (padded rows still write
// their own y and windows rows). Real rows must name distinct slots (two on one slot: which final
// state lands, and what the other reads, is undefined).
// Mapping parameters (the same bits for every choice): Staging (gdn::token_staging): each
// thread's x vector loaded in the token loop (per_token), or the x vectors of its tokens all
// issued before the first (block); Threads: threads per workgroup (64 or 256); TokenGroups (G,
// divides T): the token block split into G groups walked by separate threads, each starting from
// the history its first token sees (the slot, or the preceding tokens' x); Staging next_token:
// token t + 1's x vector loaded before token t's arithmetic (one vector ahead, loop rolled);
// WorkgroupsPerProcessor M (0: none): the launch bound's minimum resident workgroups per SM
// (sm90a: at most 65536 / (M Threads) registers a thread; the AMD targets ignore it);
// ChannelsPerThread C (8, or 4): the channels a thread owns (16- or 8-byte vectors); Division
// (gdn::conv_division): SiLU's reciprocal from the integer seed and four Newton steps, or from the
// target's reciprocal instruction and two steps (kernels/gdn/conv_silu.hpp: the same quotient for
// every seed within 16 ulp, tests/kernels/test_gdn_conv_silu.cpp); WindowStores (gdn::window_stores):
// the windows stored plainly or streaming (evict first: cache_policy::streaming; Writes = windows);
// Silu (gdn::conv_silu_form): silu_f32's operations with the selects of exp_f32 and of the division's
// special cases, or the lean form (exp's argument clamped, the remainder's sign flipped: two selects
// left; kernels/gdn/conv_silu.hpp silu_lean, equal to silu_f32 for all 2^32 FP32 inputs).
// Comparison: bitwise.
#pragma once
#include "netra/contracts/gdn/admission.hpp"

namespace netra {
namespace gdn::token_staging {
inline constexpr u32 next_token = 2;  // conv only: the next token's x vector in flight during this token's arithmetic
}
namespace gdn::conv_division {
inline constexpr u32 integer_seed = 0;      // the integer seed and four Newton steps
inline constexpr u32 instruction_seed = 1;  // the target's reciprocal instruction and two steps
}
namespace gdn::window_stores {
inline constexpr u32 plain = 0;
inline constexpr u32 streaming = 1;  // evict first (st.global.cs; AMD nontemporal)
}
namespace gdn::conv_silu_form {
inline constexpr u32 selects = 0;  // exp_f32 and the branch-free division with their selects
inline constexpr u32 lean = 1;     // exp's argument clamped, the remainder's sign flipped
}

/// A conv update call: the handle's target and device and its tensors (runtime/tensor.hpp).
///   x [B T, 8192] BF16, rows contiguous, any row stride (a multiple of 8 elements);
///   weight [8192, 4] BF16; y [B T, 8192] BF16; slots [B] i32; state: the pool, [slots, 8192, 3]
///   (channel_major) or [slots, 3, 8192] (tap_major) BF16; windows (Writes = windows)
///   [B, T, 8192, 3] or [B, T, 3, 8192] BF16 — all compact.
struct gdn_conv_signature {
  target_id target;
  device_ref device;
  tensor_arg x, weight, y, slots, state, windows;
  NETRA_HOST_DEVICE constexpr i64 batch() const { return slots.rank == 1 ? slots.shape[0] : 0; }
  NETRA_HOST_DEVICE constexpr i64 state_slots() const { return state.extent(0); }
};

namespace contracts {

/// The instance-name arguments: the mapping fields appear only when not the default, the
/// workgroups-per-processor bound only when set.
template <u32... Args> struct gdn_conv_args {
  static constexpr i64 value[] = {Args...};
};

template <class Target, u32 MaxBatch, u32 Tokens, u32 Layout, u32 Writes, u32 Staging = gdn::token_staging::per_token, u32 Threads = 256,
          u32 TokenGroups = 1, u32 WorkgroupsPerProcessor = 0, u32 ChannelsPerThread = 8, u32 Division = gdn::conv_division::integer_seed,
          u32 WindowStores = gdn::window_stores::plain, u32 Silu = gdn::conv_silu_form::selects, u32 WaveSize = Target::wave_size>
struct gdn_conv {
  static_assert(is_built_target_v<Target> || is_audit_only_target_v<Target>,
                "netra::contracts::gdn_conv: field Target is not supported; supported: netra::gfx950, netra::sm90a, netra::gfx942, "
                "netra::gfx1151 (built and audited only)");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::gdn_conv: field WaveSize must equal the target's wave size (gfx950, gfx942: 64; sm90a, gfx1151: 32)");
  static_assert(MaxBatch >= 1 && MaxBatch <= 128, "netra::contracts::gdn_conv: field MaxBatch must be in [1, 128]");
  static_assert(Tokens >= 1 && Tokens <= 16, "netra::contracts::gdn_conv: field Tokens must be in [1, 16]");
  static_assert(Layout == gdn::conv_layout::channel_major || Layout == gdn::conv_layout::tap_major,
                "netra::contracts::gdn_conv: field Layout must be 0 (channel_major [slots, D, 3]) or 1 (tap_major [slots, 3, D])");
  static_assert(Writes == gdn::conv_writes::final_state || Writes == gdn::conv_writes::windows,
                "netra::contracts::gdn_conv: field Writes must be 0 (final_state) or 1 (windows)");
  static_assert(Staging == gdn::token_staging::per_token || Staging == gdn::token_staging::block || Staging == gdn::token_staging::next_token,
                "netra::contracts::gdn_conv: field Staging must be 0 (per_token), 1 (block) or 2 (next_token)");
  static_assert((Threads == 64 || Threads == 256) && Threads % WaveSize == 0, "netra::contracts::gdn_conv: field Threads must be 64 or 256");
  static_assert(TokenGroups >= 1 && Tokens % TokenGroups == 0, "netra::contracts::gdn_conv: field TokenGroups must divide Tokens");
  static_assert(WorkgroupsPerProcessor * Threads <= 2048, "netra::contracts::gdn_conv: field WorkgroupsPerProcessor times Threads must be at most 2048");
  static_assert(ChannelsPerThread == 8 || ChannelsPerThread == 4, "netra::contracts::gdn_conv: field ChannelsPerThread must be 8 or 4");
  static_assert(Division == gdn::conv_division::integer_seed || Division == gdn::conv_division::instruction_seed,
                "netra::contracts::gdn_conv: field Division must be 0 (integer seed) or 1 (instruction seed)");
  static_assert(WindowStores == gdn::window_stores::plain || (WindowStores == gdn::window_stores::streaming && Writes == gdn::conv_writes::windows),
                "netra::contracts::gdn_conv: field WindowStores must be 0 (plain) or 1 (streaming, with Writes = windows)");
  static_assert(Silu == gdn::conv_silu_form::selects || Silu == gdn::conv_silu_form::lean,
                "netra::contracts::gdn_conv: field Silu must be 0 (selects) or 1 (lean)");

  using target = Target;
  static constexpr const char* family = "gdn_conv";
  static constexpr const char* template_name = "netra::contracts::gdn_conv";
  static constexpr u32 max_batch = MaxBatch;
  static constexpr u32 tokens = Tokens;
  static constexpr u32 layout = Layout;
  static constexpr u32 writes = Writes;
  static constexpr u32 wave_size = WaveSize;
  static constexpr u64 workspace_bytes = 0;
  static constexpr u64 state_bytes_per_slot = u64{gdn::channels} * gdn::conv_history * 2;
  static constexpr u32 staging = Staging;
  static constexpr u32 threads = Threads;
  static constexpr u32 token_groups = TokenGroups;
  static constexpr u32 workgroups_per_processor = WorkgroupsPerProcessor;
  static constexpr u32 channels_per_thread = ChannelsPerThread;
  static constexpr u32 division = Division;
  static constexpr u32 window_stores = WindowStores;
  static constexpr u32 silu = Silu;
  static constexpr const auto& template_args =
      conditional_t<Silu != 0,
                    gdn_conv_args<MaxBatch, Tokens, Layout, Writes, Staging, Threads, TokenGroups, WorkgroupsPerProcessor, ChannelsPerThread, Division, WindowStores, Silu>,
      conditional_t<Division != 0 || WindowStores != 0,
                    gdn_conv_args<MaxBatch, Tokens, Layout, Writes, Staging, Threads, TokenGroups, WorkgroupsPerProcessor, ChannelsPerThread, Division, WindowStores>,
      conditional_t<ChannelsPerThread != 8,
                    gdn_conv_args<MaxBatch, Tokens, Layout, Writes, Staging, Threads, TokenGroups, WorkgroupsPerProcessor, ChannelsPerThread>,
                    conditional_t<WorkgroupsPerProcessor != 0, gdn_conv_args<MaxBatch, Tokens, Layout, Writes, Staging, Threads, TokenGroups, WorkgroupsPerProcessor>,
                    conditional_t<Staging == gdn::token_staging::per_token && Threads == 256 && TokenGroups == 1, gdn_conv_args<MaxBatch, Tokens, Layout, Writes>,
                                  gdn_conv_args<MaxBatch, Tokens, Layout, Writes, Staging, Threads, TokenGroups>>>>>>::value;

  static constexpr bool channel_major = Layout == gdn::conv_layout::channel_major;

  static decision admits(const gdn_conv_signature& s) {
    constexpr i64 D = gdn::channels, H = gdn::conv_history;
    if (const decision d = gdn::admit_slots<Target>(s.target, s.slots, s.device, MaxBatch); !d.admitted()) return d;
    const i64 B = s.batch();
    if (const decision d = require_tensor(s.x, {"x", dtype::bf16, 2, {B * Tokens, D}, "[B T, 8192] (T = Tokens)", layout::rows, 16}, s.device);
        !d.admitted())
      return d;
    if (const decision d = gdn::admit_row_stride("x row stride", s.x); !d.admitted()) return d;
    if (const decision d = require_tensor(s.weight, {"weight", dtype::bf16, 2, {D, 4}, "[8192, 4]", layout::compact, 16}, s.device); !d.admitted())
      return d;
    if (const decision d = require_tensor(s.y, {"y", dtype::bf16, 2, {B * Tokens, D}, "[B T, 8192]", layout::compact, 16}, s.device); !d.admitted())
      return d;
    if (const decision d = require_tensor(s.state, {"state", dtype::bf16, 3, {-1, channel_major ? D : H, channel_major ? H : D},
                                                    channel_major ? "[slots, 8192, 3]" : "[slots, 3, 8192]", layout::compact, 16},
                                          s.device);
        !d.admitted())
      return d;
    if (const decision d = gdn::admit_pool_slots(s.state_slots()); !d.admitted()) return d;
    if constexpr (Writes == gdn::conv_writes::windows)
      if (const decision d = require_tensor(s.windows, {"windows", dtype::bf16, 4, {B, Tokens, channel_major ? D : H, channel_major ? H : D},
                                                        channel_major ? "[B, T, 8192, 3]" : "[B, T, 3, 8192]", layout::compact, 16},
                                            s.device);
          !d.admitted())
        return d;
    return admit();
  }

  static constexpr resource_budget budget() {
    if constexpr (is_amd_v<Target>) {
      resource_budget b;
      // per token, the history held as 3 x vectors, SiLU's division branch-free: gfx950 64-80 VGPRs,
      // gfx942 68-84, gfx1151 60-79 (26 / 26-27 / 22 SGPRs);
      // block: + T x 4 for the x vectors. The article's conv: 33 VGPRs, 34 SGPRs
      const u32 base = same_v<Target, gfx1151> ? 120 : 104;
      b.max_vgprs = Staging == gdn::token_staging::block ? base + 4 * Tokens / TokenGroups : base;
      b.max_sgprs = 56;
      b.max_code_bytes = 12288;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      // block: measured 102-160; next_token: 76-99
      b.max_registers = Staging == gdn::token_staging::block ? 128 + 4 * Tokens / TokenGroups : Staging == gdn::token_staging::next_token ? 104 : 96;
      if (WorkgroupsPerProcessor != 0 && 65536 / (WorkgroupsPerProcessor * Threads) < b.max_registers) b.max_registers = 65536 / (WorkgroupsPerProcessor * Threads);
      b.max_code_bytes = Staging == gdn::token_staging::block ? 81920 : 32768;  // block: the token loop unrolled (measured up to 67 KB)
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::gdn_conv: no resource budget for this target");
    }
  }
};

}  // namespace contracts
}  // namespace netra
