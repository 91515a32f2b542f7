// netra/kernels/attention/gqa8_geometry.hpp — what both attention_gqa8 stages read of a request
// (contracts/attention/gqa8_paged.hpp): its query extent, KV length, slices, and the pool slot of
// a position (masked when its page-table entry or slot lies outside what the call declares).
#pragma once
#include "netra/contracts/attention/gqa8_paged.hpp"

namespace netra::kernels {

/// Kernel arguments shared by both stages (one struct: the stages see the same call).
struct attention_gqa8_args {
  const u16* q;              // [q_tokens, 16, 256] BF16
  u16* out;                  // [q_tokens, 16, 256] BF16
  const u8* k_buffer;        // [slots, 2, 256] E4M3
  const u8* v_buffer;        // [slots, 2, 256] E4M3
  const i64* qo_indptr;      // [batch + 1]
  const i32* kv_indptr;      // [batch + 1]
  const i64* kv_indices;     // [kv_indices_count]
  const i32* kv_last_page_len;  // [batch] (page size 16)
  const float* k_scale;
  const float* v_scale;
  float* split_o;            // workspace: [batch * slices, 2, rows, 256] FP32
  float* split_stats;        // workspace: [batch * slices, 2, rows] (m, l)
  i64 q_tokens;
  i64 slots;
  i64 kv_indices_count;
  u32 slices;
};

template <class Contract> struct attention_gqa8_request {
  i64 first_token;  // qo_indptr[b]
  i64 length;       // L_b
  i32 kv_begin;     // kv_indptr[b]
  bool writable;    // the query extent is Tq and inside q / out

  NETRA_HOST_DEVICE static attention_gqa8_request read(const attention_gqa8_args& a, u32 b) {
    attention_gqa8_request r;
    r.first_token = a.qo_indptr[b];
    r.writable = a.qo_indptr[b + 1] - r.first_token == Contract::tq && r.first_token >= 0 && r.first_token + Contract::tq <= a.q_tokens;
    r.kv_begin = a.kv_indptr[b];
    const i64 entries = max_of(i64{0}, static_cast<i64>(a.kv_indptr[b + 1]) - r.kv_begin);
    if constexpr (Contract::page_size == 1) {
      r.length = entries;
    } else {
      const i64 last = min_of(i64{Contract::page_size}, max_of(i64{0}, static_cast<i64>(a.kv_last_page_len[b])));
      r.length = entries == 0 ? 0 : Contract::page_size * (entries - 1) + last;
    }
    return r;
  }

  /// The page-table entry of position p (p < length), or -1 when the entry lies outside
  /// kv_indices: the one load of a look-up, kept apart from slot_of() so that a kernel can issue
  /// it well before it needs the slot.
  NETRA_HOST_DEVICE i64 page_of(const attention_gqa8_args& a, i64 p) const {
    const i64 entry = static_cast<i64>(kv_begin) + p / Contract::page_size;
    return entry < 0 || entry >= a.kv_indices_count ? -1 : a.kv_indices[entry];
  }
  /// The pool slot of position p given its page, or -1 when it is masked (outside the pool).
  NETRA_HOST_DEVICE static i64 slot_of(const attention_gqa8_args& a, i64 page, i64 p) {
    if (page < 0 || page >= a.slots / Contract::page_size) return -1;
    return page * Contract::page_size + p % Contract::page_size;
  }
};

/// The 16-byte slot of (position, chunk) in a staged 64 x 256-byte K or V block. The XOR spreads
/// the chunks that one instruction's lanes read over distinct banks: K reads (position 8nt + g,
/// chunk 4c + t on sm90a; 16 positions x one chunk on gfx950) and V reads (positions 2t + e,
/// chunks 2g + h on sm90a; one position x 16 chunks on gfx950).
NETRA_HOST_DEVICE constexpr u32 staged_k_chunk(u32 pos, u32 chunk) { return 16 * pos + (chunk ^ (((pos & 1) << 2) | ((pos >> 1) & 3))); }
NETRA_HOST_DEVICE constexpr u32 staged_v_chunk(u32 pos, u32 chunk) { return 16 * pos + (chunk ^ (((pos >> 1) & 1) | (((pos >> 2) & 1) << 2))); }

/// The 8-byte slot of the BF16 of word i of (position, chunk) in a widened 64 x 256 K or V block
/// ([position][word][chunk ^ swizzle]; each 8-byte read of one instruction lands in 16 distinct
/// bank pairs on sm90a: K reads positions 8nt + g, chunks 4c + t; V reads positions 2t + e, chunks 2g + h).
NETRA_HOST_DEVICE constexpr u32 wide_slot(bool is_v, u32 pos, u32 chunk, u32 word) {
  return (pos * 4 + word) * 16 + (chunk ^ (is_v ? (pos >> 1) & 1 : 4 * (pos & 3)));
}

}  // namespace netra::kernels
