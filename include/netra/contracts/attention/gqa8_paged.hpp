// netra/contracts/attention/gqa8_paged.hpp — GQA8 attention over a native FP8 (E4M3, OCP) paged
// KV cache: decode (Tq = 1) and split-sequence verification (Tq verify tokens per request).
//
// Semantics. Hq = 16 query heads, Hkv = 2 KV heads (head h reads KV head h / 8), D = 256, softmax
// scale 1/16. Request b (b < batch) has query tokens qo_indptr[b] .. qo_indptr[b] + Tq - 1 (int64,
// rows of q / out [q_tokens, 16, 256] BF16) and KV length L_b: page size 1: L_b = kv_indptr[b + 1]
// - kv_indptr[b] (int32), position p in slot kv_indices[kv_indptr[b] + p] (int64); page size 16:
// kv_indptr counts pages, L_b = 16 (pages - 1) + kv_last_page_len[b], position p in slot
// 16 kv_indices[kv_indptr[b] + p / 16] + p % 16. K and V are read in place from SGLang's token-slot
// pools k_buffer / v_buffer [slots, 2, 256] E4M3, dequantized by the FP32 device scalars k_scale /
// v_scale (graph-safe: read on the device). Token t of request b sees positions p < L_b - Tq + t + 1
// (decode: all L_b; verify: the prefix and verify tokens 0..t, causal inside the verify block):
//   out[token, h, :] = sum_p softmax_p(q . k_p * k_scale / 16) v_p * v_scale   (BF16, RNE),
// and 0 where a row sees no position. A position whose page-table entry lies outside
// kv_indices_count or whose slot lies outside the pool is MASKED: never read, weight 0. A request
// whose query extent is not Tq, or runs past q_tokens, is left unwritten. When the host mirror
// kv_indices_host is given, admits() refuses any entry outside the pool before launch.
//
// Decomposition (netra's association order; tests/oracles/attention_gqa8.hpp repeats it bit for
// bit). Each request's positions [0, L_b) are cut into `slices` slices of chunk_b =
// round_up(ceil(L_b / slices), 64 * BlockWarps) positions; a slice is cut into blocks of 64, and
// its warp w (of BlockWarps) walks blocks w, w + BlockWarps, ... keeping an online-softmax state
// (dsl/online_softmax.hpp) per query row: per block m = max(m, block max), l = l * alpha + sum of
// the block's BF16-rounded weights (plan order: lane sums in item order, then the two row-mask
// butterflies), o = o * alpha + P V. The warps of a slice merge in warp order; with slices = 1 the
// slice writes out = bf16(o / l * v_scale); otherwise it writes its (m, l, o) to the workspace and
// stage two merges the slices in slice order (the causal verify block, the last positions, ends the
// last slice) and writes out. slices comes from slices_for(batch, processors) (so that one
// sequence fills the device); results depend on (batch, slices) and are reproducible: no atomics.
// Staging is a mapping choice that changes no bit: Stages >= 2 streams K/V through an LDS ring of
// Stages pieces; Stages = 0 (decode) has each wave load its own blocks' K/V into registers; with
// Tq > 1 (verify) the workgroup widens each staged block to BF16 once for its waves (widen_once).
// With Tq even a wave's matrix tile holds two tokens (tokens_per_wave = 2: Tq / 2 * BlockWarps
// waves of 16 real rows), which changes no bit: each row keeps its lanes, items and order.
//
// Comparison policy (bounded; derived in docs/kernels/attention.md): with w_p the exact weights,
// V_inf = v_scale * max_p |v_p| over the row's visible positions and Delta the score error bound
// (k_scale / 16) * 2^-15 * max_p sum_d |q_d k_pd| (FP32 accumulation of 256 exact products),
//   |out - ref| <= 2^-8 |ref| + V_inf * (rho + (L_b / 4 + 256) * 2^-24 + 2^-20),
//   rho = e^(2 Delta) (1 + 2^-9 + 2^-22) / (1 - 2^-9 - 2^-22) - 1
// (BF16 output rounding; BF16 weights in PV and in l; exp_f32 <= 1 ulp; FP32 accumulation).
#pragma once
#include "netra/contracts/attention/paged_cache.hpp"

