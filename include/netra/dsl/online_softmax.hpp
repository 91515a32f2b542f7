// netra/dsl/online_softmax.hpp — the (m, l, o) state of an online softmax and its rescale-merge,
// with one fixed association order, the same bits on the host, gfx950 and sm90a.
//
// A state summarises a set of scores s_j with values v_j: m = max_j s_j, l = sum_j e^(s_j - m),
// o = sum_j e^(s_j - m) v_j (one o per output element; the caller keeps the o's). The empty state
// is (m = -inf, l = 0, o = 0). Two states a, b merge as
//   m = max(m_a, m_b),  alpha = rescale(m_a, m),  beta = rescale(m_b, m),
//   l = l_a * alpha + l_b * beta,   o = o_a * alpha + o_b * beta,
// each product and the sum rounded once, in exactly this order (mul_rn, mul_rn, add_rn), where
// rescale(x, m) = 0 if x = -inf (an empty side contributes nothing, and -inf - -inf is never
// formed), else exp_f32(x - m) (dsl/math.hpp). A block step of a kernel's online softmax is the
// merge with a block whose weights were taken against the new maximum (beta = 1 exactly:
// exp_f32(0) = 1): m = max(m, m_block), alpha = rescale(m_old, m), p_j = weight(s_j, m),
// l = l * alpha + sum_j p_j, o = o * alpha + sum_j p_j v_j.
// Merging is not associative in floating point: a contract that promises bits names the order in
// which states merge (tests/dsl/test_online_softmax.cpp shows that two orders differ).
// NaN scores propagate through max_of's `a < b ? b : a` only from the second operand; kernels
// that must not see NaN scores mask them before they reach the state.
#pragma once
#include "netra/dsl/math.hpp"

namespace netra {

/// -inf as a float (NVRTC has no __builtin_inff).
NETRA_HOST_DEVICE constexpr float negative_infinity() { return bit_cast<float>(0xFF800000u); }

/// The factor that moves a sum taken against maximum `from` to maximum `to` (to >= from):
/// 0 when `from` is -inf (nothing was summed), else exp(from - to).
NETRA_HOST_DEVICE float softmax_rescale(float from, float to) {
  return from == negative_infinity() ? 0.0f : exp_f32(sub_rn(from, to));
}

/// The weight e^(s - m) of score `s` against maximum `m`; 0 when m is -inf (no score yet, or
/// every score masked) or s is -inf.
NETRA_HOST_DEVICE float softmax_weight(float s, float m) { return m == negative_infinity() ? 0.0f : exp_f32(sub_rn(s, m)); }

/// softmax_weight(s, m) where s <= m or either is NaN (a block step's scores against a maximum
/// taken over them): the same bits, with the exponential's overflow select left out (s - m is
/// <= 0 or NaN) and the empty row a select rather than a branch, so a kernel can interleave the
/// weights (tests/dsl/test_online_softmax.cpp: every such difference s - m).
NETRA_HOST_DEVICE float softmax_weight_of_max(float s, float m) {
  const float w = exp_f32_not_above_high(sub_rn(s, m));
  return m == negative_infinity() ? 0.0f : w;
}

/// The running statistics of one softmax row.
struct softmax_stats {
  float m;
  float l;
};
NETRA_HOST_DEVICE constexpr softmax_stats softmax_empty() { return {negative_infinity(), 0.0f}; }

/// The factors a merge applies to each side, and the merged statistics.
struct softmax_merge_factors {
  softmax_stats merged;
  float alpha;  // applied to a's l and o
  float beta;   // applied to b's l and o
};

/// The merge of statistics a and b (see the file comment for the order).
NETRA_HOST_DEVICE softmax_merge_factors softmax_merge(softmax_stats a, softmax_stats b) {
  const float m = max_of(a.m, b.m);
  const float alpha = softmax_rescale(a.m, m), beta = softmax_rescale(b.m, m);
  return {{m, add_rn(mul_rn(a.l, alpha), mul_rn(b.l, beta))}, alpha, beta};
}

/// One accumulator of the merge: o_a * alpha + o_b * beta.
NETRA_HOST_DEVICE float softmax_merge_value(float o_a, float o_b, const softmax_merge_factors& f) {
  return add_rn(mul_rn(o_a, f.alpha), mul_rn(o_b, f.beta));
}

/// The normalised output o / l * scale of a finished state; 0 when l is 0 (no position seen).
NETRA_HOST_DEVICE float softmax_finish(float o, float l, float scale) { return l == 0.0f ? 0.0f : mul_rn(div_rn(o, l), scale); }

}  // namespace netra
