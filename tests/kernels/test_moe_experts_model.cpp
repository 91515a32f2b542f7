// The decode expert kernels' decompositions modelled on the host — with their own lane maps
// (kernels/moe/experts_fragment.hpp), the route grouping (first route of an expert serves all
// of its routes), the fused per-128 quantizations, the modelled matrix instructions
// (tests/models/) and the documented FP32 accumulation orders — stay within the comparison
// policy of the FP64 oracles, for both targets' mappings (gfx950 under both readings of the
// undocumented MFMA byte order), on random and adversarial inputs. gfx950 code is never run
// anywhere: this and the block-tile test are what check its mapping; the device code shared by
// both targets (pointer arithmetic, scan, LDS exchange) is checked on the H200 by the GPU tests.
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

std::uint32_t word_of(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) | (static_cast<std::uint32_t>(p[2]) << 16) |
         (static_cast<std::uint32_t>(p[3]) << 24);
}

/// Routes >= first with `expert`, in route order; and whether an earlier route has it.
std::vector<unsigned> columns_of(const std::vector<std::int32_t>& ids, unsigned first, bool& earlier) {
  earlier = false;
  std::vector<unsigned> cols;
  for (unsigned r = 0; r < ids.size(); ++r)
    if (ids[r] == ids[first]) {
      if (r < first) earlier = true;
      else cols.push_back(r);
    }
  return cols;
}

// ---- gate_up ------------------------------------------------------------------------------------

/// The gate_up kernel's decomposition: the workgroup of the route at occurrence 0, 16, .. of its
/// expert serves 16 columns; per instruction tile each wave quantizes the tile's used columns one
/// at a time with the pass's lane map (lane l: values [V l, V l + V) of the wave's K range, the
/// xor butterfly over K::pass_masks), then every lane gathers its B words (F::act_piece of its
/// column) from the lanes that hold them and its column's block scales; the D items' scales come
/// from the lane whose B column the item's column is.
template <class Contract, k_order_16x16x128 Order>
std::vector<std::uint16_t> gate_up_model(int tokens, const std::vector<std::uint16_t>& hidden, const std::vector<std::int32_t>& ids,
                                         const oracles::expert_weight_view& w, const std::vector<unsigned>& tiles) {
  using target = typename Contract::target;
  using K = kernels::moe_expert_gate_up_kernel<Contract>;
  using F = typename K::F;
  constexpr unsigned W = F::wave;
  constexpr unsigned V = K::pass_values;
  const unsigned routes = static_cast<unsigned>(tokens) * 9;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(routes) * 1024, poison_bf16);
  long lane_values_across_blocks = 0, written_twice = 0;
  for (unsigned route = 0; route < routes; ++route)
    for (unsigned tile : tiles) {
      const unsigned row0 = tile * K::tile_rows;
      const std::int32_t e = ids[route];
      if (!moe::expert_weights::valid_expert(e)) {
        for (unsigned i = 0; i < K::tile_rows; ++i) out[route * 1024 + row0 + i] = 0;
        continue;
      }
      unsigned occurrence = 0;
      for (unsigned r = 0; r < route; ++r) occurrence += ids[r] == e;
      if (occurrence % K::chunk_columns != 0) continue;
      bool earlier;
      const auto cols = columns_of(ids, route, earlier);
      const unsigned columns = std::min<unsigned>(static_cast<unsigned>(cols.size()), K::chunk_columns);
      float partial[K::k_split][K::chunk_columns][K::tile_rows] = {};
      for (unsigned wv = 0; wv < K::k_split; ++wv)
        for (unsigned n = 0; n < F::tiles; ++n) {
          if (n * F::tile_columns >= columns) continue;
          // the pass: held[c][l] = lane l's E4M3 words of column c, scale[c][l] its block's scale
          std::vector<std::array<std::array<std::uint32_t, 4>, W>> held(K::chunk_columns);
          std::vector<std::array<float, W>> scale(K::chunk_columns);
          for (unsigned c = n * F::tile_columns; c < std::min(columns, (n + 1) * F::tile_columns); ++c) {
            const std::uint16_t* x = &hidden[(cols[c] / 9) * 2048 + wv * K::k_per_wave];
            std::array<std::uint32_t, W> magnitude{};
            for (unsigned l = 0; l < W; ++l)
              for (unsigned j = 0; j < V; ++j) magnitude[l] = std::max<std::uint32_t>(magnitude[l], x[V * l + j] & 0x7FFFu);
            for (unsigned i = 0; i < K::pass_masks; ++i) {
              const auto before = magnitude;
              for (unsigned l = 0; l < W; ++l) magnitude[l] = std::max(before[l], before[l ^ (1u << i)]);
            }
            for (unsigned l = 0; l < W; ++l) {
              const auto h = moe::hidden_block_quant::of(magnitude[l]);
              scale[c][l] = h.scale;
              lane_values_across_blocks += (V * l) / 128 != (V * l + V - 1) / 128;
              std::uint8_t bytes[16] = {};
              for (unsigned j = 0; j < V; ++j)
                bytes[j] = h.poison ? 0x7F : (h.zero ? 0 : e4m3_from_f32_reference(mul_rn(f32_from_bf16(x[V * l + j]), h.reciprocal)));
              for (unsigned i = 0; i < V / 4; ++i) held[c][l][i] = word_of(bytes + 4 * i);
            }
          }
          std::array<std::array<float, F::shape::d_items>, W> acc{};
          for (unsigned b = 0; b < K::blocks_per_wave; ++b) {
            const unsigned kb = wv * K::blocks_per_wave + b;  // global scale block
            pieces_t<target> wp{}, q{};
            std::array<float, W> sx{};
            for (unsigned l = 0; l < W; ++l) {
              for (unsigned v = 0; v < F::weight_pieces; ++v) {
                const auto pc = F::weight_piece(l, v);
                std::uint8_t bytes[16];
                for (unsigned i = 0; i < 16; ++i) bytes[i] = w.w13(e, static_cast<int>(row0 + pc.index), static_cast<int>(kb * 128 + pc.k + i));
                for (unsigned j = 0; j < 4; ++j) wp[l][v][j] = word_of(bytes + 4 * j);
              }
              const unsigned c = K::lane_column(l, n);
              if (c >= columns) continue;  // an unused column: zeros
              for (unsigned v = 0; v < F::act_pieces; ++v)
                for (unsigned j = 0; j < 4; ++j) {
                  const unsigned k = b * 128 + F::act_piece(l, n, v).k + 4 * j;
                  q[l][v][j] = held[c][k / V][(k % V) / 4];
                }
              sx[l] = scale[c][b * K::pass_lanes];
            }
            const auto d = block_d<target, Order>(wp, q);
            const float sw = w.s13(e, static_cast<int>(row0 / 128), static_cast<int>(kb));
            for (unsigned l = 0; l < W; ++l)
              for (unsigned i = 0; i < F::shape::d_items; ++i) {
                const auto el = F::d_element(l, n, i);
                const unsigned src = F::d_column_is_b_column ? l : F::b_lane_of(el.col - n * F::tile_columns);
                acc[l][i] = fma_rn(d[l][i], mul_rn(sw, sx[src]), acc[l][i]);
              }
          }
          for (unsigned l = 0; l < W; ++l)
            for (unsigned i = 0; i < F::shape::d_items; ++i) {
              const auto el = F::d_element(l, n, i);
              partial[wv][el.col][el.row] = acc[l][i];
            }
        }
      for (unsigned col = 0; col < columns; ++col)
        for (unsigned row = 0; row < K::tile_rows; ++row) {
          float s = partial[0][col][row];
          for (unsigned wv = 1; wv < K::k_split; ++wv) s = add_rn(s, partial[wv][col][row]);
          written_twice += out[cols[col] * 1024 + row0 + row] != poison_bf16;  // every output is written once
          out[cols[col] * 1024 + row0 + row] = bf16_from_f32_reference(s);
        }
    }
  CHECK(lane_values_across_blocks == 0);  // a lane's pass values lie in one scale block
  CHECK(written_twice == 0);
  return out;
}