namespace netra {

/// Where in the serving graph a call comes from: a dispatch dimension of every attention contract.
enum class attention_phase : u8 { decode = 0, extend = 1, verify = 2, prefill = 3 };

NETRA_HOST_DEVICE constexpr const char* attention_phase_name(attention_phase p) {
  return p == attention_phase::decode ? "decode" : p == attention_phase::extend ? "extend" : p == attention_phase::verify ? "verify" : "prefill";
}

/// What an attention call has: the handle's target and device, the phase, tokens per request,
/// page size and softmax scale the caller declares, its tensors (from DLTensors,
/// runtime/tensor.hpp, or from raw pointers, runtime/ops/attention_gqa8.hpp) and the workspace and
/// slice count of the tactic that asks.
///   q, out:            bf16 [tokens, 16, 256], compact (out as large as q)
///   k_buffer, v_buffer: e4m3 (or uint8 holding E4M3) [slots, 2, 256], compact
///   qo_indptr int64 [batch + 1]; kv_indptr int32 [batch + 1]; kv_indices int64 [entries];
///   kv_last_page_len int32 [batch] (page size 16 only); k_scale, v_scale float32 [] or [1].
struct attention_signature {
  target_id target;
  device_ref device;
  attention_phase phase = attention_phase::decode;
  i64 tq = 0;  // query tokens per request
  i64 page_size = 0;
  float softmax_scale = 0.0f;
  tensor_arg q, out, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale;
  tensor_arg k_extend, v_extend;  // extend only (gqa4_extend.hpp): the extension's own K / V
  const i64* kv_indices_host = nullptr;  // optional host mirror of kv_indices (its entries)
  i64 slices = 1;
  const void* workspace = nullptr;
  u64 workspace_bytes = 0;
  NETRA_HOST_DEVICE constexpr i64 batch() const { return qo_indptr.rank == 1 ? qo_indptr.shape[0] - 1 : 0; }
  NETRA_HOST_DEVICE constexpr i64 q_tokens() const { return q.extent(0); }
  NETRA_HOST_DEVICE constexpr i64 slots() const { return k_buffer.extent(0); }
  NETRA_HOST_DEVICE constexpr i64 kv_indices_count() const { return kv_indices.extent(0); }
};

namespace contracts {

/// A compile-time list of template arguments as an array (a contract's template_args).
template <i64... Values> struct i64_values {
  static constexpr i64 values[] = {Values...};
};

// Field Format (gfx942, issue 31): the FP8 format of k_buffer / v_buffer, the one the target's
// conversion instruction reads (native_fp8_t: E4M3FN on gfx950 / sm90a, E4M3FNUZ on gfx942, where
// the same byte is half the value); a pool in the other format is refused (dtype). gfx942 is
// built and audited only (docs/target-notes.md §11).
// Field BlockSplit (mapping, no bit changes): warps that share each block of a wave's walk (1: one
// warp a block). With S > 1 (decode, Stages 0) wave w of the order is S warps: warp j computes QK
// for score tiles [j T / S, (j + 1) T / S) (a 64 / S-position range), the S warps exchange the
// block's scores through LDS (one workgroup barrier a block), each takes the same online-softmax
// step, and warp j adds P V for the output tile groups [j G / S, (j + 1) G / S) (a 256 / S share of
// the head dimension): every score and output element is computed by the same instructions on the
// same operands as with S = 1, so the order, oracle and bound are BlockWarps' own. With an LDS
// ring (verify, S = 2: each two-token wave is two warps) the scores of a K piece are exchanged in
// one block of their own bytes and the block step is taken with the V piece (no added barrier).
// Field WarpgroupMma (mapping, no bit changes; 1: targets with has_warpgroup_mma, verify with Tq
// even in 10..16, an LDS ring, BlockWarps 1 and BlockSplit 1): two warpgroups compute each block's
// S = Q K^T and O += P V on the warpgroup matrix unit from LDS (Q and the widened block in its
// core-matrix layout), with the per-warp plan's k-steps in its order
// (kernels/attention/gqa8_stage_one_warpgroup.hpp); warp w is wave w of the two-token order.
template <class Target, u32 Phase, u32 Tq, u32 PageSize, u32 BlockWarps, u32 Stages, u32 MaxBatch, u32 SplitCapacity, u32 BlockSplit = 1,
          u32 WarpgroupMma = 0, class Format = native_fp8_t<Target>>
struct attention_gqa8 {
  static_assert(is_built_target_v<Target> || same_v<Target, gfx942>,
                "netra::contracts::attention_gqa8: field Target is not supported; supported: netra::gfx950, netra::sm90a, netra::gfx942 "
                "(built and audited only)");
  static_assert(same_v<Format, native_fp8_t<Target>>,
                "netra::contracts::attention_gqa8: field Format must be the FP8 format the target's conversion instruction reads "
                "(gfx950, sm90a: netra::fp8::e4m3fn; gfx942: netra::fp8::e4m3fnuz)");
  static_assert(Phase == static_cast<u32>(attention_phase::decode) || Phase == static_cast<u32>(attention_phase::verify),
                "netra::contracts::attention_gqa8: field Phase must be decode (0) or verify (2)");
  static_assert(Phase != static_cast<u32>(attention_phase::decode) || Tq == 1, "netra::contracts::attention_gqa8: field Tq must be 1 in decode");
  static_assert(Tq >= 1 && Tq <= 16, "netra::contracts::attention_gqa8: field Tq must be in [1, 16]");
  static_assert(PageSize == 1 || PageSize == 16, "netra::contracts::attention_gqa8: field PageSize must be 1 or 16");
  static_assert(BlockWarps == 1 || BlockWarps == 2 || BlockWarps == 4 || BlockWarps == 8,
                "netra::contracts::attention_gqa8: field BlockWarps must be 1, 2, 4 or 8");
  static_assert((Stages >= 2 && Stages <= 8) || (Stages == 0 && Tq == 1),
                "netra::contracts::attention_gqa8: field Stages must be in [2, 8], or 0 (no LDS ring) in decode");
  static_assert(BlockSplit == 1 || ((BlockSplit == 2 || BlockSplit == 4 || BlockSplit == 8) && Stages == 0) ||
                    (BlockSplit == 2 && Stages >= 2 && Tq % 2 == 0),
                "netra::contracts::attention_gqa8: field BlockSplit must be 1, or 2, 4 or 8 with Stages 0 (decode), or 2 with an LDS ring "
                "and Tq even (verify)");
  static_assert(WarpgroupMma == 0 || (WarpgroupMma == 1 && Target::has_warpgroup_mma && Phase == static_cast<u32>(attention_phase::verify) &&
                                       Tq % 2 == 0 && Tq > 8 && Stages >= 2 && BlockWarps == 1 && BlockSplit == 1),
                "netra::contracts::attention_gqa8: field WarpgroupMma must be 0, or 1 on a target with warpgroup matrix instructions (sm90a) in "
                "verify with Tq even in 10..16 (two warpgroups), Stages >= 2, BlockWarps 1 and BlockSplit 1");
  static_assert(MaxBatch >= 1 && MaxBatch <= 128, "netra::contracts::attention_gqa8: field MaxBatch must be in [1, 128]");
  static_assert(SplitCapacity >= 1 && SplitCapacity <= 1024, "netra::contracts::attention_gqa8: field SplitCapacity must be in [1, 1024]");

