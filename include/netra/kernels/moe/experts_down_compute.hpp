// netra/kernels/moe/experts_down_compute.hpp — the staging and compute of
// contracts::moe_expert_down's kernel (experts_down.hpp).
//   Staging (load_unit): a unit's weights are the tile's 16 W2 rows x all 512 K (4 scale blocks,
//   8 KiB contiguous): with LDS staging one bulk copy into the wave's LDS stage (two stages per
//   wave: the unit it computes and the next in flight; lane 0 issues, the stage's barrier phase
//   completes when the bytes land); with register staging every lane's A pieces (16 bytes each,
//   streaming_early).
//   Compute: per instruction tile a lane fetches its column's E4M3 activation pieces for all 4
//   blocks (Input 0: 16-byte global loads of act_quant's output; Input 1: LDS reads of the fused
//   prologue's output), then y = ((q_0 + q_1) + q_2) + q_3, q_b = P_b * (sa_b * sw_b)
//   (dsl/fragment/block_scaled.hpp), into LDS partial[route][row]; invalid ids get no partial.
//   Input 1 prologue: wave w quantizes routes w, w + waves, ... with act_quant's exact
//   operations; lane l owns values [V l, V l + V), V = 512 / wave size; a group's amax joins its
//   128 / V lanes (xor butterfly).
#pragma once
#include "netra/kernels/moe/experts_down_schedule.hpp"

