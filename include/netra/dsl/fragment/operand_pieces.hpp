// netra/dsl/fragment/operand_pieces.hpp — how the lanes of a wave fetch one operand (A or B) of a
// matrix instruction from memory, derived from the shape's a_element / b_element maps
// (dsl/matrix_fragment.hpp, dsl/matrix_fragment_bf16.hpp): nothing here is written per target.
//
// Terms. An operand "index" is a row m of A or a column n of B; "k" runs along K. A lane holds
// `slots` indices of the operand (slot s: its s-th index, ascending; mma.sync A: rows g, g + 8;
// every other shape: 1) and, for each, the same K positions: the lane's "group" g(l) = (k of its
// element 0) / (its first run of contiguous k); the lanes sharing an index are groups
// 0 .. groups - 1. Replicas: where an instruction reads each (index, group) from more than one
// lane (WMMA at wave32: lanes l and l + 16 hold the same row), the lanes holding one are its
// `replicas`, `replica_stride` apart, and each loads the same pieces (the maps below are those of
// the lowest such lane); every other shape has replicas = 1, and the maps are unchanged.
// Pieces. A piece is one 16-byte load: 16 contiguous bytes along K of one index. Over a run of
// `steps` instructions along K, lane l numbers its words of slot s in (instruction, word) order
// and takes them 4 at a time: piece p of slot s is words 4p .. 4p + 3 of that sequence, and it
// is loaded from memory k = piece_elements * (groups * p + g(l)) of the run's K (flat piece
// index v = slots * p + s). Instruction q then takes its word i from word_of(q, i) = (piece,
// word). This permutes K (memory k -> instruction k) by group and position only, so A and B
// built from it pair the same memory k in every product: the run's sum over K is unchanged.
// Where the instruction's own K order is already group-strided (every MFMA shape here) the
// permutation is the identity.
//   tests/dsl/test_fragment_pieces.cpp proves every shape's maps against the independent
//   instruction models of tests/models/ (exact small-integer data, and a wrong map that fails).
#pragma once
#include "netra/dsl/matrix_fragment.hpp"
#include "netra/dsl/matrix_fragment_bf16.hpp"
#include "netra/dsl/matrix_fragment_targets.hpp"

