// netra/contracts/moe/expert_unit_list.hpp — the unit list of a decode gate_up call: what the
// unit_list schedule of contracts::moe_expert_gate_up writes into its workspace before its
// projection kernel runs (and what that kernel reads).
//
// Keys: an expert id in [0, 257) is its own key; every other id has the key `invalid_key` (its
// routes get rows of +0.0). The occurrence of route r is the number of routes before r with
// r's key. A unit is the routes of one key at occurrences [16 u, 16 u + 16), in route order;
// units are numbered in the route order of their first routes (the route at occurrence 16 u).
// Layout, 32-bit words; one 128-byte line per unit, so a wave reads its unit in one round trip:
//   header   words [0, 32)              word 0: the number of units U (<= routes); words 1, 2: the
//                                       counters a resident gate_up claims items and counts finished
//                                       workgroups with (claims, finished), 0 between calls; the rest
//                                       unused
//   unit j   words [32 + 32 j, + 32)    0: the id of the unit's first route (for the invalid key,
//                                          that route's own invalid id)
//                                       1: columns, the unit's route count (1 .. 16)
//                                       2 + c: the route of column c (occurrence 16 u + c), c < columns
// Words not named here are unspecified. Device-light: no standard library.
#pragma once
#include "netra/contracts/moe/expert_weights.hpp"

namespace netra::moe {

struct expert_unit_list {
  static constexpr u32 header_words = 32;
  static constexpr u32 count_word = 0;
  static constexpr u32 claims_word = 1;
  static constexpr u32 finished_word = 2;
  static constexpr u32 unit_words = 32;
  static constexpr u32 max_columns = 16;
  static constexpr u32 expert_word = 0;
  static constexpr u32 columns_word = 1;
  static constexpr u32 first_route_word = 2;
  static constexpr u32 invalid_key = expert_weights::experts;  // 257
  static constexpr u32 keys = invalid_key + 1;
  static_assert(first_route_word + max_columns <= unit_words, "netra::moe::expert_unit_list: a unit's words fit its line");

  /// Bytes of the header alone (a resident gate_up keeps its list in LDS: only the counters).
  static constexpr u64 header_bytes = 4ull * header_words;
  /// Bytes of the list for up to `max_routes` routes (one unit per route at most).
  NETRA_HOST_DEVICE static constexpr u64 bytes(u32 max_routes) { return 4ull * (header_words + static_cast<u64>(unit_words) * max_routes); }
  /// Word index of word `w` of unit j.
  NETRA_HOST_DEVICE static constexpr u64 unit_word(u32 j, u32 w) { return header_words + static_cast<u64>(unit_words) * j + w; }
  NETRA_HOST_DEVICE static constexpr u32 key_of(i32 id) { return expert_weights::valid_expert(id) ? static_cast<u32>(id) : invalid_key; }
};

}  // namespace netra::moe