namespace netra::kernels::moe_experts {

template <class Contract> struct down_compute : down_layout<Contract> {
  using base = down_layout<Contract>;
  using typename base::target, typename base::F, typename base::S, typename base::weights, typename base::params;
  using typename base::lds_activations, typename base::unit;
  using base::wave, base::waves, base::tile_rows, base::blocks, base::fused, base::weights_in_lds, base::unit_bytes;
  using base::prologue_values, base::prologue_group_lanes, base::lane_column;

  /// Fused act_quant (Input 1): wave w quantizes routes w, w + waves, ...; lane l owns values
  /// [V l, V l + V) of the row, V = 512 / wave size; act_quant's exact operations
  /// (kernels/moe/act_quant.hpp); the amax of a 128-value group joins its 128 / V lanes.
  static NETRA_DEVICE void fused_prologue(const params& p, lds_activations& a, u32 routes, u32 w, u32 lane) {
    constexpr u32 V = prologue_values;
    NETRA_NO_UNROLL
    for (u32 r = w; r < routes; r += waves) {
      const u16* g = static_cast<const u16*>(p.act) + static_cast<u64>(r) * weights::gate_up_rows + V * lane;
      const u16* u = g + weights::intermediate;
      u32x4 gv[V / 8], uv[V / 8];
      NETRA_UNROLL
      for (u32 h = 0; h < V / 8; ++h) {
        // the predecessor's output: coherent loads, which stay after the wait
        gv[h] = load_16B<target, cache_policy::streaming_early>(g + 8 * h);
        uv[h] = load_16B<target, cache_policy::streaming_early>(u + 8 * h);
      }
      u32 y[V / 2];
      u32 magnitude = 0;
      NETRA_UNROLL
      for (u32 j = 0; j < V / 2; ++j) {
        const u32 gw = gv[j / 4][static_cast<int>(j % 4)], uw = uv[j / 4][static_cast<int>(j % 4)];
        const float lo = mul_rn(silu_f32(bit_cast<float>(gw << 16)), bit_cast<float>(uw << 16));
        const float hi = mul_rn(silu_f32(bit_cast<float>(gw & 0xFFFF0000u)), bit_cast<float>(uw & 0xFFFF0000u));
        y[j] = pack_bf16x2<target>(lo, hi);
        magnitude = max_of(magnitude, bf16x2_magnitude_max(y[j]));
      }
      NETRA_UNROLL
      for (u32 mask = 1; mask < prologue_group_lanes; mask <<= 1) magnitude = max_of(magnitude, xor_shuffle_u32<target>(magnitude, mask));
      using format = typename Contract::fp8_format;
      const float scale = act_quant_scale<format>(magnitude);
      const float divisor = act_quant_divisor(magnitude, scale);
      NETRA_UNROLL
      for (u32 j = 0; j < V / 4; ++j) {
        const u32 p0 =
            pack_fp8x2<format, target>(div_rn(bit_cast<float>(y[2 * j] << 16), divisor), div_rn(bit_cast<float>(y[2 * j] & 0xFFFF0000u), divisor));
        const u32 p1 = pack_fp8x2<format, target>(div_rn(bit_cast<float>(y[2 * j + 1] << 16), divisor),
                                                  div_rn(bit_cast<float>(y[2 * j + 1] & 0xFFFF0000u), divisor));
        *reinterpret_cast<u32*>(&a.q[r][V * lane + 4 * j]) = p0 | (p1 << 16);
      }
      if (lane % prologue_group_lanes == 0) a.scale[r][lane / prologue_group_lanes] = scale;
    }
  }

  /// The tile's 16 W2 rows of `expert`: 8 KiB, contiguous.
  static NETRA_DEVICE const u8* unit_rows(const params& p, i32 expert, u32 row0) {
    return p.w2 + static_cast<u64>(expert) * weights::w2_expert_bytes + static_cast<u64>(row0) * weights::intermediate;
  }

  /// Puts the unit's weights in flight: into the lane's registers, or (weights_in_lds) into the
  /// wave's LDS stage `staged` by one bulk copy completing on `ready` (lane 0 issues it). Then
  /// every lane loads the unit's 4 block scales.
  static NETRA_DEVICE void load_unit(const params& p, unit& un, u32 row0, u32 lane, u8* staged, lds_copy_barrier* ready) {
    const u8* wrow = unit_rows(p, un.expert, row0);
    if constexpr (weights_in_lds) {
      if (lane == 0) {
        bulk_copy_ops<target>::expect_bytes(*ready, unit_bytes);
        bulk_copy_ops<target>::copy(staged, wrow, unit_bytes, *ready);
      }
    } else {
      NETRA_UNROLL
      for (u32 b = 0; b < blocks; ++b) {
        NETRA_UNROLL
        for (u32 v = 0; v < F::weight_pieces; ++v) {
          const fragment::piece pc = F::weight_piece(lane, v);
          un.wt[b][v] = load_16B<target, cache_policy::streaming_early>(wrow + pc.index * weights::intermediate + b * weights::block + pc.k);
        }
      }
    }
    const float* srow =
        p.s2 + static_cast<u64>(un.expert) * (weights::w2_scale_rows * weights::w2_scale_cols) + (row0 / weights::block) * weights::w2_scale_cols;
    NETRA_UNROLL
    for (u32 b = 0; b < blocks; ++b) un.sw[b] = srow[b];
  }

  /// The activation words of one instruction tile of a unit, all 4 blocks, and their scales.
  struct tile_acts {
    u32 q[blocks][F::act_pieces][4];
    float sa[blocks];
  };

  /// Fetches tile n's activations of unit `un` for the lane's column (zeros for no route):
  /// Input 0, act_quant's output (global, after the wait: coherent loads, which stay there);
  /// Input 1, the prologue's LDS image.
  static NETRA_DEVICE void load_tile_acts(const params& p, const lds_activations& a, const unit& un, u32 n, u32 lane, tile_acts& t) {
    const u32 my_route = moe_experts::select(un.route, n);
    const bool live = my_route != moe_experts::no_route;
    const u32 r = live ? my_route : 0;
    NETRA_UNROLL
    for (u32 b = 0; b < blocks; ++b) {
      NETRA_UNROLL
      for (u32 v = 0; v < F::act_pieces; ++v) {
        const u32 k = b * weights::block + F::act_piece(lane, n, v).k;
        u32x4 wv = u32x4{0, 0, 0, 0};
        if constexpr (fused) {
          if (live) wv = *reinterpret_cast<const u32x4*>(&a.q[r][k]);
        } else {
          if (live) wv = load_16B<target, cache_policy::streaming_early>(static_cast<const u8*>(p.act) + static_cast<u64>(r) * weights::intermediate + k);
        }
        t.q[b][v][0] = wv.x, t.q[b][v][1] = wv.y, t.q[b][v][2] = wv.z, t.q[b][v][3] = wv.w;
      }
      if constexpr (fused) t.sa[b] = live ? a.scale[r][b] : 0.0f;
      else t.sa[b] = live ? bit_cast<float>(load_u32_strong<target>(p.act_scales + static_cast<u64>(r) * blocks + b)) : 0.0f;  // device scope: the persistent kernel reads scales written in its launch
    }
  }

  /// Tile n of unit `un`: the blocks' matrix instructions (weights_in_lds: A pieces from the
  /// unit's LDS stage `staged`); q_b = P_b * (sa_b * sw_b), y = ((q_0 + q_1) + q_2) + q_3 ->
  /// partial[route][row].
  static NETRA_DEVICE void run_tile(const unit& un, const u8* staged, u32 lane, u32 n, const tile_acts& t, float (*partial)[tile_rows]) {
    const u32 my_route = moe_experts::select(un.route, n);
    float y[S::d_items];
    auto gather = [&](u32 b, u32x4 (&wb)[F::weight_pieces]) {
      NETRA_UNROLL
      for (u32 v = 0; v < F::weight_pieces; ++v) {
        if constexpr (weights_in_lds) {
          const fragment::piece pc = F::weight_piece(lane, v);
          wb[v] = *reinterpret_cast<const u32x4*>(staged + pc.index * weights::intermediate + b * weights::block + pc.k);
        } else {
          wb[v] = un.wt[b][v];
        }
      }
    };
    fragment::block_scaled_accumulate<F, target, fragment::scale_policy::sum_of_products>(y, lane, n, gather, t.q, [&](u32 b) { return un.sw[b]; }, t.sa);
    NETRA_UNROLL
    for (u32 i = 0; i < S::d_items; ++i) {
      const u32 rr = fragment::from_column_lane<F, target>(my_route, lane, n, i);
      if (rr != moe_experts::no_route) partial[rr][F::d_element(lane, n, i).row] = y[i];
    }
  }

  /// Runs unit `un` whose tile-0 activations `first` the caller fetched; later tiles fetch theirs.
  static NETRA_DEVICE void run_unit(const params& p, const lds_activations& a, const unit& un, const u8* staged, u32 lane, const tile_acts& first,
                                    float (*partial)[tile_rows]) {
    run_tile(un, staged, lane, 0, first, partial);
    NETRA_NO_UNROLL
    for (u32 n = 1; n < F::tiles; ++n) {
      if (n * F::tile_columns >= un.columns) break;  // uniform
      tile_acts t;
      load_tile_acts(p, a, un, n, lane, t);
      run_tile(un, staged, lane, n, t, partial);
    }
  }
};

}  // namespace netra::kernels::moe_experts
