// netra/kernels/attention/block_weights.hpp — the block step of an online-softmax attention wave on
// its scores (the GQA8 waves, gqa8_wave.hpp; the native GQA4 extend, extend_native_staging.hpp):
// for each of the lane's score row slots k, in this order: every kept score scaled by
// score_scale (a dropped one is -inf), the block maximum over the row's items then over its lanes
// (xor row_mask(0), row_mask(1)), m_new = max(m, block maximum), the BF16 weights
// softmax_weight(s, m_new) packed in pair words, l over the pair words in order then over the
// lanes, and the merge (dsl/online_softmax.hpp) of the row's statistics with (m_new, l): alpha[k]
// is the old state's factor. Plan: scores, score_row_slot(i), score_of(lane, i), row_mask(i).
// Weight: how each weight is taken, the same bits either way — weight_by_branch
// (softmax_weight: the empty row a branch, the overflow select kept) or weight_of_max
// (softmax_weight_of_max: every score is at most m_new or NaN, m_new being the maximum over them;
// no branch, more weights live at once).
#pragma once
#include "netra/dsl/attention_fragment.hpp"
#include "netra/dsl/online_softmax.hpp"
#include "netra/dsl/wave_reduce.hpp"

namespace netra::kernels {

struct weight_by_branch {
  static NETRA_HOST_DEVICE float of(float s, float m) { return softmax_weight(s, m); }
};
struct weight_of_max {
  static NETRA_HOST_DEVICE float of(float s, float m) { return softmax_weight_of_max(s, m); }
};

template <class Target, class Plan, class Weight, u32 R, class Keep>
NETRA_DEVICE void attention_block_weights(softmax_stats (&st)[R], u32 (&pb)[Plan::scores / 2], float (&alpha)[R], float (&s)[Plan::scores], float score_scale,
                                          u32 lane, Keep keep) {
  NETRA_UNROLL
  for (u32 k = 0; k < R; ++k) {
    float m_block = negative_infinity();
    NETRA_UNROLL
    for (u32 i = 0; i < Plan::scores; ++i)
      if (Plan::score_row_slot(i) == k) {
        s[i] = keep(i, Plan::score_of(lane, i)) ? mul_rn(s[i], score_scale) : negative_infinity();
        m_block = max_of(m_block, s[i]);
      }
    m_block = max_of(m_block, xor_shuffle_f32<Target>(m_block, Plan::row_mask(0)));
    m_block = max_of(m_block, xor_shuffle_f32<Target>(m_block, Plan::row_mask(1)));
    const float m_new = max_of(st[k].m, m_block);
    float l_block = 0.0f;
    NETRA_UNROLL
    for (u32 j = 0; j < Plan::scores / 2; ++j)
      if (Plan::score_row_slot(2 * j) == k) {
        pb[j] = pack_bf16x2<Target>(Weight::of(s[2 * j], m_new), Weight::of(s[2 * j + 1], m_new));
        l_block = add_rn(l_block, f32_from_bf16(static_cast<u16>(pb[j])));
        l_block = add_rn(l_block, f32_from_bf16(static_cast<u16>(pb[j] >> 16)));
      }
    l_block = add_rn(l_block, xor_shuffle_f32<Target>(l_block, Plan::row_mask(0)));
    l_block = add_rn(l_block, xor_shuffle_f32<Target>(l_block, Plan::row_mask(1)));
    const softmax_merge_factors f = softmax_merge(st[k], {m_new, l_block});
    st[k] = f.merged;
    alpha[k] = f.alpha;
  }
}

}  // namespace netra::kernels
