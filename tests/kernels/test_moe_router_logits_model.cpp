// The router's logits kernel on the host, decomposed as the kernel decomposes it (the route
// kernel, the selection network and the shared gate: test_moe_router_route_model.cpp):
//  - the BF16 fragment traits agree with the independent instruction models (and a wrong map
//    fails);
//  - the matrix tactic's lane maps (the fragment piece maps at matrix_a_k / matrix_b_k) composed
//    with the instruction models give the FP64 dot products of the right (token, expert) for both
//    targets: every K of the split used once, A and B paired on the same K;
//  - the exact tactic's slices, 32-lane reduce-scatter (logits kernel) and the route kernel's
//    in-order sum of the 8 K-group partials equal the oracle's documented order bitwise.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "models/instruction.hpp"
#include "netra/dsl/matrix_fragment_bf16.hpp"
#include "netra/kernels/moe/router.hpp"
#include "netra/kernels/moe/shared_gate.hpp"
#include "oracles/moe_routing.hpp"
#include "oracles/moe_routing_inputs.hpp"

using namespace netra;

namespace {

std::uint32_t pack2(std::uint16_t lo, std::uint16_t hi) { return lo | (static_cast<std::uint32_t>(hi) << 16); }

/// A BF16 value that is a small integer (exact sums in any order).
std::uint16_t small_bf16(oracles::rng& r) { return oracles::bf16_of(static_cast<float>(static_cast<int>(r.below(17)) - 8)); }

// ---- fragment traits vs instruction models ------------------------------------------------------

template <class Shape, class Fill> bool traits_match_model(Fill perturb_row) {
  oracles::rng r(7);
  std::vector<std::vector<std::uint16_t>> A(Shape::m, std::vector<std::uint16_t>(Shape::k)), B(Shape::k, std::vector<std::uint16_t>(Shape::n));
  for (auto& row : A)
    for (auto& v : row) v = small_bf16(r);
  for (auto& row : B)
    for (auto& v : row) v = small_bf16(r);
  bool ok = true;
  if constexpr (Shape::wave_size == 32) {
    models::warp_a_bf16 a{};
    models::warp_b_bf16 b{};
    for (u32 lane = 0; lane < 32; ++lane) {
      for (u32 i = 0; i < Shape::a_values; i += 2) {
        const auto e0 = Shape::a_element(lane, i), e1 = Shape::a_element(lane, i + 1);
        a[lane][i / 2] = pack2(A[perturb_row(e0.row)][e0.col], A[perturb_row(e1.row)][e1.col]);
      }
      for (u32 i = 0; i < Shape::b_values; i += 2) {
        const auto e0 = Shape::b_element(lane, i), e1 = Shape::b_element(lane, i + 1);
        b[lane][i / 2] = pack2(B[e0.row][e0.col], B[e1.row][e1.col]);
      }
    }
    const auto d = models::mma_m16n8k16_bf16(a, b, {});
    for (u32 lane = 0; lane < 32; ++lane)
      for (u32 i = 0; i < Shape::d_items; ++i) {
        const auto e = Shape::d_element(lane, i);
        double want = 0;
        for (u32 k = 0; k < Shape::k; ++k) want += f32_from_bf16(A[e.row][k]) * static_cast<double>(f32_from_bf16(B[k][e.col]));
        ok &= d[lane][i] == want;
      }
  } else {
    models::wave_ab_bf16 a{}, b{};
    for (u32 lane = 0; lane < 64; ++lane) {
      for (u32 i = 0; i < Shape::a_values; i += 2) {
        const auto e0 = Shape::a_element(lane, i), e1 = Shape::a_element(lane, i + 1);
        a[lane][i / 2] = pack2(A[perturb_row(e0.row)][e0.col], A[perturb_row(e1.row)][e1.col]);
        const auto f0 = Shape::b_element(lane, i), f1 = Shape::b_element(lane, i + 1);
        b[lane][i / 2] = pack2(B[f0.row][f0.col], B[f1.row][f1.col]);
      }
    }
    const auto d = models::mfma_f32_16x16x32_bf16(a, b, {});
    for (u32 lane = 0; lane < 64; ++lane)
      for (u32 i = 0; i < Shape::d_items; ++i) {
        const auto e = Shape::d_element(lane, i);
        double want = 0;
        for (u32 k = 0; k < Shape::k; ++k) want += f32_from_bf16(A[e.row][k]) * static_cast<double>(f32_from_bf16(B[k][e.col]));
        ok &= d[lane][i] == want;
      }
  }
  return ok;
}

}  // namespace