template <class Contract, k_order_16x16x128 Order = k_order_16x16x128::halves>
oracles::policy_report check_gate_up(int tokens, const std::vector<std::uint16_t>& hidden, const std::vector<std::int32_t>& ids,
                                     const oracles::expert_weight_view& w, const std::vector<unsigned>& tiles) {
  std::vector<bool> selected(1024, false);
  for (unsigned t : tiles)
    for (unsigned i = 0; i < 16; ++i) selected[t * 16 + i] = true;
  const auto got = gate_up_model<Contract, Order>(tokens, hidden, ids, w, tiles);
  const auto ref = oracles::gate_up_reference(tokens, hidden.data(), ids.data(), w, [&](int n) { return selected[static_cast<std::size_t>(n)]; });
  return oracles::check_policy(ref, got, [&](std::size_t i) { return selected[i % 1024]; });
}

std::vector<unsigned> all_tiles(unsigned n) {
  std::vector<unsigned> t(n);
  for (unsigned i = 0; i < n; ++i) t[i] = i;
  return t;
}

// ---- down ---------------------------------------------------------------------------------------

template <class Contract, k_order_16x16x128 Order>
std::vector<std::uint16_t> down_model(int tokens, const std::vector<std::uint8_t>& act, const std::vector<float>& act_scales,
                                      const std::vector<std::uint16_t>& gate_up_out, const std::vector<std::int32_t>& ids,
                                      const std::vector<float>& route_weights, const oracles::expert_weight_view& w,
                                      const std::vector<unsigned>& tiles) {
  using target = typename Contract::target;
  using K = kernels::moe_expert_down_kernel<Contract>;
  using F = typename K::F;
  constexpr unsigned W = F::wave;
  const unsigned routes = static_cast<unsigned>(tokens) * 9;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(tokens) * 2048, poison_bf16);
  for (unsigned tile : tiles) {
    const unsigned row0 = tile * K::tile_rows;
    std::vector<std::array<std::array<float, 16>, 4>> partial(routes);
    for (unsigned route = 0; route < routes; ++route) {
      const std::int32_t e = ids[route];
      if (!moe::expert_weights::valid_expert(e)) {
        for (auto& blk : partial[route]) blk.fill(0.0f);
        continue;
      }
      unsigned occurrence = 0;
      for (unsigned r = 0; r < route; ++r) occurrence += ids[r] == e;
      if (occurrence % K::chunk_columns != 0) continue;  // the unit at occurrence 0, 16, .. serves 16 routes
      bool earlier;
      const auto cols = columns_of(ids, route, earlier);
      {
        const unsigned chunk = 0;
        const unsigned columns = std::min<unsigned>(static_cast<unsigned>(cols.size()), K::chunk_columns);
        for (unsigned n = 0; n < F::tiles; ++n) {
          if (n * F::tile_columns >= columns) continue;
          for (unsigned b = 0; b < K::blocks; ++b) {
            pieces_t<target> wp{}, q{};
            std::array<float, W> sa{};
            std::array<unsigned, W> lane_route{};
            std::array<std::uint32_t, W> magnitude{};
            std::array<std::array<std::uint32_t, 8>, F::act_pieces> y_words[W] = {};
            for (unsigned l = 0; l < W; ++l) {
              for (unsigned v = 0; v < F::weight_pieces; ++v) {
                const auto pc = F::weight_piece(l, v);
                std::uint8_t bytes[16];
                for (unsigned i = 0; i < 16; ++i) bytes[i] = w.w2(e, static_cast<int>(row0 + pc.index), static_cast<int>(b * 128 + pc.k + i));
                for (unsigned j = 0; j < 4; ++j) wp[l][v][j] = word_of(bytes + 4 * j);
              }
              const unsigned col = K::lane_column(l, n);
              const bool live = col < columns;
              const unsigned r = live ? cols[chunk * K::chunk_columns + col] : kernels::moe_experts::no_route;
              lane_route[l] = r;
              if constexpr (!Contract::fused_act_quant) {
                for (unsigned v = 0; v < F::act_pieces; ++v)
                  for (unsigned j = 0; j < 4; ++j) q[l][v][j] = live ? word_of(&act[r * 512 + b * 128 + F::act_piece(l, n, v).k + 4 * j]) : 0;
                sa[l] = live ? act_scales[r * 4 + b] : 0.0f;
              } else {
                for (unsigned v = 0; v < F::act_pieces; ++v)
                  for (unsigned j = 0; j < 8; ++j) {
                    std::uint32_t word = 0;
                    if (live) {
                      const unsigned k = b * 128 + F::act_piece(l, n, v).k + 2 * j;
                      const std::uint16_t* row = &gate_up_out[r * 1024];
                      const float lo = mul_rn(silu_f32(f32_from_bf16(row[k])), f32_from_bf16(row[512 + k]));
                      const float hi = mul_rn(silu_f32(f32_from_bf16(row[k + 1])), f32_from_bf16(row[512 + k + 1]));
                      word = bf16_from_f32_reference(lo) | (static_cast<std::uint32_t>(bf16_from_f32_reference(hi)) << 16);
                    }
                    y_words[l][v][j] = word;
                    magnitude[l] = std::max(magnitude[l], kernels::bf16x2_magnitude_max(word));
                  }
              }
            }
            if constexpr (Contract::fused_act_quant) {
              group_max<F>(magnitude);
              for (unsigned l = 0; l < W; ++l) {
                const float scale = kernels::act_quant_scale(magnitude[l]);
                const float divisor = kernels::act_quant_divisor(magnitude[l], scale);
                sa[l] = lane_route[l] != kernels::moe_experts::no_route ? scale : 0.0f;
                for (unsigned v = 0; v < F::act_pieces; ++v) {
                  std::uint8_t bytes[16];
                  for (unsigned i = 0; i < 16; ++i) {
                    const std::uint32_t word = y_words[l][v][i / 2];
                    const float y = f32_from_bf16(static_cast<std::uint16_t>(i % 2 ? word >> 16 : word & 0xFFFF));
                    bytes[i] = e4m3_from_f32_reference(div_rn(y, divisor));
                  }
                  for (unsigned j = 0; j < 4; ++j) q[l][v][j] = word_of(bytes + 4 * j);
                }
              }
            }
            const auto d = block_d<target, Order>(wp, q);
            const float sw = w.s2(e, static_cast<int>(row0 / 128), static_cast<int>(b));
            for (unsigned l = 0; l < W; ++l)
              for (unsigned i = 0; i < F::shape::d_items; ++i) {
                const auto el = F::d_element(l, n, i);
                const unsigned src = F::d_column_is_b_column ? l : F::b_lane_of(el.col - n * F::tile_columns);
                if (lane_route[src] == kernels::moe_experts::no_route) continue;
                partial[lane_route[src]][b][el.row] = mul_rn(d[l][i], mul_rn(sa[src], sw));
              }
          }
        }
      }
    }
    for (int t = 0; t < tokens; ++t)
      for (unsigned row = 0; row < K::tile_rows; ++row) {
        float acc = 0.0f;
        for (unsigned s = 0; s < 9; ++s) {
          const auto& p = partial[static_cast<unsigned>(t) * 9 + s];
          const float y = add_rn(add_rn(add_rn(p[0][row], p[1][row]), p[2][row]), p[3][row]);
          acc = fma_rn(route_weights[static_cast<unsigned>(t) * 9 + s], y, acc);
        }
        out[static_cast<unsigned>(t) * 2048 + row0 + row] = bf16_from_f32_reference(acc);
      }
  }
  return out;
}

