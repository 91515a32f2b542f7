// netra/kernels/moe/grouped_plan.hpp — the one kernel of contracts::moe_grouped_plan.
//
// Contract: the route stream grouped by key (stable counting order), cut into tiles of Tile
// routes, and the hidden rows quantized per 128 values (moe::hidden_block_quant);
// layout and semantics in contracts/moe/grouped_plan.hpp. Bitwise.
// Mapping: grid (1 + ceil(M / 4)), 1024 threads per workgroup.
//   Workgroup 0 groups. The ids become 16-bit keys in LDS. Wave w owns the contiguous segment
//   [w S, (w + 1) S) of the routes (S = ceil(R / waves) rounded up to whole waves). Pass A: per
//   wave row of keys, lanes with one key find each other (wave_match), the lowest of them adds their
//   number to the wave's count of that key (LDS, [waves][258]). Then thread k < 258 turns its key's
//   counts into per-wave bases (an exclusive sum over the waves, in wave order) and the key's total;
//   a 512-entry inclusive scan (Hillis-Steele, packed count | tiles << 16) gives every key its
//   first position and first tile. Pass C: each wave walks its segment again; a route's position
//   is its key's first position + its wave's base + its rank among its row peers, and the peers'
//   lowest lane advances the base. Thread k writes key k's tiles; thread 0 the header.
//   No atomics: the same plan on every run.
//   Workgroups 1..: workgroup q quantizes tokens 4 (q - 1) .. + 3: 16 threads per 128-value
//   block (8 values each, one 16-byte load), amax joined by xor 1, 2, 4, 8, 8 E4M3 bytes stored.
// On sm90a the kernel is launched with programmatic dependent launch: it releases its successor at
// once and waits for its predecessor (the router / shared gate) before its first load.
#pragma once
#include "netra/contracts/moe/grouped_plan.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/narrow_store.hpp"
#include "netra/dsl/sync.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/dsl/wave_reduce.hpp"
#include "netra/dsl/wave_vote.hpp"
#include "netra/dsl/workgroup_barrier.hpp"
#include "netra/kernels/moe/experts_device.hpp"