TEST_CASE("BF16 fragment traits agree with the instruction models; a wrong map fails") {
  auto same = [](u32 r) { return r; };
  auto swapped = [](u32 r) { return r ^ 1u; };
  CHECK(traits_match_model<mma_m16n8k16_bf16>(same));
  CHECK(traits_match_model<mfma_f32_16x16x32_bf16>(same));
  CHECK_FALSE(traits_match_model<mma_m16n8k16_bf16>(swapped));
  CHECK_FALSE(traits_match_model<mfma_f32_16x16x32_bf16>(swapped));
}

// ---- matrix tactic: lane maps composed with the models ----------------------------------------

namespace {
struct router_problem {
  int tokens;
  std::vector<std::uint16_t> hidden, weight;  // [tokens, 2048], [256, 2048]
  explicit router_problem(int m, std::uint64_t seed) : tokens(m), hidden(static_cast<std::size_t>(m) * 2048), weight(256 * 2048) {
    oracles::rng r(seed);
    for (auto& v : hidden) v = oracles::bf16_of(static_cast<float>(r.normal()));
    for (auto& v : weight) v = oracles::bf16_of(static_cast<float>(0.05 * r.normal()));
  }
  const std::uint16_t* h(int t) const { return hidden.data() + static_cast<std::size_t>(std::min(t, tokens - 1)) * 2048; }
  const std::uint16_t* w(int e) const { return weight.data() + static_cast<std::size_t>(e) * 2048; }
};

std::array<std::uint32_t, 4> load16(const std::uint16_t* p) {
  return {pack2(p[0], p[1]), pack2(p[2], p[3]), pack2(p[4], p[5]), pack2(p[6], p[7])};
}

/// The matrix tactic's 16 x 64 partial tile of workgroup (tile, expert_tile, split), modelled: per
/// wave and instruction tile, the lanes' A / B pieces loaded at the kernel's rows and K
/// (matrix_a / matrix_b piece maps, matrix_a_k / matrix_b_k), the words of each instruction taken
/// from them (word_of), through the target's instruction model (tests/models/instruction.hpp).
template <class Contract> std::vector<double> matrix_tile_model(const router_problem& pr, u32 tile, u32 et, u32 split) {
  using K = kernels::moe_router_logits_kernel<Contract>;
  using S = typename K::matrix_shape;
  using A = typename K::matrix_a;
  using B = typename K::matrix_b;
  using M = models::instruction_model<S>;
  std::vector<double> out(16 * 64, 0.0);
  for (u32 wave = 0; wave < K::waves; ++wave)
    for (u32 n = 0; n < 64 / S::n; ++n) {
      typename M::d_type acc{};
      for (u32 step = 0; step < K::matrix_steps; ++step) {
        typename M::a_type a{};
        typename M::b_type b{};
        for (u32 lane = 0; lane < S::wave_size; ++lane) {
          for (u32 w = 0; w < S::a_words; ++w) {
            const auto o = A::word_of(step, w);
            a[lane][w] = load16(pr.h(static_cast<int>(tile * 16 + A::piece_of(lane, o.piece).index)) + K::matrix_a_k(split, wave, lane, o.piece))[o.word];
          }
          for (u32 w = 0; w < S::b_words; ++w) {
            const auto o = B::word_of(step, w);
            b[lane][w] = load16(pr.w(static_cast<int>(et * 64 + S::n * n + B::piece_of(lane, o.piece).index)) + K::matrix_b_k(split, wave, lane, o.piece))[o.word];
          }
        }
        acc = M::run(a, b, acc);
      }
      for (u32 lane = 0; lane < S::wave_size; ++lane)
        for (u32 i = 0; i < S::d_items; ++i) {
          const auto e = S::d_element(lane, i);
          out[e.row * 64 + S::n * n + e.col] += acc[lane][i];
        }
    }
  return out;
}

template <class Contract> void check_matrix_maps() {
  const router_problem pr(40, 11);
  long checked = 0, wrong = 0;
  for (u32 tile : {0u, 2u})
    for (u32 et : {0u, 3u})
      for (u32 split = 0; split < Contract::k_splits; ++split) {
        const auto got = matrix_tile_model<Contract>(pr, tile, et, split);
        for (u32 row = 0; row < 16; ++row)
          for (u32 col = 0; col < 64; ++col) {
            const int t = std::min(static_cast<int>(tile * 16 + row), pr.tokens - 1);
            double want = 0, mag = 0;
            for (u32 k = split * Contract::k_chunk; k < (split + 1) * Contract::k_chunk; ++k) {
              const double p = static_cast<double>(f32_from_bf16(pr.h(t)[k])) * f32_from_bf16(pr.w(static_cast<int>(et * 64 + col))[k]);
              want += p;
              mag += std::fabs(p);
            }
            ++checked;
            wrong += std::fabs(got[row * 64 + col] - want) > 1e-12 * (mag + 1e-30);
          }
      }
  CHECK(checked == 2 * 2 * Contract::k_splits * 16 * 64);
  CHECK(wrong == 0);
}
}  // namespace