struct down_case {
  int tokens;
  std::vector<std::int32_t> ids;
  std::vector<float> route_weights;
  std::vector<std::uint16_t> gate_up_out;  // BF16 [9M, 1024]
  std::vector<std::uint8_t> act;           // act_quant(gate_up_out)
  std::vector<float> act_scales;
};

down_case make_down_case(int tokens, std::uint64_t seed, std::vector<std::int32_t> ids, float gate_sigma = 0.5f) {
  down_case c{tokens, std::move(ids), {}, {}, {}, {}};
  oracles::xorshift r{seed * 31 + 7};
  c.route_weights.resize(static_cast<std::size_t>(tokens) * 9);
  for (auto& v : c.route_weights) v = 0.05f + 0.1f * (r.uniform() + 1.0f);
  c.gate_up_out.resize(static_cast<std::size_t>(tokens) * 9 * 1024);
  for (auto& v : c.gate_up_out) v = bf16_from_f32_reference((r.uniform() + r.uniform()) * gate_sigma * 4.0f);
  c.act.resize(static_cast<std::size_t>(tokens) * 9 * 512);
  c.act_scales.resize(static_cast<std::size_t>(tokens) * 9 * 4);
  oracles::act_quant(c.gate_up_out.data(), tokens * 9, 1024, c.act.data(), c.act_scales.data());
  return c;
}

template <class Contract, k_order_16x16x128 Order = k_order_16x16x128::halves>
oracles::policy_report check_down(const down_case& c, const oracles::expert_weight_view& w, const std::vector<unsigned>& tiles) {
  std::vector<bool> selected(2048, false);
  for (unsigned t : tiles)
    for (unsigned i = 0; i < 16; ++i) selected[t * 16 + i] = true;
  const auto got = down_model<Contract, Order>(c.tokens, c.act, c.act_scales, c.gate_up_out, c.ids, c.route_weights, w, tiles);
  const auto ref = oracles::down_reference(c.tokens, c.act.data(), c.act_scales.data(), c.ids.data(), c.route_weights.data(), w,
                                           [&](int n) { return selected[static_cast<std::size_t>(n)]; });
  return oracles::check_policy(ref, got, [&](std::size_t i) { return selected[i % 2048]; });
}