namespace netra::fragment {

enum class operand : u8 { a, b };

/// An operand element seen from its lane: the index (A row / B column) and its k.
struct operand_element {
  u32 index;
  u32 k;
};
/// A 16-byte piece: `index` (A row / B column, inside the instruction) and its first k.
struct piece {
  u32 index;
  u32 k;
};
/// Where an instruction's register word comes from: word `word` (0..3) of piece `piece`.
struct word_source {
  u32 piece;
  u32 word;
};

template <class Shape, operand Op> struct operand_pieces {
  static_assert(is_fragment_shape_v<Shape> || is_bf16_fragment_shape_v<Shape> || is_target_fragment_shape_v<Shape>,
                "netra::fragment::operand_pieces: not a fragment shape netra knows (dsl/matrix_fragment*.hpp)");
  using shape = Shape;
  static constexpr u32 wave = Shape::wave_size;
  static constexpr u32 word_elements = 32 / Shape::input_bits;
  static constexpr u32 piece_words = 4;
  static constexpr u32 piece_elements = piece_words * word_elements;
  static constexpr u32 words = Op == operand::a ? Shape::a_words : Shape::b_words;  // per lane and instruction
  static constexpr u32 elements = words * word_elements;

  NETRA_HOST_DEVICE static constexpr operand_element element(u32 lane, u32 e) {
    if constexpr (Op == operand::a) {
      const fragment_element x = Shape::a_element(lane, e);
      return {x.row, x.col};
    } else {
      const fragment_element x = Shape::b_element(lane, e);
      return {x.col, x.row};
    }
  }

  // ---- the structure, from lane 0's words by search (compile time only; checked for every
  // lane by is_consistent), then as closed forms, which the kernels' index arithmetic folds ----
  /// Slot of word i by search: how many distinct smaller indices lane 0's words hold.
  NETRA_HOST_DEVICE static constexpr u32 searched_slot(u32 i) {
    const u32 mine = element(0, i * word_elements).index;
    u32 below = 0;
    for (u32 j = 0; j < words; ++j) {
      const u32 x = element(0, j * word_elements).index;
      bool first = true;  // count each distinct index once
      for (u32 jj = 0; jj < j; ++jj) first = first && element(0, jj * word_elements).index != x;
      below += first && x < mine ? 1 : 0;
    }
    return below;
  }
  NETRA_HOST_DEVICE static constexpr u32 count_slots() {
    u32 n = 0;
    for (u32 i = 0; i < words; ++i) n = max_of(n, searched_slot(i) + 1);
    return n;
  }
  static constexpr u32 slots = count_slots();
  static constexpr u32 slot_words = words / slots;
  /// Words of one slot before the next slot's (the slots interleave with this period).
  NETRA_HOST_DEVICE static constexpr u32 find_slot_period() {
    for (u32 i = 0; i < words; ++i)
      if (searched_slot(i) != 0) return i;
    return words;
  }
  static constexpr u32 slot_period = find_slot_period();
  NETRA_HOST_DEVICE static constexpr u32 slot_of_word(u32 i) { return (i / slot_period) % slots; }
  /// Position of word i among the lane's words of its slot.
  NETRA_HOST_DEVICE static constexpr u32 rank_of_word(u32 i) { return (i / (slot_period * slots)) * slot_period + i % slot_period; }
  /// The first word of slot s.
  NETRA_HOST_DEVICE static constexpr u32 first_word_of_slot(u32 s) { return s * slot_period; }
  NETRA_HOST_DEVICE static constexpr u32 searched_rank(u32 i) {
    u32 r = 0;
    for (u32 j = 0; j < i; ++j) r += searched_slot(j) == searched_slot(i) ? 1 : 0;
    return r;
  }
  /// Lane 0's first run of contiguous k (elements).
  NETRA_HOST_DEVICE static constexpr u32 first_run() {
    u32 n = 1;
    while (n < elements && element(0, n).index == element(0, 0).index && element(0, n).k == element(0, 0).k + n) ++n;
    return n;
  }
  static constexpr u32 run = first_run();
  static constexpr u32 groups = Shape::k / (slot_words * word_elements);

  /// The lane's group scaled to pieces: piece_elements * g(l) = (piece_elements / run) * k of
  /// element 0 (a product, no division, so that it folds into the lane's address arithmetic;
  /// a run longer than a piece divides).
  NETRA_HOST_DEVICE static constexpr u32 group_k(u32 lane) {
    if constexpr (run <= piece_elements) return (piece_elements / run) * element(lane, 0).k;
    else return piece_elements * (element(lane, 0).k / run);
  }
  NETRA_HOST_DEVICE static constexpr u32 group(u32 lane) { return element(lane, 0).k / run; }
  /// Pieces per lane that a run of `steps` instructions uses.
  NETRA_HOST_DEVICE static constexpr u32 pieces(u32 steps) { return slots * (steps * slot_words / piece_words); }
  /// K (elements) a run of `steps` instructions covers.
  NETRA_HOST_DEVICE static constexpr u32 run_k(u32 steps) { return steps * Shape::k; }

  /// Piece v of lane `lane`: its index and first k inside the run.
  NETRA_HOST_DEVICE static constexpr piece piece_of(u32 lane, u32 v) {
    return {element(lane, first_word_of_slot(v % slots) * word_elements).index, group_k(lane) + piece_elements * groups * (v / slots)};
  }
  /// Word i of instruction q of the run.
  NETRA_HOST_DEVICE static constexpr word_source word_of(u32 q, u32 i) {
    const u32 seq = q * slot_words + rank_of_word(i);
    return {slots * (seq / piece_words) + slot_of_word(i), seq % piece_words};
  }

  /// The lowest lane holding index `index` (B: column `index`; A: the lane's slot-0 row) in group
  /// `grp`: lane = index_stride * index + group_stride * grp (checked for every lane).
  NETRA_HOST_DEVICE static constexpr u32 find_lane(u32 index, u32 grp) {
    for (u32 l = 0; l < wave; ++l)
      if (element(l, 0).index == index && group(l) == grp) return l;
    return wave;
  }
  static constexpr u32 index_stride = find_lane(1, 0) - find_lane(0, 0);
  static constexpr u32 group_stride = find_lane(0, 1) - find_lane(0, 0);
  NETRA_HOST_DEVICE static constexpr u32 lane_of(u32 index, u32 grp) { return index_stride * index + group_stride * grp; }
  /// The next lane holding lane 0's (index, group), if any: the replicas' stride (wave if none).
  NETRA_HOST_DEVICE static constexpr u32 find_replica_stride() {
    for (u32 l = 1; l < wave; ++l)
      if (element(l, 0).index == element(0, 0).index && group(l) == 0) return l;
    return wave;
  }
  static constexpr u32 replica_stride = find_replica_stride();
  /// Lanes holding each (index, group), replica_stride apart (1 for every shape but WMMA's).
  static constexpr u32 replicas = wave / replica_stride;
  /// Which of its index's replicas lane `lane` is (0 for the lowest).
  NETRA_HOST_DEVICE static constexpr u32 replica(u32 lane) { return (lane - lane_of(element(lane, 0).index, group(lane))) / replica_stride; }

  /// The invariants the maps above rely on, for every lane.
  NETRA_HOST_DEVICE static constexpr bool is_consistent() {
    if (Shape::input_bits != 8 && Shape::input_bits != 16) return false;
    if (words % slots != 0 || slot_words * slots != words) return false;
    if ((piece_elements % run != 0 && run % piece_elements != 0) || groups * slot_words * word_elements != Shape::k) return false;
    if (wave % replica_stride != 0 || !is_pow2(replicas)) return false;
    if (find_lane(0, 0) != 0 || find_lane(1, 0) >= wave || (groups > 1 && find_lane(0, 1) >= wave)) return false;
    if (!is_pow2(groups) || (groups > 1 && !is_pow2(group_stride))) return false;
    for (u32 l = 0; l < wave; ++l) {
      if (element(l, 0).k % run != 0 || group(l) >= groups) return false;
      // the lowest lane of the lane's (index, group), then its replicas, each the same elements
      const u32 base = lane_of(element(l, 0).index, group(l));
      if (base > l || (l - base) % replica_stride != 0 || replica(l) >= replicas || base % replica_stride != base) return false;
      for (u32 e = 0; e < elements; ++e)
        if (element(l, e).index != element(base, e).index || element(l, e).k != element(base, e).k) return false;
      for (u32 i = 0; i < words; ++i) {
        if (l == 0 && (slot_of_word(i) != searched_slot(i) || rank_of_word(i) != searched_rank(i))) return false;
        // every word is whole elements of one index, the slot's; words of a slot ascend in k
        // within the group's run structure: the lane's words of a slot cover its group's k
        for (u32 j = 1; j < word_elements; ++j) {
          const operand_element a = element(l, i * word_elements), b = element(l, i * word_elements + j);
          if (b.index != a.index || b.k != a.k + j) return false;
        }
        if (element(l, i * word_elements).index != element(l, first_word_of_slot(slot_of_word(i)) * word_elements).index) return false;
      }
    }
    return true;
  }
  static_assert(is_consistent(), "netra::fragment::operand_pieces: the shape's lane map is not group-structured (see the file comment)");
};

template <class Shape> using a_pieces = operand_pieces<Shape, operand::a>;
template <class Shape> using b_pieces = operand_pieces<Shape, operand::b>;

}  // namespace netra::fragment
