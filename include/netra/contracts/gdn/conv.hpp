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
// their own y and windows rows).
// Mapping parameter: none beyond the layout; comparison policy: bitwise.
#pragma once
#include "netra/contracts/gdn/model.hpp"

namespace netra {

struct gdn_conv_signature {
  target_id target;
  dtype x_dtype = dtype::bf16, weight_dtype = dtype::bf16, y_dtype = dtype::bf16, state_dtype = dtype::bf16;
  dtype slot_dtype = dtype::i32;
  i64 batch = 0, tokens = 0, channels = 0, width = 0;
  i64 x_row_stride = 0;  // elements
  i64 state_slots = 0;   // capacity of the pool, the sentinel included
  u32 layout = 0;        // gdn::conv_layout of the pool (and the windows)
  const void* x = nullptr;
  const void* weight = nullptr;  // [D, 4] BF16
  const void* y = nullptr;       // [B T, D] BF16
  const void* state = nullptr;   // the pool
  const void* slots = nullptr;   // [B] i32
  const void* windows = nullptr; // [B, T, ...] (Writes = windows)
};

namespace contracts {

template <class Target, u32 MaxBatch, u32 Tokens, u32 Layout, u32 Writes, u32 WaveSize = Target::wave_size>
struct gdn_conv {
  static_assert(is_built_target_v<Target>,
                "netra::contracts::gdn_conv: field Target is not supported; supported: netra::gfx950, netra::sm90a");
  static_assert(WaveSize == Target::wave_size,
                "netra::contracts::gdn_conv: field WaveSize must equal the target's wave size (gfx950: 64; sm90a: 32)");
  static_assert(MaxBatch >= 1 && MaxBatch <= 128, "netra::contracts::gdn_conv: field MaxBatch must be in [1, 128]");
  static_assert(Tokens >= 1 && Tokens <= 16, "netra::contracts::gdn_conv: field Tokens must be in [1, 16]");
  static_assert(Layout == gdn::conv_layout::channel_major || Layout == gdn::conv_layout::tap_major,
                "netra::contracts::gdn_conv: field Layout must be 0 (channel_major [slots, D, 3]) or 1 (tap_major [slots, 3, D])");
  static_assert(Writes == gdn::conv_writes::final_state || Writes == gdn::conv_writes::windows,
                "netra::contracts::gdn_conv: field Writes must be 0 (final_state) or 1 (windows)");

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
  static constexpr u64 windows_bytes(i64 batch) { return static_cast<u64>(batch) * Tokens * state_bytes_per_slot; }
  static constexpr i64 template_args[] = {MaxBatch, Tokens, Layout, Writes};

  static decision admits(const gdn_conv_signature& s) {
    if (s.target != Target::id) return refuse("target", Target::name, s.target);
    if (s.x_dtype != dtype::bf16) return refuse("x dtype", "bf16", s.x_dtype);
    if (s.weight_dtype != dtype::bf16) return refuse("weight dtype", "bf16", s.weight_dtype);
    if (s.y_dtype != dtype::bf16) return refuse("y dtype", "bf16", s.y_dtype);
    if (s.state_dtype != dtype::bf16) return refuse("state dtype", "bf16", s.state_dtype);
    if (s.slot_dtype != dtype::i32) return refuse("slots dtype", "i32", s.slot_dtype);
    if (s.channels != gdn::channels) return refuse("channels", "8192 (q | k | v of 16 / 16 / 32 heads of 128)", s.channels);
    if (s.width != gdn::conv_width) return refuse("width", "4", s.width);
    if (s.tokens != Tokens) return refuse("tokens", "== Tokens of the contract", s.tokens);
    if (s.batch < 1 || s.batch > MaxBatch) return refuse("batch", "in [1, MaxBatch]", s.batch);
    if (s.state_slots < 2 || s.state_slots > 0x7FFFFFFF) return refuse("state_slots", "in [2, 2^31 - 1] (one real slot and the sentinel)", s.state_slots);
    if (s.layout != Layout) return refuse("layout", "== Layout of the contract", static_cast<i64>(s.layout));
    if (s.x_row_stride < gdn::channels || s.x_row_stride % 8 != 0)
      return refuse("x_row_stride", ">= 8192 and a multiple of 8 elements (16-byte aligned rows)", s.x_row_stride);
    if (const decision d = require_pointer<16>("x", s.x); !d.admitted()) return d;
    if (const decision d = require_pointer<16>("weight", s.weight); !d.admitted()) return d;
    if (const decision d = require_pointer<16>("y", s.y); !d.admitted()) return d;
    if (const decision d = require_pointer<16>("state", s.state); !d.admitted()) return d;
    if (const decision d = require_pointer<4>("slots", s.slots); !d.admitted()) return d;
    if constexpr (Writes == gdn::conv_writes::windows)
      if (const decision d = require_pointer<16>("windows", s.windows); !d.admitted()) return d;
    return admit();
  }

  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      resource_budget b;
      b.max_vgprs = 104;  // measured 96-98 (8 channels' SiLU divisions interleaved); the article's conv: 33 VGPRs, 34 SGPRs
      b.max_sgprs = 56;
      b.max_code_bytes = 12288;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 96;
      b.max_code_bytes = 32768;
      return b;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::gdn_conv: no resource budget for this target");
    }
  }
};

}  // namespace contracts
}  // namespace netra