  using target = Target;
  using kv_format = Format;
  static constexpr const char* family = "attention_gqa8";
  static constexpr const char* template_name = "netra::contracts::attention_gqa8";
  static constexpr attention_phase phase = static_cast<attention_phase>(Phase);
  static constexpr u32 q_heads = 16, kv_heads = 2, group = 8, head_dim = 256, block = 64;
  static constexpr float softmax_scale = 0.0625f;
  static constexpr u32 tq = Tq, page_size = PageSize, block_warps = BlockWarps, stages = Stages, max_batch = MaxBatch, block_split = BlockSplit;
  static constexpr u32 split_capacity = SplitCapacity;
  static constexpr bool warpgroup_mma = WarpgroupMma == 1;
  static constexpr u32 rows = group * Tq;  // query rows per (request, KV head)
  /// Query tokens of one wave's matrix tile: 2 when Tq is even (verify: 16 real rows, no QK
  /// padding; kernels/attention/gqa8_wave_plan.hpp), else 1 (8 real rows of 16).
  static constexpr u32 tokens_per_wave = Tq % 2 == 0 ? 2 : 1;
  static constexpr u32 wave_rows = group * tokens_per_wave;
  static constexpr u32 waves = Tq / tokens_per_wave * BlockWarps;  // waves of the order (each BlockSplit warps)
  static constexpr u32 warpgroups = warpgroup_mma ? ceil_div(waves, 4u) : 0;  // WarpgroupMma: warp w is wave w (4 a warpgroup)
  static constexpr u32 warps = warpgroup_mma ? 4 * warpgroups : waves * BlockSplit;
  static constexpr u32 workgroup_size = warps * Target::wave_size;
  static_assert(workgroup_size <= Target::max_workgroup_size,
                "netra::contracts::attention_gqa8: Tq / tokens_per_wave * BlockWarps * BlockSplit warps exceed the workgroup size limit");
  static constexpr u32 piece_bytes = BlockWarps * block * head_dim;  // one K or V stage: BlockWarps blocks
  static constexpr u32 ring_bytes = Stages * piece_bytes;
  static constexpr u32 epilogue_bytes = waves * wave_rows * head_dim * 4;  // every wave's o
  static constexpr u32 q_bytes = rows * head_dim * 2;                  // the workgroup's queries (BF16)
  static constexpr u32 table_rounds = max_of(2u, ceil_div(Stages, 2u)) + 1;  // slot ids looked up one round ahead
  static constexpr u32 table_bytes = (Stages == 0 ? 2 * warps : table_rounds * BlockWarps) * block * 8;  // Stages 0: two blocks per warp
  /// BlockSplit > 1: every wave's block scores in rows of 72 floats; Stages 0: two blocks (in the
  /// epilogue's bytes), an LDS ring: one block (its own bytes: the ring is busy).
  static constexpr u32 score_row_floats = block + 8;
  static constexpr u32 exchange_blocks = Stages == 0 ? 2 : 1;
  static constexpr u32 exchange_bytes = BlockSplit > 1 ? waves * exchange_blocks * wave_rows * score_row_floats * 4 : 0;
  static constexpr u32 stats_bytes = waves * wave_rows * 8;            // every wave's (m, l) per row
  /// Tq > 1 waves read each block: the workgroup widens it to BF16 once, where the LDS holds that.
  static constexpr u32 staged_bytes = max_of(ring_bytes, epilogue_bytes) + q_bytes + table_bytes + stats_bytes + (Stages == 0 ? 0 : exchange_bytes);
  static constexpr bool widen_once = warpgroup_mma || (Tq > 1 && staged_bytes + BlockWarps * block * head_dim * 2 <= Target::lds_bytes_per_workgroup);
  /// WarpgroupMma: V as the P V operand has its 8-element groups 1040 bytes apart
  /// (kernels/attention/gqa8_warpgroup_layout.hpp).
  static constexpr u32 wide_bytes = warpgroup_mma ? (head_dim / 8) * 1040 : widen_once ? BlockWarps * block * head_dim * 2 : 0;
  /// WarpgroupMma: the ring, Q, two widened pieces (the one on the matrix unit and the next), the
  /// slot table and the statistics; the epilogue over the first three after the loop.
  static constexpr u32 lds_bytes =
      warpgroup_mma ? ring_bytes + q_bytes + 2 * wide_bytes + table_bytes + stats_bytes : staged_bytes + wide_bytes;
  static_assert(!warpgroup_mma || (ring_bytes + q_bytes + 2 * wide_bytes >= epilogue_bytes && q_bytes + wide_bytes >= 64 * warpgroups * head_dim * 2),
                "netra::contracts::attention_gqa8: WarpgroupMma's epilogue or the last warpgroup's Q tile exceeds its LDS");
  static_assert(lds_bytes <= Target::lds_bytes_per_workgroup, "netra::contracts::attention_gqa8: the staging ring exceeds the target's LDS");
  static_assert(BlockSplit == 1 || Stages != 0 || exchange_bytes <= max_of(ring_bytes, epilogue_bytes),
                "netra::contracts::attention_gqa8: the score exchange exceeds the epilogue's bytes");