/// The units kernel (kernels/moe/expert_units.hpp) lane by lane for a wave of W lanes: the rows
/// of ids in route order, each lane's key peers (match), occurrence, the running unit count, a
/// route's unit from its row peer or its key's latest unit, then the stores into the list layout.
template <unsigned W> std::vector<std::uint32_t> unit_list_model(const std::vector<std::int32_t>& ids) {
  using list = moe::expert_unit_list;
  const unsigned routes = static_cast<unsigned>(ids.size()), rows = (routes + W - 1) / W;
  std::vector<std::uint32_t> words(list::bytes(routes) / 4, 0xDEADBEEFu), count(list::keys, 0), latest(list::keys, 0xDEADBEEFu);
  std::vector<std::uint32_t> occurrence(rows * W), unit(rows * W);
  std::uint32_t units = 0;
  for (unsigned it = 0; it < rows; ++it) {
    std::uint32_t key[W], occ[W], own[W];
    std::uint64_t peers[W], starters = 0;
    for (unsigned l = 0; l < W; ++l) {
      const unsigned i = it * W + l;
      key[l] = i < routes ? list::key_of(ids[i]) : list::keys;
    }
    for (unsigned l = 0; l < W; ++l) {
      peers[l] = 0;
      for (unsigned m = 0; m < W; ++m) peers[l] |= static_cast<std::uint64_t>(key[m] == key[l]) << m;
      const std::uint32_t slot = it * W + l < routes ? key[l] : 0;
      occ[l] = count[slot] + bit_count_u64(peers[l] & lanes_below(l));
      starters |= static_cast<std::uint64_t>(it * W + l < routes && occ[l] % 16 == 0) << l;
    }
    for (unsigned l = 0; l < W; ++l) own[l] = units + bit_count_u64(starters & lanes_below(l));
    for (unsigned l = 0; l < W; ++l) {
      const std::uint32_t slot = it * W + l < routes ? key[l] : 0, before = count[slot], first = occ[l] - occ[l] % 16;
      const bool in_row = first >= before;
      unit[it * W + l] = in_row ? own[nth_set_bit(peers[l], first - before)] : latest[slot];
      occurrence[it * W + l] = occ[l];
    }
    units += bit_count_u64(starters);
    for (unsigned l = 0; l < W; ++l)
      if (it * W + l < routes && (peers[l] >> l) == 1) {
        count[key[l]] = occ[l] + 1;
        latest[key[l]] = unit[it * W + l];
      }
  }
  for (unsigned i = 0; i < routes; ++i) {
    const std::uint32_t column = occurrence[i] % 16;
    words[list::unit_word(unit[i], list::first_route_word + column)] = i;
    if (column == 0) {
      words[list::unit_word(unit[i], list::expert_word)] = static_cast<std::uint32_t>(ids[i]);
      words[list::unit_word(unit[i], list::columns_word)] = std::min(16u, count[list::key_of(ids[i])] - occurrence[i]);
    }
  }
  words[0] = units;
  return words;
}

}  // namespace

// ---- gate_up ------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("gate_up model, M = 1, every tile, within the policy", Target, gfx950, sm90a) {
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const auto w = hashed_weights({});
  const auto hidden = oracles::hidden_rows(1, 3);
  const auto ids = oracles::routed_ids(1, 3);
  const auto rep = check_gate_up<C>(1, hidden, ids, w, all_tiles(64));
  INFO(rep.describe());
  CHECK(rep.checked == 9 * 1024);
  CHECK(rep.failures == 0);
  if constexpr (same_v<Target, gfx950>) {
    const auto alt = check_gate_up<C, k_order_16x16x128::contiguous>(1, hidden, ids, w, {0, 17, 63});
    INFO(alt.describe());
    CHECK(alt.failures == 0);
  }
}

TEST_CASE_TEMPLATE("gate_up model, M = 2 and M = 16 (shared expert: 16 columns), within the policy", Target, gfx950, sm90a) {
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const auto w = hashed_weights({5});
  for (int tokens : {2, 16}) {
    const auto hidden = oracles::hidden_rows(tokens, 11 + tokens);
    const auto ids = oracles::routed_ids(tokens, 11 + tokens, 24);  // a small pool: many shared experts
    const auto rep = check_gate_up<C>(tokens, hidden, ids, w, {0, 31, 63});
    INFO("tokens ", tokens, ": ", rep.describe());
    CHECK(rep.checked == tokens * 9 * 48);
    CHECK(rep.failures == 0);
  }
}

TEST_CASE_TEMPLATE("gate_up: the quantization pass's lanes and the B pieces' gather agree", Target, gfx950, sm90a) {
  // Pass: lane l holds K [V l, V l + V) of the wave's range; 128 / V lanes per block, joined by
  // xor 1 .. 128 / V / 2. Gather: word j of a lane's piece v, block b comes from lane
  // (128 b + k + 4 j) / V, word (4 j % V) / 4 (the kernel's compile-time word index): it must hold
  // exactly those 4 K, and the scale source lane b * 128 / V must lie in block b.
  using K = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_decode<Target>>;
  using F = typename K::F;
  constexpr unsigned V = K::pass_values;
  CHECK(K::pass_lanes * V == 128);
  CHECK((1u << K::pass_masks) == K::pass_lanes);
  for (unsigned b = 0; b < K::blocks_per_wave; ++b) CHECK((b * K::pass_lanes * V) / 128 == b);
  for (unsigned l = 0; l < F::wave; ++l)
    for (unsigned n = 0; n < F::tiles; ++n)
      for (unsigned v = 0; v < F::act_pieces; ++v)
        for (unsigned b = 0; b < K::blocks_per_wave; ++b)
          for (unsigned j = 0; j < 4; ++j) {
            const unsigned k = b * 128 + F::act_piece(l, n, v).k + 4 * j;  // first K of the word
            const unsigned src = k / V, word = (4 * j % V) / 4;
            CHECK(src * V + 4 * word == k);
          }
  CHECK(K::lds_bytes <= 48u * 1024);  // static shared memory, no opt-in
  if constexpr (K::weights_in_lds) {
    // the staged rows are unpadded (one copy per tile): a quarter-warp's 16-byte A reads (lanes
    // 8j .. 8j + 7, one piece each) fall on 16-byte bank groups at most two at a time (2-way)
    CHECK(K::weight_row_stride == 2048u);
    for (unsigned v = 0; v < F::weight_pieces; ++v)
      for (unsigned j = 0; j < F::wave / 8; ++j) {
        std::array<int, 8> groups{};
        for (unsigned l = 8 * j; l < 8 * j + 8; ++l) {
          const auto pc = F::weight_piece(l, v);
          ++groups[((pc.index * K::weight_row_stride + pc.k) / 16) % 8];
        }
        for (int g : groups) CHECK(g <= 2);
      }
  }
}

TEST_CASE_TEMPLATE("gate_up model: more than 16 routes of one expert (duplicate ids): a workgroup per 16 of them", Target, gfx950, sm90a) {
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const auto w = hashed_weights({13});
  const int tokens = 5;
  std::vector<std::int32_t> ids(tokens * 9, 42);  // 45 routes of expert 42: workgroups at occurrences 0, 16, 32
  ids[7] = 256;
  ids[20] = 300;  // an invalid id in the middle shifts nothing
  const auto hidden = oracles::hidden_rows(tokens, 13);
  const auto rep = check_gate_up<C>(tokens, hidden, ids, w, {0, 63});
  INFO(rep.describe());
  CHECK(rep.checked == tokens * 9 * 32);
  CHECK(rep.failures == 0);
}

