// netra/contracts/attention/gqa4_extend.hpp — GQA4 extend attention over a native FP8 (E4M3, OCP)
// paged prefix cache plus the extension's own BF16 K/V, graph phase `extend`.
//
// Semantics. Hq = 32 query heads, Hkv = 8 KV heads (head h reads KV head h / 4), D = 128, softmax
// scale c = fl32(1/sqrt(128)) (0x3DB504F3). Request b (b < batch) has the extension tokens
// qo_indptr[b] .. qo_indptr[b + 1] - 1 (int64; E_b of them, rows of q / out / k_extend / v_extend)
// and a prefix of P_b positions in the paged cache: the GQA8 paged ABI (gqa8_paged.hpp: int32
// kv_indptr, int64 kv_indices, page size 1 or 16 with kv_last_page_len, token-slot pools k_buffer /
// v_buffer [slots, 8, 128] E4M3 dequantized by the FP32 device scalars k_scale / v_scale; an entry
// or slot outside what the call declares is MASKED: never read, weight 0). Extension token i sees
// every prefix position and the extension tokens 0..i (causal inside the extension):
//   s_p = q . k_p * k_scale * c,  s_j = q . kext_j * c;  out = sum softmax(s) (v_p v_scale | vext_j),
// BF16 (RNE), 0 where a row sees nothing. A request with E_b outside [1, 12], or whose tokens run
// past q_tokens, is left unwritten. When kv_indices_host is given, admits() refuses any entry
// outside the pool before launch.
//
// Decomposition (netra's order; tests/oracles/attention_gqa4_extend.hpp repeats it bit for bit).
// The prefix runs through the GQA8 stage one (kernels/attention/gqa8_stage_one.hpp) over a pair
// view: KV heads 2v and 2v + 1 are the two halves of one 256-byte row of the pool ([slots, 4, 256]
// viewed), their 8 query heads 8v .. 8v + 7 the view's 8 rows, each query row zero-padded to 256
// (head 8v + r holds q in half r / 4) by kernels/attention/extend.hpp's stage zero, which also pads
// every request to 12 tokens. So the prefix state (m, l, o) of every row is the GQA8 one: blocks of
// 64, BF16 weights, warp merge in warp order, slices (>= 2, always through the workspace) merged in
// slice order by stage two, which then scales o by v_scale and adds the extension block as one
// online-softmax step with FP32 scores (d in order), FP32 weights and sums (j in order), and writes
// out = bf16(o / l). Results depend on (batch, slices); no atomics.
//
// attention_gqa4_extend_native (below) computes the same (m, l, o) per row with a 48-row tile per
// KV head and no pair view (sm90a 96 threads, gfx950 256 threads, no scratch); its outputs are the
// same bits (the same oracle).
//
// Comparison policy (bounded, docs/kernels/attention.md): the GQA8 bound with 2^-23 |s| added to
// Delta for the rounded scale and L = P_b + i + 1 visible positions.
#pragma once
#include "netra/contracts/attention/gqa8_paged.hpp"

namespace netra {
namespace contracts {

template <class Target, u32 PageSize, u32 BlockWarps, u32 Stages, u32 MaxBatch, u32 SplitCapacity>
struct attention_gqa4_extend {
  static_assert(is_built_target_v<Target>, "netra::contracts::attention_gqa4_extend: field Target is not supported; supported: netra::gfx950, netra::sm90a");
  static_assert(PageSize == 1 || PageSize == 16, "netra::contracts::attention_gqa4_extend: field PageSize must be 1 or 16");
  static_assert(BlockWarps == 1 || BlockWarps == 2, "netra::contracts::attention_gqa4_extend: field BlockWarps must be 1 or 2");
  static_assert(Stages >= 2 && Stages <= 8, "netra::contracts::attention_gqa4_extend: field Stages must be in [2, 8]");
  static_assert(MaxBatch >= 1 && MaxBatch <= 64, "netra::contracts::attention_gqa4_extend: field MaxBatch must be in [1, 64]");
  static_assert(SplitCapacity >= 2 * MaxBatch && SplitCapacity <= 1024,
                "netra::contracts::attention_gqa4_extend: field SplitCapacity must be in [2 MaxBatch, 1024]");

  using target = Target;
  static constexpr const char* family = "attention_gqa4_extend";
  static constexpr const char* template_name = "netra::contracts::attention_gqa4_extend";
  static constexpr attention_phase phase = attention_phase::extend;
  static constexpr bool native = false, warpgroup_mma = false;  // the pair view's kernels (attention_gqa4_extend_native: native)
  static constexpr u32 q_heads = 32, kv_heads = 8, group = 4, head_dim = 128, max_extend = 12;
  static constexpr float softmax_scale = 0.0883883461356163f;  // fl32(1/sqrt(128))
  static constexpr u32 page_size = PageSize, block_warps = BlockWarps, stages = Stages, max_batch = MaxBatch, split_capacity = SplitCapacity;