TEST_CASE("matrix tactic lane maps give the FP64 dot products of the right (token, expert)") {
  check_matrix_maps<contracts::moe_router_matrix<sm90a>>();
  check_matrix_maps<contracts::moe_router_matrix<gfx950>>();
  check_matrix_maps<contracts::moe_router_matrix<gfx1151>>();  // WMMA: both lane halves load every piece
  check_matrix_maps<contracts::moe_router_matrix<gfx942>>();   // v_mfma_f32_16x16x16_bf16: half gfx950's K per instruction
}

TEST_CASE("matrix tactic LDS tiles: sm90a pair stores and vector reads hit each bank at most as often as their bytes require") {
  using C = contracts::moe_router_matrix<sm90a>;
  using S = mma_m16n8k16_bf16;
  CHECK(fragment::d_pairs_adjacent<S>());
  CHECK(!fragment::d_pairs_adjacent<mfma_f32_16x16x32_bf16>());  // gfx950 stores items one by one
  constexpr u32 stride = C::matrix_tile_stride;
  // an 8-byte store of 32 lanes moves 256 bytes: at best two wavefronts, each bank used twice
  // (the kernel asserts the same with fragment::store_d_wavefronts; here counted independently)
  for (u32 n = 0; n < 8; ++n)
    for (u32 h = 0; h < 2; ++h) {
      int uses[32] = {};
      for (u32 lane = 0; lane < 32; ++lane) {
        const auto d = S::d_element(lane, 2 * h);
        const u32 word = d.row * stride + 8 * n + d.col;
        ++uses[word % 32];
        ++uses[(word + 1) % 32];
      }
      CHECK(*std::max_element(std::begin(uses), std::end(uses)) == 2);
    }
  // a 16-byte read of 32 lanes (row thread / 16, col 4 (thread % 16)) moves 512 bytes: four wavefronts
  for (u32 warp = 0; warp < 8; ++warp) {
    int uses[32] = {};
    for (u32 lane = 0; lane < 32; ++lane) {
      const u32 thread = 32 * warp + lane, word = (thread / 16) * stride + 4 * (thread % 16);
      for (u32 j = 0; j < 4; ++j) ++uses[(word + j) % 32];
    }
    CHECK(*std::max_element(std::begin(uses), std::end(uses)) == 4);
  }
}

// ---- exact tactic: the documented order --------------------------------------------------------

namespace {
/// The exact tactic's K group sums G_g of expert tile et, K group g, for the P tokens of a pass
/// starting at token `first`: per-lane slices, the 32-lane reduce-scatter by the kernel's rule
/// (while a lane holds several values it keeps the half lane bit D picks, then adds its
/// partner's one value); lane l's result belongs to (token exact_token_of<P>(l), expert
/// exact_expert_of<P>(l)) of the pass.
template <class Contract, u32 P> std::array<float, 32> exact_pass_model(const router_problem& pr, u32 et, u32 g, u32 first) {
  using K = kernels::moe_router_logits_kernel<Contract>;
  constexpr u32 N = 8 * P;
  std::array<std::array<float, N>, 32> v{};  // [lane][value]
  for (u32 lane = 0; lane < 32; ++lane) {
    const u32 k0 = K::exact_first_k(g, lane);
    for (u32 t = 0; t < P; ++t)
      for (u32 e = 0; e < 8; ++e) {
        const int token = static_cast<int>(first + t);
        float acc = 0.0f;
        for (u32 k = k0; k < k0 + 8; ++k)
          acc = fma_rn(token < pr.tokens ? f32_from_bf16(pr.h(token)[k]) : 0.0f, f32_from_bf16(pr.w(static_cast<int>(et * 8 + e))[k]), acc);
        v[lane][K::exact_value(t, e)] = acc;
      }
  }
  u32 held = N;
  for (u32 d = 16; d >= 1; d >>= 1) {
    auto next = v;
    for (u32 lane = 0; lane < 32; ++lane) {
      if (held > 1) {
        const bool upper = (lane & d) != 0, partner_upper = !upper;
        for (u32 j = 0; j < held / 2; ++j) {
          const float keep = upper ? v[lane][j + held / 2] : v[lane][j];
          const float send_of_partner = partner_upper ? v[lane ^ d][j] : v[lane ^ d][j + held / 2];
          next[lane][j] = add_rn(keep, send_of_partner);
        }
      } else {
        next[lane][0] = add_rn(v[lane][0], v[lane ^ d][0]);
      }
    }
    v = next;
    if (held > 1) held /= 2;
  }
  std::array<float, 32> out{};
  for (u32 lane = 0; lane < 32; ++lane) out[lane] = v[lane][0];
  return out;
}
}  // namespace