TEST_CASE_TEMPLATE("gate_up model, adversarial inputs", Target, gfx950, sm90a) {
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const int tokens = 3;
  auto ids = oracles::routed_ids(tokens, 21, 16);
  ids[4] = 300;      // invalid id: rows of +0.0
  ids[10] = -1;      // invalid id
  ids[9 + 3] = ids[9 + 2];  // a duplicate expert inside one token
  auto hidden = oracles::hidden_rows(tokens, 21);
  hidden[0 * 2048 + 5] = 0x7FC0;                          // token 0, block 0: NaN
  for (int k = 256; k < 384; ++k) hidden[1 * 2048 + k] = 0;  // token 1, block 2: all zero
  hidden[1 * 2048 + 1000] = bf16_from_f32_reference(1e30f);   // token 1: a huge block (scale ~2e27)
  hidden[1 * 2048 + 1001] = bf16_from_f32_reference(-1e30f);
  hidden[2 * 2048 + 2047] = 0xFF80;                        // token 2: -Inf
  weight_params wp{9};
  wp.zero_scale_expert = ids[9 + 5];  // every block scale of one of token 1's experts is 0
  const auto w = hashed_weights(wp);
  const auto got = gate_up_model<C, k_order_16x16x128::halves>(tokens, hidden, ids, w, {0, 40});
  const auto ref = oracles::gate_up_reference(tokens, hidden.data(), ids.data(), w, [](int n) { return n < 16 || (n >= 640 && n < 656); });
  std::size_t nan_rows = 0, zero_rows = 0;
  for (int r = 0; r < tokens * 9; ++r)
    for (unsigned n : {0u, 15u, 640u, 655u}) {
      const std::size_t i = static_cast<std::size_t>(r) * 1024 + n;
      INFO("route ", r, " row ", n);
      REQUIRE(oracles::within_policy(ref[i], got[i]));
      if (r / 9 == 0 || r / 9 == 2) CHECK((oracles::valid_expert(ids[r]) ? got[i] == 0x7FFF : got[i] == 0));  // poisoned tokens
      nan_rows += std::isnan(ref[i].value);
      zero_rows += got[i] == 0;
    }
  CHECK(nan_rows > 0);
  CHECK(zero_rows > 0);
  // saturated weights (every byte ±448) with large scales stay within the policy
  weight_params sat{10};
  sat.saturate = true;
  sat.scale_lo = 1.0f, sat.scale_hi = 2.0f;
  const auto hs = oracles::hidden_rows(1, 5, 300.0f);
  const auto rep = check_gate_up<C>(1, hs, oracles::routed_ids(1, 5), hashed_weights(sat), {3});
  INFO(rep.describe());
  CHECK(rep.failures == 0);
}

namespace {
/// One-hot W13 rows (row n reads hidden value k = 2n + odd with weight 1.0, scale 1): every output
/// is sx * qx[k], so any difference in qx (one E4M3 step: 2^-4 relative or more) would exceed the
/// BF16 rounding (2^-8). Returns the rows of route `route` that differ from the oracle.
template <class Target> long one_hot_mismatches(const std::vector<std::uint16_t>& hidden, int tokens, unsigned odd) {
  oracles::expert_weight_view w;
  w.w13 = [odd](int, int n, int k) -> std::uint8_t { return static_cast<unsigned>(k) == 2 * static_cast<unsigned>(n) + odd ? 0x38 : 0x00; };
  w.s13 = [](int, int, int) { return 1.0f; };
  w.w2 = [](int, int, int) -> std::uint8_t { return 0; };
  w.s2 = [](int, int, int) { return 0.0f; };
  const auto ids = oracles::routed_ids(tokens, 99);
  using C = contracts::moe_expert_gate_up_decode<Target>;
  const auto got = gate_up_model<C, k_order_16x16x128::halves>(tokens, hidden, ids, w, all_tiles(64));
  long mismatches = 0;
  std::uint8_t q[128];
  for (int t = 0; t < tokens; ++t)
    for (int n = 0; n < 1024; ++n) {
      const int k = 2 * n + static_cast<int>(odd), b = k / 128;
      const float scale = oracles::hidden_quant_block(hidden.data() + t * 2048 + 128 * b, q);
      const std::uint16_t expect = bf16_from_f32_reference(f32_from_e4m3(q[k % 128]) * scale);
      // +0 == -0: an fma chain from +0 never gives -0
      for (int s = 0; s < 9; ++s) mismatches += f32_from_bf16(got[static_cast<std::size_t>(t * 9 + s) * 1024 + n]) != f32_from_bf16(expect);
    }
  return mismatches;
}
}  // namespace

TEST_CASE_TEMPLATE("gate_up model: the fused hidden quantization equals the oracle bit for bit (one-hot probe)", Target, gfx950, sm90a) {
  const auto hidden = oracles::hidden_rows(1, 99, 3.0f);
  CHECK(one_hot_mismatches<Target>(hidden, 1, 0) == 0);
  // every 128-block on E4M3 ties (oracles::tie_hidden_rows), even and odd k
  const auto ties = oracles::tie_hidden_rows(2, 7);
  CHECK(one_hot_mismatches<Target>(ties, 2, 0) == 0);
  CHECK(one_hot_mismatches<Target>(ties, 2, 1) == 0);
}

TEST_CASE("hidden quantization on E4M3 ties: r = 448 / amax is one IEEE division (a reciprocal-then-multiply r differs)") {
  // The bug the Python reference had (torch's `448.0 / amax` is amax.reciprocal() * 448): on these
  // blocks the two r differ by an ulp and every tie value rounds the other way. The oracle, the
  // contract's hidden_block_quant (the kernels' code) and the tie rows must agree that they do.
  const int tokens = 4;
  const auto hidden = oracles::tie_hidden_rows(tokens, 3);
  long contract_mismatches = 0, reciprocal_differs = 0, blocks_that_differ = 0;
  for (int blk = 0; blk < tokens * 16; ++blk) {
    const std::uint16_t* x = hidden.data() + blk * 128;
    std::uint8_t q[128];
    const float scale = oracles::hidden_quant_block(x, q);
    std::uint32_t m = 0;
    for (int k = 0; k < 128; ++k) m = std::max<std::uint32_t>(m, x[k] & 0x7FFFu);
    const auto h = moe::hidden_block_quant::of(m);
    CHECK(h.scale == scale);
    const float amax = f32_from_bf16(static_cast<std::uint16_t>(m));
    const float r_two_roundings = mul_rn(div_rn(1.0f, amax), 448.0f);
    long differ = 0;
    for (int k = 0; k < 128; ++k) {
      const float v = f32_from_bf16(x[k]);
      contract_mismatches += e4m3_from_f32_reference(mul_rn(v, h.reciprocal)) != q[k];
      differ += e4m3_from_f32_reference(mul_rn(v, r_two_roundings)) != q[k];
    }
    reciprocal_differs += differ;
    blocks_that_differ += differ > 0;
  }
  CHECK(contract_mismatches == 0);
  CHECK(blocks_that_differ == tokens * 16);  // the rows are sensitive: every block tells the two apart
  CHECK(reciprocal_differs >= 6 * tokens * 16);
}