namespace netra::kernels {

template <class Contract> struct moe_grouped_plan_kernel {
  using target = typename Contract::target;
  using layout = typename Contract::layout;
  static constexpr const char* symbol = "netra_moe_grouped_plan";
  static constexpr u32 wave = target::wave_size;
  static constexpr u32 workgroup_size = 1024;
  static constexpr u32 waves = workgroup_size / wave;
  static constexpr bool programmatic_dependent_launch = target::has_programmatic_dependent_launch;
  static constexpr u32 keys = layout::keys;
  static constexpr u32 scan_size = 512;
  static constexpr u32 tokens_per_workgroup = workgroup_size / 256;  // 16 blocks x 16 threads per token
  static_assert(keys <= scan_size && scan_size <= workgroup_size, "grouped_plan: one scan entry per key and thread");

  struct params {
    const u16* hidden;  // BF16 [M, 2048]
    const i32* ids;     // [M, 9]
    u8* plan;           // grouped_plan_layout
    u32 tokens;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 tokens) {
    return {{1 + ceil_div(tokens, tokens_per_workgroup), 1, 1}, workgroup_size, 0};
  }
  /// Routes per wave segment for R routes (whole wave rows).
  NETRA_HOST_DEVICE static constexpr u32 segment(u32 routes) { return ceil_div(ceil_div(routes, waves), wave) * wave; }

  struct shared_state {
    u16 key[layout::max_routes];
    u16 count[waves][keys];  // pass A: counts; then the wave's base inside its key
    u32 scan[2][scan_size];
  };

  static NETRA_DEVICE void group(const params& p, shared_state& sh) {
    const u32 thread = thread_id<target>(), lane = lane_id<target>(), w = wave_id<target>();
    const u32 routes = p.tokens * moe::route_layout::slots;
    for (u32 i = thread; i < routes; i += workgroup_size) sh.key[i] = static_cast<u16>(moe::expert_unit_list::key_of(p.ids[i]));
    for (u32 i = thread; i < waves * keys; i += workgroup_size) (&sh.count[0][0])[i] = 0;
    workgroup_barrier<target>();
    const u32 seg = segment(routes), first = w * seg, end = min_of(routes, first + seg);
    const u64 below = (u64{1} << lane) - 1;
    for (u32 base = first; base < end; base += wave) {  // pass A (uniform per wave)
      const u32 i = base + lane;
      const u32 key = i < end ? sh.key[i] : 0xFFFFu;
      const u64 peers = wave_match<target>(key);
      if (i < end && (peers & below) == 0) sh.count[w][key] = static_cast<u16>(sh.count[w][key] + mask_popcount<target>(peers));
      wave_barrier<target>();
    }
    workgroup_barrier<target>();
    if (thread < scan_size) {
      u32 total = 0;
      if (thread < keys) {
        for (u32 v = 0; v < waves; ++v) {
          const u32 c = sh.count[v][thread];
          sh.count[v][thread] = static_cast<u16>(total);
          total += c;
        }
      }
      sh.scan[0][thread] = total | (ceil_div(total, Contract::tile) << 16);
    }
    u32 src = 0;
    for (u32 d = 1; d < scan_size; d <<= 1, src ^= 1) {  // inclusive scan, ping-pong
      workgroup_barrier<target>();
      if (thread < scan_size) sh.scan[src ^ 1][thread] = sh.scan[src][thread] + (thread >= d ? sh.scan[src][thread - d] : 0u);
    }
    workgroup_barrier<target>();
    u32* routes_out = reinterpret_cast<u32*>(p.plan + layout::routes_offset);
    for (u32 base = first; base < end; base += wave) {  // pass C
      const u32 i = base + lane;
      const u32 key = i < end ? sh.key[i] : 0xFFFFu;
      const u64 peers = wave_match<target>(key);
      if (i < end) {
        const u32 key_first = (key == 0 ? 0u : sh.scan[src][key - 1]) & 0xFFFFu;
        routes_out[key_first + sh.count[w][key] + mask_popcount<target>(peers & below)] = i;
      }
      wave_barrier<target>();
      if (i < end && (peers & below) == 0) sh.count[w][key] = static_cast<u16>(sh.count[w][key] + mask_popcount<target>(peers));
      wave_barrier<target>();
    }
    if (thread < keys) {
      const u32 before = thread == 0 ? 0u : sh.scan[src][thread - 1], at = sh.scan[src][thread];
      const u32 offset = before & 0xFFFFu, tile0 = before >> 16, count = (at & 0xFFFFu) - offset;
      u8* tiles = p.plan + layout::tiles_offset;
      for (u32 j = 0; j * Contract::tile < count; ++j)
        store_16B<target>(tiles + 16ull * (tile0 + j), u32x4{thread, offset + j * Contract::tile, min_of(Contract::tile, count - j * Contract::tile), 0u});
    }
    if (thread == 0) {
      u32* header = reinterpret_cast<u32*>(p.plan);
      header[layout::count_word] = sh.scan[src][scan_size - 1] >> 16;
      header[layout::tokens_word] = p.tokens;
      header[layout::tile_word] = Contract::tile;
    }
  }

  /// Tokens 4 (q - 1) .. + 3 of workgroup q >= 1 (threads of tokens past M compute on token M - 1
  /// and store nothing, so every lane takes part in the shuffles).
  static NETRA_DEVICE void quantize(const params& p, u32 q) {
    const u32 thread = thread_id<target>();
    const u32 token = (q - 1) * tokens_per_workgroup + thread / 256, block = (thread % 256) / 16, part = thread % 16;
    const bool live = token < p.tokens;
    const u32 t = live ? token : p.tokens - 1;
    const u32 k = block * moe::expert_weights::block + 8 * part;
    const u32x4 v = load_16B<target>(p.hidden + static_cast<u64>(t) * moe::expert_weights::hidden + k);
    u32 m = moe_experts::bf16x8_magnitude(v);
    NETRA_UNROLL
    for (u32 mask = 1; mask < 16; mask <<= 1) m = max_of(m, xor_shuffle_u32<target>(m, mask));
    const moe::hidden_block_quant::block b = moe::hidden_block_quant::of(m);
    u32 lo = moe_experts::e4m3x4_of_bf16_scaled<target>(v.x, v.y, b.reciprocal);
    u32 hi = moe_experts::e4m3x4_of_bf16_scaled<target>(v.z, v.w, b.reciprocal);
    if (b.poison) lo = hi = 0x7F7F7F7Fu;
    if (b.zero) lo = hi = 0u;
    if (!live) return;
    store_8B<target>(p.plan + layout::qx_offset + static_cast<u64>(t) * moe::expert_weights::hidden + k, lo, hi);
    if (part == 0) store_4B<target>(p.plan + layout::sx_offset + 4ull * (static_cast<u64>(t) * 16 + block), bit_cast<u32>(b.scale));
  }

  static NETRA_DEVICE void run(const params& p) {
    NETRA_SHARED shared_state sh;
    launch_dependents<target>();
    wait_for_prerequisites<target>();  // the route metadata and the hidden rows exist
    const u32 q = workgroup_id<target, 0>();
    if (q == 0) group(p, sh);
    else quantize(p, q);
  }
};

template <class Target, u32 MaxTokens, u32 Tile, u32 WaveSize>
struct kernels_of<contracts::moe_grouped_plan<Target, MaxTokens, Tile, WaveSize>> {
  using type = type_list<moe_grouped_plan_kernel<contracts::moe_grouped_plan<Target, MaxTokens, Tile, WaveSize>>>;
};

}  // namespace netra::kernels
