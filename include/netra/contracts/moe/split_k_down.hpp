// netra/contracts/moe/split_k_down.hpp — the article's exact M768 verification contract: 768
// tokens (12 draft tokens x 64 requests), 257 experts with the shared one, top-9 routes, hidden
// 2048, intermediate 512, 128 x 128 block scales. Two launches after gate_up:
//   producer  contracts::moe_grouped_down with KParts 2: two K partitions (K 0..255, 256..511) per
//             plan tile, FP16 partials into a caller-owned persistent buffer [6912, 2048, 2]
//             (56.6 MB); gfx950: grid (2, 365, 1) = (K parts x one row range of 2048, the experts'
//             tiles of 64 routes: 6912 / 64 + 257 bound), 256 VGPRs and 64 KiB LDS as the declared budget
//             (the article's choice for holding the MFMA tile; the audit checks the object against it).
//   reducer   contracts::moe_grouped_reduce with KParts 2: grid (16, 768, 1), reads both partials,
//             route weights in FP32 in slot order, BF16 out; 28 VGPRs on gfx950 (declared budget).
// sm90a: Tile 32 with 16 row tiles (grid (32, 473, 1)): see docs/kernels/moe-grouped.md for the
// measurement that chose it and for where the partials live on the H200 (60 MiB of L2).
// Numerics: grouped_down.hpp / grouped_reduce.hpp (KParts 2's bound).
#pragma once
#include "netra/contracts/moe/grouped_down.hpp"
#include "netra/contracts/moe/grouped_reduce.hpp"

namespace netra::contracts {

template <class Target> inline constexpr u32 split_k_tile = same_v<Target, gfx950> ? 64 : 32;
template <class Target> inline constexpr u32 split_k_row_tiles = same_v<Target, gfx950> ? 1 : 16;

template <class Target, u32 Tokens = 768>
struct moe_split_k_down : moe_grouped_down<Target, Tokens, Tokens, split_k_tile<Target>, 2, split_k_row_tiles<Target>> {
  static_assert(Tokens == 768, "netra::contracts::moe_split_k_down: field Tokens must be 768 (the exact M768 contract)");
  static constexpr const char* family = "moe_grouped_split_k_down";
  static constexpr const char* template_name = "netra::contracts::moe_split_k_down";
  static constexpr i64 template_args[] = {Tokens};
  static constexpr resource_budget budget() {
    resource_budget b = moe_grouped_down<Target, Tokens, Tokens, split_k_tile<Target>, 2, split_k_row_tiles<Target>>::budget();
    if constexpr (same_v<Target, gfx950>) {
      b.max_vgprs = 256;
      b.max_lds_bytes = 65536;
    }
    return b;
  }
};

template <class Target, u32 Tokens = 768> struct moe_split_k_reduce : moe_grouped_reduce<Target, Tokens, Tokens, 2> {
  static_assert(Tokens == 768, "netra::contracts::moe_split_k_reduce: field Tokens must be 768 (the exact M768 contract)");
  static constexpr const char* family = "moe_grouped_split_k_reduce";
  static constexpr const char* template_name = "netra::contracts::moe_split_k_reduce";
  static constexpr i64 template_args[] = {Tokens};
  static constexpr resource_budget budget() {
    resource_budget b = moe_grouped_reduce<Target, Tokens, Tokens, 2>::budget();
    if constexpr (same_v<Target, gfx950>) b.max_vgprs = 28;
    return b;
  }
};

}  // namespace netra::contracts