// ---- down ---------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("down model, M = 1, every tile, both inputs, within the policy", Target, gfx950, sm90a) {
  const auto w = hashed_weights({7});
  const auto c = make_down_case(1, 4, oracles::routed_ids(1, 4));
  const auto a = check_down<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>>(c, w, all_tiles(128));
  INFO(a.describe());
  CHECK(a.checked == 2048);
  CHECK(a.failures == 0);
  const auto b = check_down<contracts::moe_expert_down<Target, 4, moe_down_input_gate_up>>(c, w, {0, 64, 127});
  INFO(b.describe());
  CHECK(b.failures == 0);
  if constexpr (same_v<Target, gfx950>) {
    const auto alt = check_down<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>, k_order_16x16x128::contiguous>(c, w, {5, 99});
    CHECK(alt.failures == 0);
  }
}

TEST_CASE_TEMPLATE("down model: the fused act_quant prologue gives the bits of the E4M3 input", Target, gfx950, sm90a) {
  const auto w = hashed_weights({8});
  auto c = make_down_case(3, 8, oracles::routed_ids(3, 8, 20));
  c.gate_up_out[5 * 1024 + 7] = 0x7FC0;  // NaN gate: route 5's group 0 poisoned
  oracles::act_quant(c.gate_up_out.data(), 27, 1024, c.act.data(), c.act_scales.data());
  const std::vector<unsigned> tiles{2, 77};
  const auto a = down_model<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>, k_order_16x16x128::halves>(
      c.tokens, c.act, c.act_scales, c.gate_up_out, c.ids, c.route_weights, w, tiles);
  const auto b = down_model<contracts::moe_expert_down<Target, 4, moe_down_input_gate_up>, k_order_16x16x128::halves>(
      c.tokens, c.act, c.act_scales, c.gate_up_out, c.ids, c.route_weights, w, tiles);
  CHECK(a == b);
  CHECK(std::count(a.begin(), a.end(), 0x7FFF) == 32);  // token 0 (route 5) is NaN on both tiles
}

TEST_CASE_TEMPLATE("down model: more than 16 routes of one expert (duplicate ids): a unit per 16 of them, both inputs", Target, gfx950, sm90a) {
  const auto w = hashed_weights({14});
  const int tokens = 4;
  std::vector<std::int32_t> ids(tokens * 9, 42);  // 36 routes of expert 42: units at its occurrences 0, 16, 32
  ids[17] = 256;
  ids[30] = -3;
  const auto c = make_down_case(tokens, 14, ids);
  const auto a = check_down<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>>(c, w, {0, 127});
  INFO(a.describe());
  CHECK(a.checked == tokens * 32);
  CHECK(a.failures == 0);
  const auto b = check_down<contracts::moe_expert_down<Target, 4, moe_down_input_gate_up>>(c, w, {0, 127});
  INFO(b.describe());
  CHECK(b.failures == 0);
}

TEST_CASE_TEMPLATE("down model, M = 16 and adversarial route metadata, within the policy", Target, gfx950, sm90a) {
  const auto w = hashed_weights({12});
  auto ids = oracles::routed_ids(16, 12, 40);
  ids[3] = 257;           // invalid: y = 0
  ids[20] = ids[19];      // duplicate expert inside token 2
  ids[30] = -7;
  auto c = make_down_case(16, 12, ids);
  c.route_weights[4 * 9 + 2] = 0.0f;
  const auto rep = check_down<contracts::moe_expert_down<Target, 16, moe_down_input_e4m3>>(c, w, {0, 50, 127});
  INFO(rep.describe());
  CHECK(rep.checked == 16 * 48);
  CHECK(rep.failures == 0);
}

TEST_CASE_TEMPLATE("down: the schedule (the lister's units less invalid keys, in route order) serves every valid route once, as "
                   "its expert's occurrence 0, 16, .. unit",
                   Target, gfx950, sm90a) {
  using K = kernels::moe_expert_down_kernel<contracts::moe_expert_down_decode<Target>>;
  using schedule = typename K::schedule;
  using list = moe::expert_unit_list;
  std::vector<std::vector<std::int32_t>> cases;
  for (int tokens : {1, 2, 3, 4, 7, 16}) cases.push_back(oracles::routed_ids(tokens, 300 + tokens, tokens == 16 ? 40 : 256));
  {
    auto ids = oracles::routed_ids(16, 12, 40);
    ids[3] = 257, ids[20] = ids[19], ids[30] = -7, ids[31] = 300, ids[143] = -1;
    cases.push_back(ids);
  }
  {
    std::vector<std::int32_t> ids(16 * 9, 42);  // 144 routes of one expert: 9 units of 16
    ids[17] = 256, ids[30] = -3, ids[100] = 7, ids[101] = 7;
    cases.push_back(ids);
  }
  cases.push_back(std::vector<std::int32_t>(9, -1));  // no valid id: no unit
  for (const auto& ids : cases) {
    const unsigned routes = static_cast<unsigned>(ids.size());
    INFO("routes ", routes);
    // The lister's emits (its lane model equals this oracle: "gate_up unit list" tests), recorded
    // as wave 0 records them, then the units of valid keys kept in order as its ballots keep them.
    const auto listed = oracles::unit_list(ids);
    schedule s{};
    for (unsigned j = 0; j < listed.size(); ++j)
      for (unsigned c = 0; c < listed[j].routes.size(); ++c) {
        const unsigned r = listed[j].routes[c];
        K::record_route(s, r, j, c, ids[r], c == 0 ? static_cast<unsigned>(listed[j].routes.size()) : 0u);
      }
    unsigned units = 0;
    for (unsigned j = 0; j < listed.size(); ++j)
      if (s.expert[j] != list::invalid_key) s.unit[units++] = static_cast<std::uint8_t>(j);
    std::vector<unsigned> served(routes, 0);
    unsigned previous_first = 0;
    for (unsigned k = 0; k < units; ++k) {
      const unsigned j = s.unit[k];
      const std::int32_t e = s.expert[j];
      REQUIRE(moe::expert_weights::valid_expert(e));
      REQUIRE(s.columns[j] >= 1);
      REQUIRE(s.columns[j] <= K::chunk_columns);
      const unsigned first = s.column[j][0];
      if (k > 0) CHECK(first > previous_first);  // route order of first routes
      previous_first = first;
      unsigned occurrence = 0;
      for (unsigned r = 0; r < first; ++r) occurrence += ids[r] == e;
      CHECK(occurrence % K::chunk_columns == 0);  // the expert's occurrence 0, 16, ..
      bool earlier;
      const auto cols = columns_of(ids, first, earlier);
      REQUIRE(s.columns[j] == std::min<unsigned>(static_cast<unsigned>(cols.size()), K::chunk_columns));
      for (unsigned c = 0; c < s.columns[j]; ++c) {
        CHECK(s.column[j][c] == cols[c]);
        ++served[s.column[j][c]];
      }
    }
    for (unsigned r = 0; r < routes; ++r) {
      CHECK(s.key[r] == list::key_of(ids[r]));
      CHECK(served[r] == (moe::expert_weights::valid_expert(ids[r]) ? 1u : 0u));
    }
  }
  CHECK(K::waves * K::wave >= 16 * K::tile_rows);
}

