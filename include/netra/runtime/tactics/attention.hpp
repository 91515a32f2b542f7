// netra/runtime/tactics/attention.hpp — the dispatch lists of GQA8 paged attention and GQA4 extend
// (host only).
// Graph phase is a dispatch dimension: each contract admits one phase, so a call's shape alone
// never selects a kernel (the article's lesson: a broad "M <= 16" predicate once sent a piecewise
// prefill chunk to the extend kernel; tests/contracts/test_attention_contracts.cpp repeats that
// call against this list). Inside a tactic's promoted domain (its target, phase, head shape, Tq,
// page size, BF16 [*, 16, 256] queries and E4M3 [*, 2, 256] pools on the handle's device, batch
// range) a call the contract refuses is an error, never a silent fallback.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/attention/gqa4_extend.hpp"
#include "netra/contracts/attention/gqa8_decode_wide.hpp"
#include "netra/contracts/attention/gqa8_paged.hpp"
#include "netra/runtime/tactic.hpp"

namespace netra::tactics {

template <class Contract> struct attention_gqa8_domain {
  static bool contains(const attention_signature& s) {
    return s.target == Contract::target::id && s.phase == Contract::phase && s.tq == Contract::tq && s.page_size == Contract::page_size &&
           s.q.type == dtype::bf16 && s.q.rank == 3 && s.q.shape[1] == Contract::q_heads && s.q.shape[2] == Contract::head_dim &&
           dtype_accepts(dtype::e4m3, s.k_buffer.type) && s.k_buffer.rank == 3 && s.k_buffer.shape[1] == Contract::kv_heads &&
           s.q.device == s.device && s.batch() >= 1 && s.batch() <= Contract::max_batch;
  }
};
template <class Contract> using attention_gqa8_strict = strict<Contract, attention_gqa8_domain<Contract>>;

template <class Contract, class Condition> using attention_gqa8_when_domain = domain_taken_by<attention_gqa8_domain<Contract>, Condition>;
template <class Contract, class Condition> using attention_gqa8_when = strict_when<Contract, attention_gqa8_domain<Contract>, Condition>;

/// The measured threshold between sm90a's two Stages 0 decode mappings (both admit B 1..64): from
/// B = 64 the 8-wave workgroup (one per KV head and request, no split; H200 data in
/// bench/results/attention_h200.json, docs/kernels/attention.md); below it the 2-wave mapping, not
/// measured against it between 8 and 64.
inline constexpr i64 attention_gqa8_eight_wave_min_batch = 64;
struct eight_wave_batches {
  static constexpr i64 min = attention_gqa8_eight_wave_min_batch, max = 64;
  static constexpr const char* rule = ">= tactics::attention_gqa8_eight_wave_min_batch (64; below it the 2-wave decode mapping)";
};
using from_eight_wave_min_batch = from_batch_range<eight_wave_batches>;
template <class Contract> using attention_gqa8_eight_wave_domain = attention_gqa8_when_domain<Contract, from_eight_wave_min_batch>;
using attention_gqa8_eight_wave_decode = contracts::attention_gqa8<sm90a, 0, 1, 1, 8, 0, 64, 512>;

/// sm90a decode at B = 1: 2 x 0 with each block over 4 warps (BlockSplit 4: the same bits as 2 x 0,
/// 8 warps a SM on one sequence instead of 2), chosen by measurement on the H200 (docs/kernels/
/// attention.md, "BlockSplit"): faster than 2 x 0 at B 1 (L 1024 .. 32768), slower from B 8, so
/// B = 1 only; B 2..7 not measured. The rule sees no KV length (measured up to 32768).
inline constexpr i64 attention_gqa8_block_split_max_batch = 1;
struct block_split_batches {
  static constexpr i64 min = 1, max = attention_gqa8_block_split_max_batch;
  static constexpr const char* rule = "<= tactics::attention_gqa8_block_split_max_batch (1; above it 2 x 0 without BlockSplit)";
};
using up_to_block_split_max_batch = from_batch_range<block_split_batches>;
using attention_gqa8_block_split_decode = contracts::attention_gqa8<sm90a, 0, 1, 1, 2, 0, 64, 512, 4>;

/// decode and verify on both targets (page size 1; sm90a decode at B 64 the 8-wave mapping, at B 1
/// BlockSplit 4), then decode at page size 16, then decode at batches 65..128 (the served decode
/// mapping widened: contracts/attention/gqa8_decode_wide.hpp).
inline constexpr auto attention_gqa8 = boost::hana::tuple_t<
    attention_gqa8_strict<contracts::attention_gqa8_decode<gfx950>>,
    attention_gqa8_when<attention_gqa8_eight_wave_decode, from_eight_wave_min_batch>,
    attention_gqa8_when<attention_gqa8_block_split_decode, up_to_block_split_max_batch>,
    attention_gqa8_strict<contracts::attention_gqa8_decode<sm90a>>,
    attention_gqa8_strict<contracts::attention_gqa8_verify<gfx950>>, attention_gqa8_strict<contracts::attention_gqa8_verify<sm90a>>,
    attention_gqa8_strict<contracts::attention_gqa8<gfx950, 0, 1, 16, 2, 2, 64, 128>>,
    attention_gqa8_strict<contracts::attention_gqa8<sm90a, 0, 1, 16, 4, 3, 64, 128>>,
    attention_gqa8_strict<contracts::attention_gqa8_decode_wide<gfx950>>, attention_gqa8_strict<contracts::attention_gqa8_decode_wide<sm90a>>>;

/// GQA4 extend's promoted domain: its target and phase, a longest extension in [1, 12], its page
/// size, BF16 [*, 32, 128] queries and E4M3 [*, 8, 128] pools on the handle's device, batch range.
template <class Contract> struct attention_gqa4_extend_domain {
  static bool contains(const attention_signature& s) {
    return s.target == Contract::target::id && s.phase == Contract::phase && s.tq >= 1 && s.tq <= Contract::max_extend &&
           s.page_size == Contract::page_size && s.q.type == dtype::bf16 && s.q.rank == 3 && s.q.shape[1] == Contract::q_heads &&
           s.q.shape[2] == Contract::head_dim && dtype_accepts(dtype::e4m3, s.k_buffer.type) && s.k_buffer.rank == 3 &&
           s.k_buffer.shape[1] == Contract::kv_heads && s.q.device == s.device && s.batch() >= 1 && s.batch() <= Contract::max_batch;
  }
};
template <class Contract> using attention_gqa4_extend_strict = strict<Contract, attention_gqa4_extend_domain<Contract>>;


/// sm90a extend at B = 1: the warpgroup form with 6 stages (16 slices: one workgroup a SM, where
/// the deeper ring is 4-5 % faster than 3 stages; H200, docs/kernels/attention.md "GQA4 extend on
/// the warpgroup matrix unit"); above it 3 stages (three workgroups a SM).
inline constexpr i64 attention_gqa4_extend_deep_ring_max_batch = 1;
struct extend_deep_ring_batches {
  static constexpr i64 min = 1, max = attention_gqa4_extend_deep_ring_max_batch;
  static constexpr const char* rule = "<= tactics::attention_gqa4_extend_deep_ring_max_batch (1; above it the 3-stage warpgroup form)";
};
using up_to_extend_deep_ring_max_batch = from_batch_range<extend_deep_ring_batches>;
using attention_gqa4_extend_deep_ring = contracts::attention_gqa4_extend_native<sm90a, 1, 6, 64, 128, 1>;

/// extend on both targets (page size 1), then page size 16 on sm90a. gfx950: the native 48-row plan
/// (contracts::attention_gqa4_extend_native; not measured: no device), then the pair view. sm90a:
/// the native plan with its products on the warpgroup matrix unit (WarpgroupMma; 6 stages at B = 1,
/// 3 above), faster than the per-warp native plan at every benchmarked shape but B = 64 at prefix
/// 256 (3.6 % slower there; the rule sees no prefix), then the pair view; page size 16 the same
/// warpgroup form (timed at page size 1 only). The per-warp sm90a native plan stays catalogued.
inline constexpr auto attention_gqa4_extend =
    boost::hana::tuple_t<attention_gqa4_extend_strict<contracts::attention_gqa4_extend_native<gfx950, 1, 6, 64, 128>>,
                         attention_gqa4_extend_strict<contracts::attention_gqa4_extend_served<gfx950>>,
                         strict_when<attention_gqa4_extend_deep_ring, attention_gqa4_extend_domain<attention_gqa4_extend_deep_ring>, up_to_extend_deep_ring_max_batch>,
                         attention_gqa4_extend_strict<contracts::attention_gqa4_extend_native<sm90a, 1, 3, 64, 128, 1>>,
                         attention_gqa4_extend_strict<contracts::attention_gqa4_extend_served<sm90a>>,
                         attention_gqa4_extend_strict<contracts::attention_gqa4_extend_native<sm90a, 16, 3, 64, 128, 1>>,
                         attention_gqa4_extend_strict<contracts::attention_gqa4_extend<sm90a, 16, 1, 6, 64, 128>>>;

}  // namespace netra::tactics
