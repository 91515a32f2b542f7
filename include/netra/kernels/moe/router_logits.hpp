// netra/kernels/moe/router_logits.hpp — the logits kernel of contracts::moe_router: partial
// logits into the workspace (exact_fp32 lane code: router_logits_lanes.hpp).
//   matrix_bf16: grid (16, ceil(M / 16)), 256 threads: workgroup (x, y) owns tokens 16y .. 16y + 15,
//     experts 64 (x % 4) .., K split x / 4 (partials_matrix, on the fragment layer's piece maps
//     and products); the waves' partial tiles meet in LDS (rows Contract::matrix_tile_stride
//     floats apart, which the kernel checks spreads the D-pair stores over the banks as evenly as
//     their bytes allow), are read back as one 16-byte vector per wave, added in wave order and
//     stored at partials[split][token][expert].
//   Where the target has an L2 prefetch the workgroup first asks L2 for its weight and hidden rows
//   (a hint), then waits for its predecessor (programmatic dependent launch) before the first
//   load, and releases its successor (the route kernel) after its partials' stores.
#pragma once
#include "netra/dsl/fragment/lds_tile.hpp"
#include "netra/dsl/fragment/register_tile.hpp"
#include "netra/dsl/fragment/target_shapes.hpp"
#include "netra/kernels/moe/router_logits_lanes.hpp"