TEST_CASE("expert kernels: weight staging per target, and what the runtime reads of it") {
  // sm90a stages weights in LDS (bulk copy): gate_up asks for the largest carve-out and fits 5
  // workgroups of static LDS per SM; down's launches ask for 12 waves x 2 stages x 8 KiB of
  // dynamic LDS, which with its static LDS stays within the 227 KiB a workgroup may have.
  // gfx950 keeps weights in VGPRs: no dynamic LDS, no carve-out request.
  using gu_nv = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_decode<sm90a>>;
  using gu_amd = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_decode<gfx950>>;
  using dn_nv = kernels::moe_expert_down_kernel<contracts::moe_expert_down_decode<sm90a>>;
  using dn_amd = kernels::moe_expert_down_kernel<contracts::moe_expert_down_decode<gfx950>>;
  static_assert(gu_nv::weights_in_lds && dn_nv::weights_in_lds && !gu_amd::weights_in_lds && !dn_amd::weights_in_lds);
  CHECK(prefers_max_lds<gu_nv>());
  CHECK(prefers_max_lds<dn_nv>());
  CHECK_FALSE(prefers_max_lds<gu_amd>());
  CHECK_FALSE(prefers_max_lds<dn_amd>());
  CHECK(5 * (gu_nv::lds_bytes + 1024) <= 228u * 1024);
  CHECK(dynamic_lds_bytes_of<dn_nv>() == 12u * 2 * 8192);
  CHECK(dn_nv::shape(16).dynamic_lds_bytes == dynamic_lds_bytes_of<dn_nv>());
  CHECK(dynamic_lds_bytes_of<dn_amd>() == 0);
  CHECK(dn_amd::shape(16).dynamic_lds_bytes == 0);
  CHECK(dynamic_lds_bytes_of<gu_nv>() == 0);
  CHECK(gu_nv::shape(1).dynamic_lds_bytes == 0);
}

// ---- gate_up's unit list (Schedule unit_list) ------------------------------------------------------

TEST_CASE("gate_up unit list oracle: a hand-checked call") {
  // routes: 0:5 1:7 2:5 3:300 4:5 5:-1 ; keys 5, 7, invalid
  const auto u = oracles::unit_list({5, 7, 5, 300, 5, -1});
  REQUIRE(u.size() == 3);
  CHECK(u[0] == oracles::expert_unit{5, {0, 2, 4}});
  CHECK(u[1] == oracles::expert_unit{7, {1}});
  CHECK(u[2] == oracles::expert_unit{300, {3, 5}});
  // 40 routes of one expert: units at occurrences 0, 16, 32
  const auto many = oracles::unit_list(std::vector<std::int32_t>(40, 9));
  REQUIRE(many.size() == 3);
  CHECK(many[1].routes.front() == 16);
  CHECK(many[2].routes.size() == 8);
}

TEST_CASE_TEMPLATE("gate_up unit list: the units kernel's lane model equals the oracle (wave64 and warp32)", Wave, std::integral_constant<unsigned, 64>,
                   std::integral_constant<unsigned, 32>) {
  constexpr unsigned W = Wave::value;
  std::vector<std::vector<std::int32_t>> calls;
  for (int tokens : {1, 2, 3, 7, 8, 15, 16})
    for (int pool : {256, 64, 12, 8}) calls.push_back(oracles::routed_ids(tokens, 500 + tokens * 7 + pool, pool));
  calls.push_back(std::vector<std::int32_t>(144, 42));  // 9 units of one expert, spread over rows
  std::vector<std::int32_t> mixed(144);
  oracles::xorshift r{99};
  for (auto& v : mixed) v = static_cast<std::int32_t>(r.next() % 5) - 1 + (r.next() % 3 == 0 ? 256 : 0);  // -1, 0..3, 255..259
  calls.push_back(mixed);
  std::vector<std::int32_t> ramps(144);
  for (std::size_t i = 0; i < ramps.size(); ++i) ramps[i] = static_cast<std::int32_t>(i % 17 == 0 ? 300 + i : i / 20);  // runs crossing rows
  calls.push_back(ramps);
  for (const auto& ids : calls) {
    const auto words = unit_list_model<W>(ids);
    const auto want = oracles::unit_list(ids);
    CHECK(words[0] == want.size());
    CHECK(oracles::read_unit_list(words, ids.size()) == want);
  }
}

