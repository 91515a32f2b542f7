// netra/kernels/attention/extend_native.hpp — stage one of contracts::attention_gqa4_extend_native
// with its products per warp (WarpgroupMma 0; the warpgroup form: extend_native_warpgroup.hpp):
// one workgroup per (slice, KV head, request) computes the slice's online softmax for the KV
// head's 48 query rows (row 4t + j: head 4 kv + j of extension token t; tokens >= E_b are zero
// rows, never written), reading the FP8 prefix K/V of the [slots, 8, 128] pool in place.
//
// Grid (slices, 8, batch); 48 / plan::rows waves (sm90a 3 x 16 rows, 96 threads; gfx950 4 x 12
// rows, 256 threads); wave w owns rows plan::rows w .. + plan::rows - 1 and every block of 64
// positions of the slice, so no wave merge is needed. The slice
// streams through an LDS ring of Stages pieces (piece n: K (n even) or V (n odd) of block n / 2,
// 64 x 128 bytes, every thread copying 16-byte chunks at the slot ids of an LDS table filled a
// round ahead, their index loads issued two iterations before); iteration n waits for its piece,
// passes one barrier and issues piece n + Stages - 1 into the slot freed by iteration n - 1; each
// warp whose rows hold a token widens the chunks it reads once (extend_plan.hpp) and computes:
// K piece: scores x (k_scale * c), masked to -inf, block max, BF16 weights and the online-softmax
// step (dsl/online_softmax.hpp), as gqa8_wave.hpp's block_step in the same order; V piece:
// o = o * alpha + P V. Its (m, l, o) go to the workspace in the pair view's layout (pair kv / 2,
// view row 8t + 4 (kv % 2) + j, elements 128 (kv % 2) + d), so extend.hpp's stage two merges them.
// Math = false keeps the grid, the copies, the look-ups, Q's loads and the workspace writes and
// drops the widening and the math: the floor of this mapping (bench/attention_extend.py).
#pragma once
#include "netra/kernels/attention/extend_native_staging.hpp"
#include "netra/kernels/attention/extend_native_warpgroup.hpp"

