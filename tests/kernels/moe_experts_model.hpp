// tests/kernels/moe_experts_model.hpp — what the decode expert kernels' host models share: one
// block tile of a wave assembled as the kernels assemble it (their lane maps, the modelled
// matrix instructions of tests/models/), the group amax, route grouping helpers.
//   The models (test_moe_experts_{gate_up,down,units}_model.cpp) stay within the comparison
//   policy of the FP64 oracles, for both targets' mappings (gfx950 under both readings of the
//   undocumented MFMA byte order), on random and adversarial inputs. gfx950 code is never run
//   anywhere: these and the fragment tests are what check its mapping; the device code shared by
//   both targets (pointer arithmetic, scan, LDS exchange) is checked on the H200 by the GPU tests,
//   with both weight stagings.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <vector>

#include "models/mfma.hpp"
#include "models/mma_sync.hpp"
#include "netra/kernels/moe/act_quant.hpp"
#include "netra/kernels/moe/experts_down.hpp"
#include "netra/kernels/moe/experts_gate_up.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/kernel_traits.hpp"
#include "oracles/moe_experts.hpp"
#include "oracles/moe_routing.hpp"

using namespace netra;
using models::k_order_16x16x128;

namespace {

constexpr std::uint16_t poison_bf16 = 0xFFBF;  // a NaN pattern no kernel path writes (netra NaNs are 0x7FFF)

using oracles::hashed_weights;
using oracles::weight_params;

// ---- one block tile of a wave, as the kernels assemble it ----------------------------------------

template <class Target, k_order_16x16x128 Order> struct instruction {
  using F = kernels::moe_experts::block_fragment<Target>;
  using S = typename F::shape;
  using a_regs = std::array<std::array<std::uint32_t, S::a_words>, F::wave>;
  using b_regs = std::array<std::array<std::uint32_t, S::b_words>, F::wave>;
  using d_regs = std::array<std::array<float, S::d_items>, F::wave>;
  static d_regs run(const a_regs& a, const b_regs& b, const d_regs& c) {
    if constexpr (same_v<Target, gfx950>) return models::v_mfma_f32_16x16x128_e4m3<Order>(a, b, c);
    else if constexpr (same_v<Target, gfx942>) return models::v_mfma_f32_16x16x32_fp8_fp8<fp8::e4m3fnuz>(a, b, c);
    else return models::mma_m16n8k32_e4m3(a, b, c);
  }
};

template <class Target> using pieces_t = std::array<std::array<std::array<std::uint32_t, 4>, 4>, kernels::moe_experts::block_fragment<Target>::wave>;

/// D of one block (from zero) for instruction tile `tile`: weight words wp[lane][piece][word],
/// activation words q[lane][piece][word].
template <class Target, k_order_16x16x128 Order>
typename instruction<Target, Order>::d_regs block_d(const pieces_t<Target>& wp, const pieces_t<Target>& q) {
  using I = instruction<Target, Order>;
  using F = typename I::F;
  typename I::d_regs d{};
  for (unsigned m = 0; m < F::mmas; ++m) {
    typename I::a_regs a{};
    typename I::b_regs b{};
    for (unsigned l = 0; l < F::wave; ++l) {
      for (unsigned i = 0; i < I::S::a_words; ++i) a[l][i] = wp[l][F::a_word(m, i).piece][F::a_word(m, i).word];
      for (unsigned i = 0; i < I::S::b_words; ++i) b[l][i] = q[l][F::b_word(m, i).piece][F::b_word(m, i).word];
    }
    d = I::run(a, b, d);
  }
  return d;
}

/// The wave's xor butterfly of an unsigned max over the masks of the lane map.
template <class F> void group_max(std::array<std::uint32_t, F::wave>& m) {
  for (unsigned i = 0; i < F::amax_masks; ++i) {
    const auto before = m;
    for (unsigned l = 0; l < F::wave; ++l) m[l] = std::max(before[l], before[l ^ F::amax_mask(i)]);
  }
}

inline std::uint32_t word_of(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) | (static_cast<std::uint32_t>(p[2]) << 16) |
         (static_cast<std::uint32_t>(p[3]) << 24);
}

/// Routes >= first with `expert`, in route order; and whether an earlier route has it.
inline std::vector<unsigned> columns_of(const std::vector<std::int32_t>& ids, unsigned first, bool& earlier) {
  earlier = false;
  std::vector<unsigned> cols;
  for (unsigned r = 0; r < ids.size(); ++r)
    if (ids[r] == ids[first]) {
      if (r < first) earlier = true;
      else cols.push_back(r);
    }
  return cols;
}

/// A compact tensor at `data` on `device` for admission tests (nothing is dereferenced).
inline tensor_arg compact_tensor(const void* data, dtype type, device_ref device, std::initializer_list<i64> extents) {
  tensor_arg t;
  t.data = data;
  t.type = type;
  t.device = device;
  t.rank = static_cast<i32>(extents.size());
  int d = 0;
  for (const i64 e : extents) t.shape[d++] = e;
  for (i64 stride = 1; d-- > 0; stride *= t.shape[d]) t.strides[d] = stride;
  return t;
}

inline std::vector<unsigned> all_tiles(unsigned n) {
  std::vector<unsigned> t(n);
  for (unsigned i = 0; i < n; ++i) t[i] = i;
  return t;
}

}  // namespace
