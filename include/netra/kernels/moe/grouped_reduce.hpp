// netra/kernels/moe/grouped_reduce.hpp — the one kernel of contracts::moe_grouped_reduce (and of
// contracts::moe_split_k_reduce, its KParts 2 instance for M = 768).
//
// Contract: out[t][n] = bf16(sum over slots s = 0..8, in order, of fma(weights[t][s], y, acc))
// with y from the partials (grouped_down.hpp); semantics in contracts/moe/grouped_reduce.hpp.
// Mapping: grid (16, M); workgroup (x, t), 64 threads; thread i owns columns n = 128 x + 2 i and
// n + 1 of token t. The 9 ids and weights are the workgroup's (uniform); a valid route's y pair is
// one 8-byte load (KParts 1: y of n, n + 1; KParts 2: h_0, h_1 of n, then of n + 1). One 4-byte BF16x2 store.
// No LDS. On sm90a: programmatic dependent launch (released at once, waits before its loads).
#pragma once
#include "netra/contracts/moe/grouped_reduce.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/convert.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/math.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/kernels/moe/grouped_f16.hpp"

namespace netra::kernels {

template <class Contract> struct moe_grouped_reduce_kernel {
  using target = typename Contract::target;
  using weights = moe::expert_weights;
  static constexpr const char* symbol = "netra_moe_grouped_reduce";
  static constexpr u32 workgroup_size = 64;
  static constexpr u32 columns = 2 * workgroup_size;  // per workgroup
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 k_parts = Contract::k_parts;

  struct params {
    const void* partials;  // FP32 [R_max, 2048] or FP16 [R_max, 2048, 2]
    const i32* ids;        // [M, 9]
    const float* route_weights;  // [M, 9]
    u16* out;              // BF16 [M, 2048]
    u32 tokens;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) { return {{weights::hidden / columns, tokens, 1}, workgroup_size, 0}; }

  static NETRA_DEVICE void run(const params& p) {
    launch_dependents<target>();
    wait_for_prerequisites<target>();  // the partials (and before them the routes) exist
    const u32 t = workgroup_id<target, 1>();
    const u32 n = columns * workgroup_id<target, 0>() + 2 * thread_id<target>();
    float acc0 = 0.0f, acc1 = 0.0f;
    NETRA_UNROLL
    for (u32 s = 0; s < moe::route_layout::slots; ++s) {
      const u64 r = moe::route_layout::index(t, s);
      const float w = p.route_weights[r];
      float y0 = 0.0f, y1 = 0.0f;
      if (moe::expert_weights::valid_expert(p.ids[r])) {
        const u64 at = r * weights::hidden + n;
        if constexpr (k_parts == 1) {
          const float* y = static_cast<const float*>(p.partials) + at;
          y0 = y[0];
          y1 = y[1];
        } else {
          const u32* h = reinterpret_cast<const u32*>(static_cast<const u16*>(p.partials) + 2 * at);
          const u32 c0 = h[0], c1 = h[1];
          y0 = add_rn(moe_grouped::f32_from_f16(static_cast<u16>(c0)), moe_grouped::f32_from_f16(static_cast<u16>(c0 >> 16)));
          y1 = add_rn(moe_grouped::f32_from_f16(static_cast<u16>(c1)), moe_grouped::f32_from_f16(static_cast<u16>(c1 >> 16)));
        }
      }
      acc0 = fma_rn(w, y0, acc0);
      acc1 = fma_rn(w, y1, acc1);
    }
    store_4B<target>(p.out + static_cast<u64>(t) * weights::hidden + n, pack_bf16x2<target>(acc0, acc1));
  }
};

template <class Target, u32 MinTokens, u32 MaxTokens, u32 KParts, u32 WaveSize>
struct kernels_of<contracts::moe_grouped_reduce<Target, MinTokens, MaxTokens, KParts, WaveSize>> {
  using type = type_list<moe_grouped_reduce_kernel<contracts::moe_grouped_reduce<Target, MinTokens, MaxTokens, KParts, WaveSize>>>;
};

}  // namespace netra::kernels
