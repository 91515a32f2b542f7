// netra/kernels/gdn/precompute_math.hpp — contracts::gdn_precompute's arithmetic for one head of
// one row and for one (row, v head)'s gates, shared by the precompute kernel and the recurrent
// core's raw-input staging (contracts/gdn/recurrent.hpp, field Inputs): one definition, so both
// issue the same operations in the same order and produce the same bits.
#pragma once
#include "netra/contracts/gdn/model.hpp"
#include "netra/dsl/activation.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"

namespace netra::kernels::gdn_precompute_math {

inline constexpr u32 group_lanes = 32;  // one head over a 32-lane group (half of a 64-lane wave; the xor masks stay inside it)

/// Lane `lane`'s 4 BF16 values x[4 lane .. 4 lane + 3] of the head whose 128 values start at `head`.
NETRA_DEVICE u32x2 head_load(const u16* head, u32 lane) { return *reinterpret_cast<const u32x2*>(head + 4 * lane); }

/// Lane `lane` (0..31) of the group that owns a head, from its 4 loaded values (head_load): the
/// values normalised (inv = 1 / sqrt_rn(ss + 1e-6), ss the contract's partials and butterfly),
/// q-scaled when `is_q`. Every lane of the group must call it.
template <class Target> NETRA_DEVICE void head_values(u32x2 raw, bool is_q, float (&o)[4]) {
  const float v[4] = {f32_from_bf16(static_cast<u16>(raw.x)), f32_from_bf16(static_cast<u16>(raw.x >> 16)), f32_from_bf16(static_cast<u16>(raw.y)),
                      f32_from_bf16(static_cast<u16>(raw.y >> 16))};
  float ss = mul_rn(v[0], v[0]);
  ss = fma_rn(v[1], v[1], ss);
  ss = fma_rn(v[2], v[2], ss);
  ss = fma_rn(v[3], v[3], ss);
  NETRA_UNROLL
  for (u32 m = 1; m < group_lanes; m <<= 1) ss = add_rn(ss, xor_shuffle_f32<Target>(ss, m));
  const float inv = div_rn(1.0f, sqrt_rn(add_rn(ss, gdn::l2_eps)));
  NETRA_UNROLL
  for (u32 e = 0; e < 4; ++e) o[e] = is_q ? mul_rn(mul_rn(v[e], inv), gdn::q_scale) : mul_rn(v[e], inv);
}

/// decay = exp(g) and beta of one (row, v head) from its a, b (BF16) and the head's A_log, dt_bias;
/// a NaN result is the canonical NaN.
struct gates {
  float decay, beta;
};
NETRA_HOST_DEVICE gates gates_of(u16 a, u16 b, float a_log, float dt_bias) {
  const float sp = softplus_f32(add_rn(f32_from_bf16(a), dt_bias));
  return {gdn::canonical_nan(exp_f32(-mul_rn(exp_f32(a_log), sp))), gdn::canonical_nan(sigmoid_f32(f32_from_bf16(b)))};
}

}  // namespace netra::kernels::gdn_precompute_math
