// netra/contracts/gdn/model.hpp — the gated delta net geometry every gdn contract shares (Qwen3.6
// linear-attention layers) and the named values of the gdn contract fields.
//
// Heads: 16 q/k heads, 32 v heads; v head hv reads q/k head hv / 2. K = V = 128.
// The conv runs over the concatenated channels q | k | v of one token row:
//   q head h: channels [128 h, 128 h + 128); k head h: 2048 + 128 h ..; v head hv: 4096 + 128 hv ..
//   D = 2 * 16 * 128 + 32 * 128 = 8192, width 4.
// Recurrent state of v head hv: S[i][j], i = key index 0..127, j = value index 0..127, stored
// [slots, 32, V, K] (key index fastest: S[.][hv][j][i]), FP32 or BF16 (state_storage).
//
// One recurrent step (token t of a request; a = exp(g_t), beta_t, q_t, k_t normalised; v_t):
//   1. S[i][j] <- a * S[i][j]                                   (mul, every element)
//   2. d_j = dot(S[., j], k)                                     (the fixed dot order below)
//   3. u_j = beta * (v_j - d_j)                                  (sub, then mul)
//   4. S[i][j] <- fma(k_i, u_j, S[i][j])                         (one rounding)
//   5. o_j = dot(S[., j], q)  -> bf16(o_j), round to nearest even
// dot(x, y) over i = 0..127: four partials p_r over the rows [32 r, 32 r + 32), each
//   p = x[32 r] * y[32 r], then p = fma(x[i], y[i], p) for i = 32 r + 1 .. 32 r + 31 in
//   increasing i; dot = (p_0 + p_1) + (p_2 + p_3).
// FP32 operations per state element per token: 4 (mul, fma, fma, fma), plus the O(V) steps 3 and
// the dot's three adds per column. Replay (no output) does steps 1-4: 3 per element. Issued per
// element per token on sm90a (SASS of the token loop, whole-head map): 5.47 instructions with FP32
// state, 5.00 with BF16, 3.47 in the replay — the FP32 operations plus k / q reads, shuffles and
// moves (docs/kernels/gdn.md counts them by opcode).
// State storage BF16: loaded exactly (bf16 -> f32), stored with round to nearest even (NaN ->
// 0x7FFF) once, after the last step; every step runs in FP32.
#pragma once
#include "netra/contracts/common.hpp"

namespace netra::gdn {
inline constexpr u32 heads_qk = 16;
inline constexpr u32 heads_v = 32;
inline constexpr u32 key_dim = 128;
inline constexpr u32 value_dim = 128;
inline constexpr u32 q_offset = 0;
inline constexpr u32 k_offset = heads_qk * key_dim;          // 2048
inline constexpr u32 v_offset = 2 * heads_qk * key_dim;      // 4096
inline constexpr u32 channels = v_offset + heads_v * value_dim;  // 8192
inline constexpr u32 conv_width = 4;
inline constexpr u32 conv_history = conv_width - 1;          // 3 values per channel in the state
inline constexpr u32 state_elements = heads_v * value_dim * key_dim;  // per slot
inline constexpr float l2_eps = 1e-6f;                       // q, k / sqrt(sum x^2 + eps)
inline constexpr float q_scale = 0x1.6a09e6p-4f;             // 128^-1/2 rounded to FP32

/// Field state_storage: how the recurrent state is stored (math is FP32 either way).
namespace state_storage {
inline constexpr u32 fp32 = 0;
inline constexpr u32 bf16 = 1;
}  // namespace state_storage
NETRA_HOST_DEVICE constexpr u32 state_bytes_per_element(u32 storage) { return storage == state_storage::fp32 ? 4u : 2u; }

/// Field conv_layout: the conv state pool's layout (both SGLang conventions).
namespace conv_layout {
inline constexpr u32 channel_major = 0;  // [slots, D, W - 1]: the 3 history values of a channel adjacent
inline constexpr u32 tap_major = 1;      // [slots, W - 1, D]: one history position across all channels
}  // namespace conv_layout

/// Field conv_writes: what the conv update writes besides y.
namespace conv_writes {
inline constexpr u32 final_state = 0;  // the state after the last token, into the request's slot
inline constexpr u32 windows = 1;      // the state after every token, into windows[b, t]; the slot is not written
}  // namespace conv_writes

/// Field staging of the recurrent core (a mapping parameter: the same bits either way).
namespace token_staging {
inline constexpr u32 per_token = 0;  // every token's k, q, v, decay, beta loaded from global memory in the token loop
inline constexpr u32 block = 1;      // the whole token block of the head staged in LDS first, one workgroup barrier
}  // namespace token_staging

/// Field state_commit of the recurrent core: what reaches the state pool.
namespace state_commit {
inline constexpr u32 none = 0;             // K0 verify: outputs of all T tokens, the state only read
inline constexpr u32 final = 1;            // M16: outputs of all T tokens and the state after token T
inline constexpr u32 accepted_prefix = 2;  // replay: the state after the first accepted[b] tokens; no outputs
}  // namespace state_commit

/// NaN as one bit pattern (0x7FC00000): the NaN payloads of the division sequences differ
/// between targets, so outputs that can be NaN are canonicalised.
NETRA_HOST_DEVICE constexpr float canonical_nan(float x) { return x != x ? bit_cast<float>(0x7FC00000u) : x; }

/// The refusal of tensor `t` at its shape, with `text` the shape the contract wants.
NETRA_HOST_DEVICE decision refuse_shape(const char* field, const char* text, const tensor_arg& t) {
  decision d = refuse(field, text, 0, value_kind::shape);
  d.count = t.rank < max_tensor_rank ? t.rank : max_tensor_rank;
  for (i32 i = 0; i < d.count; ++i) d.values[i] = t.shape[i];
  return d;
}
/// The stride between rows of a [rows, cols] tensor in elements (a single row: its length).
NETRA_HOST_DEVICE constexpr i64 row_stride(const tensor_arg& t) { return t.extent(0) == 1 ? t.extent(1) : t.strides[0]; }
}  // namespace netra::gdn