namespace {
/// G[g][token][expert] as exact_sums stores it with P tokens per pass, for a few expert tiles and
/// every token of `pr`, then the logits as the route kernel adds them (K groups in order), against
/// the oracle bit for bit. Returns the logits checked.
template <u32 P> long check_exact_passes(const router_problem& pr) {
  using C = contracts::moe_router_exact<sm90a>;
  using K = kernels::moe_router_logits_kernel<C>;
  const u32 tiles[] = {0u, 1u, 17u, 31u};
  const auto m = static_cast<u32>(pr.tokens);
  std::vector<float> G(8 * m * 256, 0.0f);
  std::vector<int> stored(8 * m * 256, 0);
  for (u32 et : tiles)
    for (u32 g = 0; g < C::k_splits; ++g)
      for (u32 t0 = 0; t0 < m; t0 += C::token_tile)
        for (u32 c = 0; c < C::token_tile / P; ++c) {
          if (t0 + c * P >= m) break;
          const auto got = exact_pass_model<C, P>(pr, et, g, t0 + c * P);
          for (u32 lane = 0; lane < 32; ++lane) {
            const u32 token = t0 + c * P + K::template exact_token_of<P>(lane);
            if (!K::template exact_stores<P>(lane) || token >= m) continue;
            const std::size_t j = (g * m + token) * 256 + et * 8 + K::template exact_expert_of<P>(lane);
            G[j] = got[lane];
            ++stored[j];
          }
        }
  long checked = 0, mismatches = 0;
  for (u32 t = 0; t < m; ++t)
    for (u32 et : tiles)
      for (u32 e = 0; e < 8; ++e) {
        const int expert = static_cast<int>(et * 8 + e);
        float l = 0.0f;
        for (u32 g = 0; g < C::k_splits; ++g) {  // the route kernel: splits (K groups) in order
          const std::size_t j = (g * m + t) * 256 + static_cast<std::size_t>(expert);
          CHECK(stored[j] == 1);
          l = g == 0 ? G[j] : add_rn(l, G[j]);
        }
        ++checked;
        mismatches += oracles::bits_of(oracles::router_exact_logit(pr.h(static_cast<int>(t)), pr.w(expert))) != oracles::bits_of(l);
      }
  CHECK(mismatches == 0);
  return checked;
}
}  // namespace

TEST_CASE("exact tactic: slices, reduce-scatter (4-token and 1-token passes) and the route kernel's group order are the oracle's, bitwise") {
  router_problem pr(19, 5);
  // adversarial values in a few tokens: huge and tiny magnitudes, exact cancellations
  oracles::rng r(3);
  for (int k = 0; k < 2048; ++k) {
    pr.hidden[1 * 2048 + k] = oracles::bf16_of(static_cast<float>(std::ldexp(1.0 + r.uniform(), static_cast<int>(r.below(120)) - 60)));
    pr.hidden[2 * 2048 + k] = oracles::bf16_of(k % 2 ? 1e20f : -1e20f);
    pr.hidden[3 * 2048 + k] = oracles::bf16_of(static_cast<float>(std::ldexp(1.0, -120)) * (k % 3 ? 1.0f : -1.0f));
  }
  using K = kernels::moe_router_logits_kernel<contracts::moe_router_exact<sm90a>>;
  const launch_shape s = K::shape(19);
  CHECK(s.grid[0] == 128);
  CHECK(s.grid[1] == 3);
  CHECK(check_exact_passes<4>(pr) == 19 * 4 * 8);  // the logits kernel's passes
  CHECK(check_exact_passes<1>(pr) == 19 * 4 * 8);  // the cluster kernel's
  // the 1-token pass's lane map: lanes 4e .. 4e + 3 hold expert e, lane 4e stores it
  for (u32 lane = 0; lane < 32; ++lane) {
    CHECK(K::exact_expert_of<1>(lane) == lane / 4);
    CHECK(K::exact_token_of<1>(lane) == 0);
    CHECK(K::exact_stores<1>(lane) == (lane % 4 == 0));
    CHECK(K::exact_expert_of<4>(lane) == lane % 8);
    CHECK(K::exact_token_of<4>(lane) == lane / 8);
  }
}