  /// Workspace: (m, l) then o per (request * slices + slice, KV head, row) for split calls.
  static constexpr u64 split_o_bytes = static_cast<u64>(SplitCapacity) * kv_heads * rows * head_dim * 4;
  static constexpr u64 split_stats_bytes = static_cast<u64>(SplitCapacity) * kv_heads * rows * 8;
  static constexpr u64 workspace_bytes = split_o_bytes + split_stats_bytes;

  /// BlockSplit is spelled (and named) only where it is not 1 or WarpgroupMma is, WarpgroupMma only
  /// where it is 1, so the other instances keep their names.
  static constexpr const auto& template_args =
      conditional_t<WarpgroupMma == 1, i64_values<Phase, Tq, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity, BlockSplit, WarpgroupMma>,
                    conditional_t<BlockSplit == 1, i64_values<Phase, Tq, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity>,
                                  i64_values<Phase, Tq, PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity, BlockSplit>>>::values;

  /// Workgroups one processor holds at once, by LDS (dsl/target.hpp's workgroups_by_lds) and by
  /// registers at the target's per-thread cap where the target states its register file
  /// (workgroups_by_registers: sm90a 64 Ki per SM; gfx950: LDS alone).
  static constexpr u32 workgroups_per_processor =
      max_of(1u, min_of(workgroups_by_lds<Target>(lds_bytes), workgroups_by_registers<Target>(workgroup_size)));