namespace netra::kernels {

/// 4 workgroups (12 warps) per SM: <= 168 registers.
template <class Contract, bool Math = true> struct attention_extend_native_wave_stage_one : extend_native_stage_one_kernel<Contract, Math> {
  using kernel = extend_native_stage_one_kernel<Contract, Math>;
  using typename kernel::staging, typename kernel::target, typename kernel::plan, typename kernel::params;
  using kernel::S, kernel::T, kernel::G;
  static_assert(plan::rows == Contract::wave_rows && plan::head_dim == Contract::head_dim && plan::block == Contract::block,
                "netra::kernels::attention_extend_native_wave_stage_one: the plan's tile is not the contract's");

  static NETRA_DEVICE void run(const params& a) {
    NETRA_DYNAMIC_SHARED_BYTES(lds);
    u8* ring = lds;
    i64* table = reinterpret_cast<i64*>(lds + Contract::ring_bytes);
    const attention_gqa8_args& p = a.view;
    const u32 sl = workgroup_id<target, 0>(), kv = workgroup_id<target, 1>(), b = workgroup_id<target, 2>();
    const u32 warp = wave_id<target>(), lane = lane_id<target>();
    launch_dependents<target>();  // stage two may launch now: it waits for this grid before its workspace loads
    const extend_request e = extend_request::read(a, b, Contract::max_extend);
    if (!e.writable) return;  // uniform over the workgroup
    const typename staging::slice v = staging::slice_of(p, b, sl);
    const bool busy = Math && warp * plan::rows / G < e.count;  // the warp's first token is one of the request's
    const float score_scale = mul_rn(*p.k_scale, Contract::softmax_scale);

    // The warp's Q operands (zero rows past E_b), the first rounds' slots.
    typename plan::q_operands qa;
    {
      u32x4 q[plan::q_loads];
      NETRA_UNROLL
      for (u32 j = 0; j < plan::q_loads; ++j) {
        const fragment_element f = plan::q_load(lane, j);
        const u32 row = warp * plan::rows + f.row, t = row / G;
        q[j] = f.row < plan::rows && t < e.count ? load_16B<target>(a.q + (static_cast<u64>(e.first + t) * Contract::q_heads + G * kv + row % G) * Contract::head_dim + f.col)
                                                 : u32x4{0, 0, 0, 0};
      }
      plan::q_operands_of(qa, q);
    }
    typename staging::look_up lookups = staging::first_rounds(p, v, table);
    workgroup_barrier<target>();

    constexpr u32 R = plan::row_slots;
    softmax_stats st[R];
    float alpha[R];
    NETRA_UNROLL
    for (u32 k = 0; k < R; ++k) st[k] = softmax_empty(), alpha[k] = 0.0f;
    float o[plan::o_items] = {};
    u32 pb[plan::scores / 2] = {};
    if constexpr (!Math) {  // Q's loads stay
      u32 fold = 0;
      NETRA_UNROLL
      for (u32 i = 0; i < sizeof(qa) / 4; ++i) fold ^= reinterpret_cast<const u32*>(&qa)[i];
      o[0] = bit_cast<float>(fold);
    }
    for (u32 n = 0; n + 1 < S; ++n) staging::issue(p, v, kv, n, ring, table);
    for (u32 n = 0; n < 2 * v.blocks; ++n) {
      wait_lds_copies<target, S - 2>();
      workgroup_barrier<target>();
      staging::issue(p, v, kv, n + S - 1, ring, table);
      if ((n + S) % 2 == 0 && (n + S) / 2 >= T) {  // round (n + S) / 2 was started two iterations ago
        lookups.finish(p, v, table);
        lookups.start(p, v, (n + S) / 2 + 1);
      }
      if (!busy) continue;
      const u8* piece = ring + (n % S) * Contract::piece_bytes;
      auto at = [piece](fragment_element f) { return piece + 16 * extend_staged_chunk(f.row, f.col / 16) + f.col % 16; };
      auto widen = [](u32 word) { return e4m3x4_to_bf16x4<target>(word); };
      if (n % 2 == 0) {
        float s[plan::scores];
        plan::qk(s, qa, [&](u32 j) { return *reinterpret_cast<const u32x4*>(at(plan::k_read(lane, j))); }, widen);
        const i64* ids = table + ((n / 2) % T) * Contract::block;
        attention_block_weights<target, plan, weight_by_branch>(st, pb, alpha, s, score_scale, lane, [ids](u32, fragment_element e) { return ids[e.col] >= 0; });
      } else {
        NETRA_UNROLL
        for (u32 i = 0; i < plan::o_items; ++i) o[i] = mul_rn(o[i], alpha[plan::row_slot(i)]);
        plan::pv(o, pb, [&](u32 j) { return *reinterpret_cast<const typename plan::v_raw*>(at(plan::v_read(lane, j))); }, widen);
      }
    }
    staging::write_slice(p, e, b, sl, kv, o, st, [&](u32 i) {
      const fragment_element f = plan::o_of(lane, i);
      return fragment_element{f.row < plan::rows ? warp * plan::rows + f.row : Contract::rows, f.col};
    }, reinterpret_cast<float*>(ring));
  }
};

/// The native stage one of a contract: its products per warp (the plan) or on the warpgroup matrix unit.
template <class Contract, bool Math = true>
using attention_extend_native_stage_one =
    conditional_t<Contract::warpgroup_mma, attention_extend_native_warpgroup_stage_one<Contract, Math>, attention_extend_native_wave_stage_one<Contract, Math>>;

template <class Target, u32 PageSize, u32 Stages, u32 MaxBatch, u32 SplitCapacity, u32 WarpgroupMma>
struct kernels_of<contracts::attention_gqa4_extend_native<Target, PageSize, Stages, MaxBatch, SplitCapacity, WarpgroupMma>> {
  using contract = contracts::attention_gqa4_extend_native<Target, PageSize, Stages, MaxBatch, SplitCapacity, WarpgroupMma>;
  using type = extend_kernel_list<contract, attention_extend_native_stage_one<contract>, attention_extend_native_stage_one<contract, false>>;
};

}  // namespace netra::kernels