namespace netra::kernels {

/// The matrix_bf16 tactic's instruction: the target's BF16 shape (dsl/fragment/target_shapes.hpp).
template <class Target> using router_matrix_shape = typename fragment::matrix_instructions<Target>::bf16;

/// The matrix_bf16 tactic's lane maps and partials (the exact tactic's contracts have none, so
/// they need no matrix instructions on their target).
template <class Contract, bool Exact = Contract::exact> struct router_logits_matrix : router_logits_lanes<Contract> {
  using base = router_logits_lanes<Contract>;
  using typename base::target, typename base::params;
  using base::waves, base::hidden_row, base::clear_zero_slot, base::partial_index;
  template <class T> static NETRA_DEVICE float zero_after_loads() { return base::template zero_after_loads<T>(); }

  /// matrix_bf16 lane maps (host models compose them with the instruction models): wave w of
  /// a split owns K [split * k_chunk + wave_k * w, + wave_k), `matrix_steps` instructions of the
  /// target's BF16 shape along it; lanes load its A (token rows) and B (expert columns) pieces by
  /// the fragment layer's piece maps (dsl/fragment/operand_pieces.hpp), at piece k past
  /// matrix_wave_k, and instruction q takes its words from them (word_of).
  using matrix_shape = router_matrix_shape<target>;
  using matrix_a = fragment::a_pieces<matrix_shape>;
  using matrix_b = fragment::b_pieces<matrix_shape>;
  static constexpr u32 wave_k = Contract::k_chunk / waves;
  static constexpr u32 matrix_steps = wave_k / matrix_shape::k;
  NETRA_HOST_DEVICE static constexpr u32 matrix_wave_k(u32 split, u32 wave) { return split * Contract::k_chunk + wave_k * wave; }
  /// K of A / B piece v of a lane (one 32-bit offset: the row pointer adds it once).
  NETRA_HOST_DEVICE static constexpr u32 matrix_a_k(u32 split, u32 wave, u32 lane, u32 v) { return matrix_wave_k(split, wave) + matrix_a::piece_of(lane, v).k; }
  NETRA_HOST_DEVICE static constexpr u32 matrix_b_k(u32 split, u32 wave, u32 lane, u32 v) { return matrix_wave_k(split, wave) + matrix_b::piece_of(lane, v).k; }

  /// Every D-pair store of the matrix tactic's LDS tile takes the fewest wavefronts its bytes
  /// allow (fragment::store_d_wavefronts; shapes with single-item stores are not constrained).
  NETRA_HOST_DEVICE static constexpr bool stores_spread_evenly() {
    if constexpr (fragment::d_pairs_adjacent<matrix_shape>()) {
      for (u32 n = 0; n < Contract::expert_tile / matrix_shape::n; ++n)
        for (u32 h = 0; 2 * h < matrix_shape::d_items; ++h)
          if (fragment::store_d_wavefronts<matrix_shape, Contract::matrix_tile_stride, target::lds_banks>(n, h) != 2 * matrix_shape::wave_size / target::lds_banks)
            return false;
    }
    return true;
  }
  static_assert(Contract::exact || stores_spread_evenly(),
                "netra::kernels::moe_router: the D-pair stores of the LDS tile take more wavefronts than their bytes need");

  /// matrix_bf16: the workgroup's 16 x 64 partial logits over its 512-K split into the workspace.
  static NETRA_DEVICE void partials_matrix(const params& p, u32 tile, u32 expert_tile, u32 split) {
    constexpr u32 tile_cols = Contract::expert_tile;  // 64
    constexpr u32 tile_stride = Contract::matrix_tile_stride;
    static_assert(tile_stride >= tile_cols && tile_stride % 4 == 0, "netra::kernels::moe_router: LDS tile rows must hold 64 floats, 16-byte aligned");
    const u32 thread = thread_id<target>();
    const u32 lane = lane_id<target>(), wave = wave_id<target>();
    NETRA_SHARED fragment::lds_f32_tile<16, tile_stride> tiles[waves];  // per wave 16 rows of tile_stride floats
    clear_zero_slot(p, thread);
    // Wave w: K [matrix_wave_k(split, w), + wave_k) = matrix_steps instructions (sm90a: 8 warps x
    // 64 K, 4 m16n8k16; gfx950: 4 waves x 128 K, 4 16x16x32); all 64 experts = `n_tiles`
    // instruction tiles (sm90a 8 n8 tiles, gfx950 4 n16). A lane loads its A pieces (token rows)
    // and per tile its B pieces (expert columns) by the piece maps (sm90a: rows g and g + 8 at K
    // 8t + 32c; gfx950: row l % 16 at K 8q + 32c), every load before the first use.
    using shape_t = matrix_shape;
    constexpr u32 n_tiles = tile_cols / shape_t::n;
    fragment::register_tile<matrix_a, matrix_steps> a;
    fragment::register_tile<matrix_b, matrix_steps> b[n_tiles];
NETRA_UNROLL
    for (u32 v = 0; v < a.pieces; ++v)
      a.piece[v] = load_16B<target, cache_policy::streaming_early>(hidden_row(p, tile * 16 + matrix_a::piece_of(lane, v).index) + matrix_a_k(split, wave, lane, v));
NETRA_UNROLL
    for (u32 n = 0; n < n_tiles; ++n)
NETRA_UNROLL
      for (u32 v = 0; v < b[n].pieces; ++v)
        b[n].piece[v] = load_16B<target, cache_policy::streaming_early>(
            p.weight + static_cast<u64>(expert_tile * tile_cols + shape_t::n * n + matrix_b::piece_of(lane, v).index) * Contract::hidden_size +
            matrix_b_k(split, wave, lane, v));
    const float zero = zero_after_loads<target>();
    float acc[n_tiles][shape_t::d_items];
NETRA_UNROLL
    for (u32 n = 0; n < n_tiles; ++n)
NETRA_UNROLL
      for (u32 i = 0; i < shape_t::d_items; ++i) acc[n][i] = zero;
    fragment::multiply<shape_t, matrix_steps>(acc, a, b);
    // The D fragments into the wave's LDS tile: where the shape pairs items in adjacent columns
    // (sm90a) one 8-byte store per pair; rows tile_stride floats apart spread a store over the
    // banks as evenly as its bytes allow (sm90a, 72: lane (g, t) starts at bank 8g + 8n + 2t, two
    // wavefronts for 256 bytes; 64 would put all 8 rows g on the same banks).
    fragment::store_d<shape_t>(tiles[wave], acc, lane);
    workgroup_barrier<target>();
    // 16 x 64 outputs, 4 consecutive experts per thread (one 16-byte LDS read per wave: a warp
    // reads 2 rows x 256 contiguous bytes, four wavefronts), waves added in order.
    const u32 row = thread / 16, col = 4 * (thread % 16);
    float s[4];
NETRA_UNROLL
    for (u32 w = 0; w < waves; ++w) {
      const u32x4 v = tiles[w].v[row][col / 4];
NETRA_UNROLL
      for (u32 j = 0; j < 4; ++j) s[j] = w == 0 ? bit_cast<float>(v[j]) : add_rn(s[j], bit_cast<float>(v[j]));
    }
    const u32 token = tile * 16 + row;
    if (token < p.tokens)
      store_16B<target>(p.partials + partial_index(split, token, expert_tile * tile_cols + col),
                        u32x4{bit_cast<u32>(s[0]), bit_cast<u32>(s[1]), bit_cast<u32>(s[2]), bit_cast<u32>(s[3])});
  }

};
template <class Contract> struct router_logits_matrix<Contract, true> : router_logits_lanes<Contract> {};

template <class Contract> struct moe_router_logits_kernel : router_logits_matrix<Contract> {
  using base = router_logits_matrix<Contract>;
  using typename base::target, typename base::params;
  using base::partials_exact;

  static NETRA_DEVICE void run(const params& p) {
    if constexpr (Contract::exact) {
      partials_exact(p);
    } else {
      const u32 x = workgroup_id<target, 0>();
      const u32 tile = workgroup_id<target, 1>();
      const u32 expert_tile = x % Contract::expert_tiles, split = x / Contract::expert_tiles;
      if constexpr (target::has_l2_prefetch) {
        // threads 0..63: the 64 weight rows' K split (1 KiB each); 64..79: the 16 hidden rows'
        const u32 thread = thread_id<target>();
        constexpr u32 bytes = Contract::k_chunk * 2;
        if (thread < Contract::expert_tile)
          prefetch_l2<target>(p.weight + static_cast<u64>(expert_tile * Contract::expert_tile + thread) * Contract::hidden_size + split * Contract::k_chunk,
                              bytes);
        else if (thread < Contract::expert_tile + 16 && tile * 16 + thread - Contract::expert_tile < p.tokens)
          prefetch_l2<target>(p.hidden + static_cast<i64>(tile * 16 + thread - Contract::expert_tile) * p.hidden_stride + split * Contract::k_chunk, bytes);
      }
      wait_for_prerequisites<target>();
      base::partials_matrix(p, tile, expert_tile, split);
      launch_dependents<target>();  // after the stores (see the file comment)
    }
  }
};

}  // namespace netra::kernels