  /// Slices per request so that batch * kv_heads workgroups cover the processors at least once
  /// (1 when the batch alone does), and up to workgroups_per_processor times (at most 32 slices
  /// unless covering once takes more), within SplitCapacity.
  NETRA_HOST_DEVICE static constexpr u32 slices_for(u32 batch, u32 processors) {
    const u32 fill = max_of(1u, processors / max_of(1u, batch * kv_heads));
    const u32 want = min_of(fill * workgroups_per_processor, max_of(fill, 32u));
    const u32 cap = max_of(1u, SplitCapacity / max_of(1u, batch));
    return want == 1 ? 1u : min_of(want, cap);
  }
  /// The end of the positions query token t of a request of length L sees (causal in verify).
  NETRA_HOST_DEVICE static constexpr i64 visible_end(i64 length, u32 token) { return length - Tq + token + 1; }
  /// Positions per slice of a request of length L (a multiple of 64 * BlockWarps).
  NETRA_HOST_DEVICE static constexpr u32 chunk_for(u32 length, u32 slices) {
    return round_up(max_of(1u, ceil_div(length, slices)), block * BlockWarps);
  }

  static decision admits(const attention_signature& s) {
    if (s.target != Target::id) return refuse("target", Target::name, s.target);
    if (s.phase != phase) return refuse_named("phase", attention_phase_name(phase), static_cast<i64>(s.phase), attention_phase_name(s.phase));
    if (s.tq != Tq) return refuse("tq", "== Tq of the contract", s.tq);
    if (const decision d = require_paged_queries<PageSize>(s, {q_heads, head_dim, MaxBatch, Tq, softmax_scale, "== 1/16 (in millionths)", "[tokens, 16, 256]",
                                                               "[tokens of q, 16, 256]", "at least batch * Tq tokens (and at most 2^31)"});
        !d.admitted())
      return d;
    const i64 batch = s.batch();
    if (const decision d = require_paged_cache<PageSize, Format>(s, batch, kv_heads, head_dim, "[slots, 2, 256]", "[slots of k_buffer, 2, 256]");
        !d.admitted())
      return d;
    if (s.slices < 1 || (s.slices > 1 && batch * s.slices > SplitCapacity)) return refuse("slices", "1, or batch * slices <= SplitCapacity", s.slices);
    if (s.slices > 1)
      if (const decision d = require_workspace(s, workspace_bytes); !d.admitted()) return d;
    return require_mirrored_indices<PageSize>(s);
  }