  /// The prefix's stage one sees this contract as GQA8-shaped: 4 KV-head pairs of 256 bytes, 8
  /// query rows per pair and token, Tq = 12 padded tokens, no causal limit inside the prefix.
  struct pair_view {
    using target = Target;
    static constexpr u32 q_heads = 32, kv_heads = 4, group = 8, head_dim = 256, block = 64, tq = max_extend;
    static constexpr float softmax_scale = attention_gqa4_extend::softmax_scale;
    static constexpr u32 page_size = PageSize, block_warps = BlockWarps, stages = Stages;
    static constexpr u32 rows = group * tq, waves = tq * BlockWarps, workgroup_size = waves * Target::wave_size;
    static_assert(workgroup_size <= Target::max_workgroup_size, "netra::contracts::attention_gqa4_extend: 12 * BlockWarps waves exceed the workgroup size limit");
    static constexpr u32 piece_bytes = BlockWarps * block * head_dim, ring_bytes = Stages * piece_bytes;
    static constexpr u32 epilogue_bytes = waves * group * head_dim * 4, q_bytes = rows * head_dim * 2;
    static constexpr u32 table_rounds = max_of(2u, ceil_div(Stages, 2u)) + 1, table_bytes = table_rounds * BlockWarps * block * 8;
    static constexpr u32 stats_bytes = waves * group * 8;
    static constexpr u32 lds_bytes = max_of(ring_bytes, epilogue_bytes) + q_bytes + table_bytes + stats_bytes;
    static_assert(lds_bytes <= Target::lds_bytes_per_workgroup, "netra::contracts::attention_gqa4_extend: the staging ring exceeds the target's LDS");
    NETRA_HOST_DEVICE static constexpr u32 chunk_for(u32 length, u32 slices) { return round_up(max_of(1u, ceil_div(length, slices)), block * BlockWarps); }
    NETRA_HOST_DEVICE static constexpr i64 visible_end(i64 length, u32) { return length; }
  };

  /// Workspace: padded queries [MaxBatch * 12, 32, 256] BF16, padded qo_indptr [MaxBatch + 1],
  /// then the view's (m, l, o) per (request * slices + slice, pair, row).
  static constexpr u64 q_pad_bytes = static_cast<u64>(MaxBatch) * max_extend * q_heads * 256 * 2;
  static constexpr u64 qo_pad_bytes = round_up(static_cast<u64>(MaxBatch + 1) * 8, u64{256});
  static constexpr u64 split_o_bytes = static_cast<u64>(SplitCapacity) * pair_view::kv_heads * pair_view::rows * 256 * 4;
  static constexpr u64 split_stats_bytes = static_cast<u64>(SplitCapacity) * pair_view::kv_heads * pair_view::rows * 8;
  static constexpr u64 workspace_bytes = q_pad_bytes + qo_pad_bytes + split_o_bytes + split_stats_bytes;

  static constexpr i64 template_args[] = {PageSize, BlockWarps, Stages, MaxBatch, SplitCapacity};

  /// Slices per request: at least 2 (the prefix state always goes through the workspace), more
  /// while batch * 4 pairs * slices workgroups do not cover the processors.
  NETRA_HOST_DEVICE static constexpr u32 slices_for(u32 batch, u32 processors) {
    const u32 want = max_of(2u, processors / max_of(1u, batch * pair_view::kv_heads));
    return min_of(want, max_of(2u, SplitCapacity / max_of(1u, batch)));
  }

  static decision admits(const attention_signature& s) {
    if (s.target != Target::id) return refuse("target", Target::name, s.target);
    if (s.phase != phase) return refuse_named("phase", attention_phase_name(phase), static_cast<i64>(s.phase), attention_phase_name(s.phase));
    if (s.tq < 1 || s.tq > max_extend) return refuse("tq", "in [1, 12] (the call's longest extension)", s.tq);
    if (const decision d = require_paged_queries<PageSize>(s, {q_heads, head_dim, MaxBatch, 1, softmax_scale, "== fl32(1/sqrt(128)) (in millionths)",
                                                               "[tokens, 32, 128]", "[tokens of q, 32, 128]", "at least batch tokens (and at most 2^31)"});
        !d.admitted())
      return d;
    const i64 batch = s.batch(), tokens = s.q_tokens();
    const tensor_rule ext = {"k_extend", dtype::bf16, 3, {tokens, kv_heads, head_dim}, "[tokens of q, 8, 128]", layout::compact, 16};
    for (const auto& [name, t] : {field{"k_extend", &s.k_extend}, field{"v_extend", &s.v_extend}}) {
      tensor_rule r = ext;
      r.field = name;
      if (const decision d = require_tensor(*t, r, s.device); !d.admitted()) return d;
    }
    if (const decision d = require_paged_cache<PageSize>(s, batch, kv_heads, head_dim, "[slots, 8, 128]", "[slots of k_buffer, 8, 128]");
        !d.admitted())
      return d;
    if (s.slices < 2 || batch * s.slices > SplitCapacity) return refuse("slices", ">= 2 and batch * slices <= SplitCapacity", s.slices);
    if (const decision d = require_workspace(s, workspace_bytes); !d.admitted()) return d;
    return require_mirrored_indices<PageSize>(s);
  }

