// netra/kernels/gdn/conv_history.hpp — where a thread's C channels (8, or 4) x 3 history values lie
// in a conv state slot (or one window) of either layout, as three vectors of C BF16 values (16 or
// 8 bytes).
//   channel_major [D, 3]: vector v (0..2) starts at element 3 c0 + C v; value (c, j) of the
//     thread's channels c0 .. c0 + C - 1 is element 3 (c - c0) + j of the 3 C, i.e. vector (3 c + j) / C.
//   tap_major [3, D]: vector v = history position j, starting at element j D + c0; value (c, j) is
//     element c - c0 of vector j.
// Shared by the conv update and the replay's conv commit (which copies whole 16-byte vectors).
#pragma once
#include "netra/contracts/gdn/model.hpp"
#include "netra/dsl/vector_types.hpp"

namespace netra::kernels::gdn_conv_map {
inline constexpr u32 channels_per_thread = 8;  // the default map's C
inline constexpr u32 vectors = gdn::conv_history;  // 3 vectors of C BF16 values per thread
inline constexpr u64 slot_elements = u64{gdn::channels} * gdn::conv_history;

/// Element offset of history vector v of the thread whose first channel is c0, inside a slot.
NETRA_HOST_DEVICE constexpr u64 vector_offset(u32 layout, u32 c0, u32 v, u32 C = channels_per_thread) {
  return layout == gdn::conv_layout::channel_major ? u64{3} * c0 + C * v : u64{v} * gdn::channels + c0;
}
/// (vector, element) of history value (channel c0 + c, position j).
NETRA_HOST_DEVICE constexpr u32 vector_of(u32 layout, u32 c, u32 j, u32 C = channels_per_thread) {
  return layout == gdn::conv_layout::channel_major ? (3 * c + j) / C : j;
}
NETRA_HOST_DEVICE constexpr u32 element_of(u32 layout, u32 c, u32 j, u32 C = channels_per_thread) {
  return layout == gdn::conv_layout::channel_major ? (3 * c + j) % C : c;
}

/// A thread's vector of C BF16 values (C / 2 packed words: 16 bytes for C 8, 8 bytes for C 4).
template <u32 C> struct bf16_vector {
  u32 w[C / 2];
};
/// BF16 value e (0..7) of a 16-byte vector, as raw bits.
NETRA_HOST_DEVICE constexpr u16 half_of(const u32x4& v, u32 e) { return static_cast<u16>(v[static_cast<int>(e / 2)] >> (16 * (e % 2))); }
/// BF16 value e (0..C-1) of a vector of C values, as raw bits.
template <u32 C> NETRA_HOST_DEVICE constexpr u16 half_of(const bf16_vector<C>& v, u32 e) { return static_cast<u16>(v.w[e / 2] >> (16 * (e % 2))); }
}  // namespace netra::kernels::gdn_conv_map