TEST_CASE("resident gate_up: the first item it stages before the list is the list's item") {
  // Workgroup (x, y), y < 8, serves item (unit y, tile x) first, and its wave 1 stages expert
  // ids[y]'s rows before wave 0 has listed the units when routes 0 .. y hold distinct valid ids.
  // That relies on unit y being route y's expert then (units are numbered in the route order of
  // their first routes); and for a router's output (8 distinct experts per token) it always holds.
  using K = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_units_decode<sm90a>>;
  auto early = [](const std::vector<std::int32_t>& ids, unsigned y) {  // the kernel's test, written plainly
    for (unsigned i = 0; i <= y; ++i) {
      if (!oracles::valid_expert(ids[i])) return false;
      for (unsigned j = 0; j < i; ++j)
        if (ids[j] == ids[i]) return false;
    }
    return true;
  };
  std::vector<std::vector<std::int32_t>> calls;
  for (int tokens : {1, 2, 10, 16})
    for (int pool : {256, 12}) calls.push_back(oracles::routed_ids(tokens, 900 + tokens + pool, pool));
  unsigned router_like = static_cast<unsigned>(calls.size());
  calls.push_back(std::vector<std::int32_t>(144, 42));  // one expert: only y = 0 stages early
  std::vector<std::int32_t> adversarial = oracles::routed_ids(16, 77);
  adversarial[3] = 300, adversarial[6] = adversarial[1];  // an invalid id and a duplicate among routes 0 .. 7
  calls.push_back(adversarial);
  unsigned staged = 0;
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const auto& ids = calls[c];
    const auto units = oracles::unit_list(ids);
    for (unsigned y = 0; y < K::unit_rows; ++y) {
      if (c < router_like) CHECK(early(ids, y));
      if (!early(ids, y)) continue;
      ++staged;
      REQUIRE(units.size() > y);
      CHECK(units[y].expert == ids[y]);
      CHECK(units[y].routes.front() == y);
    }
  }
  CHECK(staged == router_like * K::unit_rows + 1 + 3);  // one expert: y = 0; adversarial: y = 0, 1, 2
}

TEST_CASE("resident gate_up (sm90a): row 0 serves the shared tiles it staged before the wait; items stay a permutation") {
  // Row y = 0 stages tile x of expert 256 before the wait; its first item is (s, x), s the shared
  // expert's first unit, by trading places with unit 0 when s >= 8 (rows 1 .. 7 keep theirs).
  using K = kernels::moe_expert_gate_up_kernel<contracts::moe_expert_gate_up_units_decode<sm90a>>;
  static_assert(K::early_shared);
  std::vector<std::vector<std::int32_t>> calls;
  for (int tokens : {1, 2, 10, 16})
    for (int pool : {256, 12}) calls.push_back(oracles::routed_ids(tokens, 910 + tokens + pool, pool));
  const std::size_t router_like = calls.size();
  auto no_shared = oracles::routed_ids(12, 5);
  for (int t = 0; t < 12; ++t) no_shared[static_cast<std::size_t>(t) * 9 + 8] = t;  // no route of expert 256
  calls.push_back(no_shared);
  auto early = oracles::routed_ids(12, 6);
  early[3] = 256;  // expert 256 first at route 3: its unit is 3 < 8
  calls.push_back(early);
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const auto units = oracles::unit_list(calls[c]);
    std::uint32_t s = K::no_unit;
    for (std::size_t j = 0; j < units.size() && s == K::no_unit; ++j)
      if (units[j].expert == 256) s = static_cast<std::uint32_t>(j);
    INFO("call ", c);
    if (c < router_like) {
      CHECK(s == 8);  // token 0's 8 distinct routed experts, then the shared slot
      CHECK(K::shared_first(s));
    } else {
      CHECK_FALSE(K::shared_first(s));  // row 0 lets its copy land and stages unit 0 itself
    }
    std::vector<int> seen(units.size(), 0);
    for (std::uint32_t j = 0; j < units.size(); ++j) ++seen[K::item_unit(j, s)];
    CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(units.size()));
    if (K::shared_first(s)) CHECK(units[K::item_unit(0, s)].expert == 256);
    for (std::uint32_t y = 1; y < K::unit_rows; ++y) CHECK(K::item_unit(y, s) == y);
  }
}

TEST_CASE("gate_up unit_list and resident contracts: families, kernels, and a workspace the call must bind") {
  using L = contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::unit_list>;
  using R = contracts::moe_expert_gate_up_units_decode<sm90a>;
  using S = contracts::moe_expert_gate_up_decode<sm90a>;
  static_assert(R::resident && !R::unit_list && contracts::moe_expert_gate_up_units_decode<gfx950>::unit_list);
  CHECK(std::string(L::family) == "moe_experts_gate_up_units");
  CHECK(std::string(R::family) == "moe_experts_gate_up");  // one kernel, as the route scan
  CHECK(std::string(S::family) == "moe_experts_gate_up");
  CHECK(instance_name<R>() == "moe-experts-gate-up-sm90a-16-2");
  static_assert(L::workspace_bytes == 4 * (32 + 32 * 144) && R::workspace_bytes == 4 * 32 && S::workspace_bytes == 0);
  static_assert(std::is_same_v<kernels::kernels_of<L>::type,
                               type_list<kernels::moe_expert_units_kernel<L>, kernels::moe_expert_gate_up_kernel<L>>>);
  static_assert(std::is_same_v<kernels::kernels_of<R>::type, type_list<kernels::moe_expert_gate_up_kernel<R>>>);
  const auto* p = reinterpret_cast<const void*>(std::uintptr_t{0x10000});
  const device_ref gpu{2, 0};
  auto compact = [&](dtype type, std::initializer_list<i64> extents) {
    tensor_arg t;
    t.data = p;
    t.type = type;
    t.device = gpu;
    t.rank = static_cast<i32>(extents.size());
    int d = 0;
    for (const i64 e : extents) t.shape[d++] = e;
    for (i64 stride = 1; d-- > 0; stride *= t.shape[d]) t.strides[d] = stride;
    return t;
  };
  moe_gate_up_signature s{target_id::sm90a, gpu, compact(dtype::bf16, {16, 2048}), compact(dtype::i32, {16, 9}),
                          compact(dtype::e4m3, {257, 1024, 2048}), compact(dtype::f32, {257, 8, 16}), compact(dtype::bf16, {144, 1024})};
  CHECK(S::admits(s).admitted());
  CHECK(std::string(L::admits(s).field) == "workspace");  // no workspace bound
  CHECK(std::string(R::admits(s).field) == "workspace");
  s.workspace = p;
  s.workspace_bytes = R::workspace_bytes - 4;
  CHECK(std::string(L::admits(s).field) == "workspace_bytes");
  CHECK(std::string(R::admits(s).field) == "workspace_bytes");
  s.workspace_bytes = R::workspace_bytes;
  CHECK(R::admits(s).admitted());
  CHECK(std::string(L::admits(s).field) == "workspace_bytes");
  s.workspace_bytes = L::workspace_bytes;
  CHECK(L::admits(s).admitted());
}