  static constexpr resource_budget budget() {
    if constexpr (same_v<Target, gfx950>) {
      // Stage one is the GQA8 verify geometry (12 waves of 8 view rows): the same 170-VGPR ceiling
      // at one workgroup per CU and the same spill it has there (gqa8_paged.hpp says why).
      resource_budget b;
      b.max_vgprs = 170;
      b.max_agprs = 32;
      b.max_sgprs = 102;
      b.max_lds_bytes = pair_view::lds_bytes;
      b.max_scratch_bytes = 384;
      b.max_spills = 128;
      b.max_code_bytes = 65536;
      return b;
    } else if constexpr (same_v<Target, sm90a>) {
      resource_budget b;
      b.max_registers = 65536 / pair_view::workgroup_size < 255 ? 65536 / pair_view::workgroup_size : 255;
      b.max_lds_bytes = pair_view::lds_bytes + 1024;  // sm_90 reserves 1 KiB per block
      b.max_code_bytes = 196608;
      return b;  // no stack, no spills
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::attention_gqa4_extend: no resource budget for this target");
    }
  }

 private:
  struct field {
    const char* name;
    const tensor_arg* t;
  };
};

/// The native plan of the same call, semantics, workspace and order: stage one's workgroup is a
/// KV head's 48 query rows (4 heads x 12 tokens, row 4 t + j = head 4 kv + j of token t) over the
/// [slots, 8, 128] pool itself (no pair view, no stage zero); its waves each own 48 / wave_rows
/// rows and every block of the slice (BlockWarps 1), so each row's (m, l, o) is the pair view's bit
/// for bit (kernels/attention/extend_native.hpp says why) and stage two is the same. A wave owns
/// wave_rows rows: sm90a one m16n8k16 M-tile (16 rows, 3 warps, 96 threads); gfx950 12 of a 16x16
/// MFMA's 16 columns (3 tokens x 4 heads, 4 waves, 256 threads).
/// Field WarpgroupMma (mapping, no bit changes; 1: targets with has_warpgroup_mma): one warpgroup
/// (128 threads) computes each block's S = Q K^T and O += P V on the warpgroup matrix unit from LDS
/// (Q and the block widened once into its core-matrix layout; rows 48..63 of its 64 are padding),
/// with the per-warp plan's k-steps in its order (kernels/attention/extend_native_warpgroup.hpp).
template <class Target, u32 PageSize, u32 Stages, u32 MaxBatch, u32 SplitCapacity, u32 WarpgroupMma = 0>
struct attention_gqa4_extend_native : attention_gqa4_extend<Target, PageSize, 1, Stages, MaxBatch, SplitCapacity> {
  static_assert(WarpgroupMma == 0 || (WarpgroupMma == 1 && Target::has_warpgroup_mma),
                "netra::contracts::attention_gqa4_extend_native: field WarpgroupMma must be 0, or 1 on a target with warpgroup matrix "
                "instructions (sm90a)");
  using base = attention_gqa4_extend<Target, PageSize, 1, Stages, MaxBatch, SplitCapacity>;
  static constexpr const char* family = "attention_gqa4_extend_native";
  static constexpr const char* template_name = "netra::contracts::attention_gqa4_extend_native";
  /// WarpgroupMma is spelled (and named) only where it is 1, so the other instances keep their names.
  static constexpr const auto& template_args =
      conditional_t<WarpgroupMma == 1, i64_values<PageSize, Stages, MaxBatch, SplitCapacity, WarpgroupMma>,
                    i64_values<PageSize, Stages, MaxBatch, SplitCapacity>>::values;
  static constexpr bool native = true, warpgroup_mma = WarpgroupMma == 1;
  static constexpr u32 rows = base::group * base::max_extend, block = 64, wave_rows = same_v<Target, sm90a> ? 16 : 12;
  static constexpr u32 waves = rows / wave_rows, warps = warpgroup_mma ? 4 : waves, workgroup_size = warps * Target::wave_size;
  static constexpr u32 piece_bytes = block * base::head_dim, ring_bytes = Stages * piece_bytes;
  /// Slot ids a round ahead; WarpgroupMma issues a piece Stages ahead (its round's ids one iteration before).
  static constexpr u32 table_rounds = warpgroup_mma ? (Stages + 1) / 2 + 1 : Stages / 2 + 1, table_bytes = table_rounds * block * 8;
  /// WarpgroupMma: Q as 64 operand rows (BF16) and two widened pieces (the one on the matrix unit and the next).
  static constexpr u32 q_bytes = warpgroup_mma ? 64 * base::head_dim * 2 : 0, wide_bytes = warpgroup_mma ? (base::head_dim / 8) * 1040 : 0;
  static constexpr u32 lds_bytes = ring_bytes + q_bytes + 2 * wide_bytes + table_bytes;
  static constexpr u32 epilogue_bytes = rows * (base::head_dim + 4) * 4;  // the slice's o as rows of 132 floats
  static_assert(epilogue_bytes <= ring_bytes + q_bytes + 2 * wide_bytes, "netra::contracts::attention_gqa4_extend_native: the staged o does not fit");
  static_assert(lds_bytes <= Target::lds_bytes_per_workgroup, "netra::contracts::attention_gqa4_extend_native: the staging ring exceeds the target's LDS");
  NETRA_HOST_DEVICE static constexpr u32 chunk_for(u32 length, u32 slices) { return base::pair_view::chunk_for(length, slices); }
  /// Slices per request: one wave of stage-one workgroups (4 per processor over the 8 KV heads:
  /// processors / (2 batch)), at least 2 and at most 16 (and SplitCapacity / batch). Measured on the
  /// H200 (bench/results/attention_h200.json, native_slices_graph_us): B = 16 at P 1024 / 2048 /
  /// 4096 fastest at 4 (the wave; 2 and 8 slower), B = 64 at 2 (the capacity's limit), B = 1 at 16
  /// against 8 and 32 at P = 1024 (32 is 10 % faster at P = 4096: not taken, the rule sees no length).
  /// WarpgroupMma (workgroups_per_processor by its LDS): the count in [2, min(16, SplitCapacity /
  /// batch)] whose grid fills its last wave of workgroups best, the fewest among equals (B = 16 on
  /// the H200: 3 slices, 384 workgroups in one wave of 396; B = 64 at capacity 256: 3).
  static constexpr u32 workgroups_per_processor = warpgroup_mma ? workgroups_by_lds<Target>(lds_bytes) : 4;
  NETRA_HOST_DEVICE static constexpr u32 slices_for(u32 batch, u32 processors) {
    const u32 b = max_of(1u, batch);
    if constexpr (!warpgroup_mma) {
      return max_of(2u, min_of(min_of(16u, processors / (2 * b)), SplitCapacity / b));
    } else {
      const u64 slots = static_cast<u64>(max_of(1u, processors)) * workgroups_per_processor;
      u32 best = 2;
      u64 best_fill = 0, best_room = 1;  // fill / room: the grid's workgroups over its waves' slots
      for (u32 s = 2; s <= max_of(2u, min_of(16u, SplitCapacity / b)); ++s) {
        const u64 grid = static_cast<u64>(b) * base::kv_heads * s, room = ceil_div(grid, slots) * slots;
        if (grid * best_room > best_fill * room) best = s, best_fill = grid, best_room = room;
      }
      return best;
    }
  }
  static constexpr resource_budget budget() {
    resource_budget b;
    if constexpr (same_v<Target, gfx950>) {
      b.max_vgprs = 168;  // 3 waves per SIMD: the 3 workgroups of 256 threads that the CU's LDS holds
      b.max_agprs = 0;
      b.max_sgprs = 102;
      b.max_lds_bytes = lds_bytes;
      b.max_code_bytes = 65536;
    } else if constexpr (same_v<Target, sm90a>) {
      // 4 workgroups (12 warps) per SM share the 64 Ki registers; WarpgroupMma: the workgroups its LDS lets a SM hold.
      b.max_registers = warpgroup_mma ? min_of(255u, 65536 / (workgroups_per_processor * workgroup_size)) : 168;
      b.max_lds_bytes = lds_bytes + 1024;  // sm_90 reserves 1 KiB per block
      b.max_code_bytes = 196608;
    } else {
      static_assert(dependent_false_v<Target>, "netra::contracts::attention_gqa4_extend_native: no resource budget for this target");
    }
    return b;  // no scratch, stack or spills
  }
};

/// The served instances: the GQA8 verify mapping (BlockWarps 1, 6 stages) on both targets.
template <class Target> using attention_gqa4_extend_served = attention_gqa4_extend<Target, 1, 1, 6, 64, 128>;

}  // namespace contracts
}  // namespace netra