  /// AMD: the SGPR count the objects report includes VCC, FLAT_SCRATCH and XNACK_MASK, so its
  /// budget is the target's addressable SGPRs + 6 (stage two's 32 slice loads at constant strides
  /// keep their offsets in SGPRs: 106 on gfx950 / gfx942, no spill).
  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      // .vgpr_count counts AGPRs too. Decode (query columns 8..15 of every tile are padding): 239
      // VGPRs, against the article's hand-written 148. Verify with two tokens per wave (columns
      // 8..15 hold the second token): Tq / 2 waves, at most 2 per SIMD at one workgroup per CU,
      // 256 VGPRs each (252 when the budget was set; the 12-wave one-token verify spilled 87).
      resource_budget b;
      b.max_vgprs = Tq == 1 ? 288 : (tokens_per_wave == 2 && waves <= 8 ? 256 : 170);
      b.max_agprs = 32;
      b.max_sgprs = Target::max_sgprs + 6;
      b.max_lds_bytes = lds_bytes;
      b.max_scratch_bytes = Tq == 1 || tokens_per_wave == 2 ? 0 : 384;
      b.max_spills = Tq == 1 || tokens_per_wave == 2 ? 0 : 128;
      b.max_code_bytes = 65536;
      return b;
    } else if constexpr (same_v<Target, gfx942>) {
      // Decode with Stages = 0 only (the LDS ring of the gfx950 mapping exceeds 64 KiB): K/V in
      // registers, v_mfma_f32_16x16x16_bf16 (twice gfx950's instructions per product); 184 VGPRs,
      // no AGPRs, spills or scratch when the budget was set.
      static_assert(Stages == 0, "netra::contracts::attention_gqa8: gfx942 has a budget for Stages = 0 (decode) only");
      resource_budget b;
      b.max_vgprs = 224;
      b.max_agprs = 32;
      b.max_sgprs = Target::max_sgprs + 6;
      b.max_lds_bytes = lds_bytes;
      b.max_scratch_bytes = 0;
      b.max_spills = 0;
      b.max_code_bytes = 65536;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 65536 / workgroup_size < 255 ? 65536 / workgroup_size : 255;
      b.max_lds_bytes = lds_bytes + 1024;  // sm_90 reserves 1 KiB per block
      // Both products fully unrolled: ~147 KB of SASS for decode; BlockSplit S compiles S warp
      // bodies (each its share of the block's work and the whole block step): 271 KB at S = 8.
      b.max_code_bytes = BlockSplit > 4 ? 327680 : 196608;
      return b;  // no stack, no spills
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::attention_gqa8: no resource budget for this target");
    }
  }

};

/// The served instances (mapping fields per target; docs/kernels/attention.md says why).
/// sm90a decode: 2 waves, Stages 0 (no LDS ring; 4 workgroups per SM): the fastest at B = 1 and within
/// 0.1 % of the fastest at B = 16 and 64 (bench/results/attention_h200.json, mapping_comparison);
/// at B = 64 dispatch takes the 8-wave Stages 0 mapping first and at B = 1 2 x 0 with each block over
/// 4 warps (BlockSplit 4: the same bits; tactics::attention_gqa8, measured).
/// Verify: 6 waves of two tokens, 6 stages; on targets with warpgroup matrix instructions (sm90a) the
/// products on them (WarpgroupMma: two warpgroups, the same bits; chosen over each wave on two warps,
/// BlockSplit 2, by measurement, docs/kernels/attention.md), gfx950 one warp a wave.
template <class Target>
using attention_gqa8_decode = conditional_t<same_v<Target, sm90a>, attention_gqa8<Target, 0, 1, 1, 2, 0, 64, 512>, attention_gqa8<Target, 0, 1, 1, 2, 2, 64, 128>>;
template <class Target>
using attention_gqa8_verify = attention_gqa8<Target, 2, 12, 1, 1, 6, 64, 128, 1, Target::has_warpgroup_mma ? 1 : 0>;

}  // namespace contracts
}  // namespace netra
