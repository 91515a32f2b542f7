// The gdn kernels' decompositions on the host: the recurrent core's lane map and reduction tree
// (every admitted wave size x value block), the conv's history vectors in both layouts and the
// precompute's head map, composed with modelled cross-lane shuffles, equal the oracles bit for bit.
#include <doctest/doctest.h>

#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "netra/contracts/gdn/decode.hpp"
#include "netra/kernels/gdn/conv.hpp"
#include "netra/kernels/gdn/precompute.hpp"
#include "netra/kernels/gdn/recurrent.hpp"
#include "oracles/gdn.hpp"

using namespace netra;
namespace ref = netra::oracles::gdn_ref;

namespace {
std::uint32_t bits(float x) { return bit_cast<std::uint32_t>(x); }

/// Adversarial state / input values: signed zeros, subnormals, large magnitudes, BF16 midpoints.
float adversarial(std::mt19937& g, int kind) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  switch (kind % 8) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return bit_cast<float>(static_cast<std::uint32_t>(1u + (g() & 0xFFFFu)));  // subnormal
    case 3: return u(g) * 3.0e4f;
    case 4: return bit_cast<float>((bit_cast<std::uint32_t>(u(g)) & 0xFFFF0000u) | 0x8000u);  // BF16 midpoint
    default: return u(g);
  }
}

/// One wave of the recurrent core modelled lane by lane (kernel lane maps, shuffles as
/// partner reads), for n tokens of v head hv; returns the state block's columns and outputs.
/// Lane slot (lane, c) is the lane's column c (C columns per lane); shuffles act per c.
template <class C> void model_wave(u32 x, u32 w, std::vector<float>& S, const ref::token_inputs& in, std::size_t T, std::size_t hv,
                                        std::size_t n, std::vector<std::uint16_t>& out) {
  using core = kernels::gdn_recurrent_core<C>;
  constexpr u32 W = C::wave_size, G = core::groups_per_lane, R = core::rows, CL = core::cpl;
  std::vector<float> regs(W * CL * G * R);
  auto reg = [&](u32 lane, u32 c, u32 m, u32 i) -> float& { return regs[((lane * CL + c) * G + m) * R + i]; };
  for (u32 lane = 0; lane < W; ++lane)
    for (u32 c = 0; c < CL; ++c)
      for (u32 m = 0; m < G; ++m)
        for (u32 i = 0; i < R; ++i) reg(lane, c, m, i) = S[core::column(x, w, lane, c) * ref::K + core::row_group(lane, m) * R + i];
  auto chain = [&](u32 lane, u32 c, u32 m, const float* y) {
    float p = mul_rn(reg(lane, c, m, 0), y[core::row_group(lane, m) * R]);
    for (u32 i = 1; i < R; ++i) p = fma_rn(reg(lane, c, m, i), y[core::row_group(lane, m) * R + i], p);
    return p;
  };
  auto tree = [&](std::vector<float> partial /* [W][C][G] */) {
    std::vector<float> d(W * CL);
    for (u32 l = 0; l < W * CL; ++l) {
      if (G == 4) d[l] = add_rn(add_rn(partial[l * 4], partial[l * 4 + 1]), add_rn(partial[l * 4 + 2], partial[l * 4 + 3]));
      else if (G == 2) d[l] = add_rn(partial[l * 2], partial[l * 2 + 1]);
      else d[l] = partial[l];
    }
    const u32 steps = G == 4 ? 0u : G == 2 ? 1u : 2u;  // shuffles at xor N, then xor 2 N (N column lanes)
    for (u32 step = 0; step < steps; ++step) {
      const u32 mask = core::column_lanes << step;
      std::vector<float> next(W * CL);
      for (u32 lane = 0; lane < W; ++lane)
        for (u32 c = 0; c < CL; ++c) next[lane * CL + c] = add_rn(d[lane * CL + c], d[(lane ^ mask) * CL + c]);
      d = next;
    }
    return d;
  };
  const std::size_t head = hv / 2;
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t row = t;  // request 0
    const float a = in.decay[row * ref::HV + hv], beta = in.beta[row * ref::HV + hv];
    const float* k = in.k + (row * ref::H + head) * ref::K;
    const float* q = in.q + (row * ref::H + head) * ref::K;
    std::vector<float> partial(W * CL * G);
    for (u32 lane = 0; lane < W; ++lane)
      for (u32 c = 0; c < CL; ++c)
        for (u32 m = 0; m < G; ++m) {
          for (u32 i = 0; i < R; ++i) reg(lane, c, m, i) = mul_rn(a, reg(lane, c, m, i));
          partial[(lane * CL + c) * G + m] = chain(lane, c, m, k);
        }
    const std::vector<float> dots = tree(partial);
    for (u32 lane = 0; lane < W; ++lane)
      for (u32 c = 0; c < CL; ++c) {
        const float v = ref::bf(in.v[row * in.v_stride + gdn::v_offset + hv * ref::V + core::column(x, w, lane, c)]);
        const float u = mul_rn(beta, sub_rn(v, dots[lane * CL + c]));
        for (u32 m = 0; m < G; ++m)
          for (u32 i = 0; i < R; ++i) reg(lane, c, m, i) = fma_rn(k[core::row_group(lane, m) * R + i], u, reg(lane, c, m, i));
      }
    for (u32 lane = 0; lane < W; ++lane)
      for (u32 c = 0; c < CL; ++c)
        for (u32 m = 0; m < G; ++m) partial[(lane * CL + c) * G + m] = chain(lane, c, m, q);
    const std::vector<float> o = tree(partial);
    for (u32 lane = 0; lane < core::column_lanes; ++lane)
      for (u32 c = 0; c < CL; ++c) out[(row * ref::HV + hv) * ref::V + core::column(x, w, lane, c)] = ref::to_bf(o[lane * CL + c]);
  }
  for (u32 lane = 0; lane < W; ++lane)
    for (u32 c = 0; c < CL; ++c)
      for (u32 m = 0; m < G; ++m)
        for (u32 i = 0; i < R; ++i) S[core::column(x, w, lane, c) * ref::K + core::row_group(lane, m) * R + i] = reg(lane, c, m, i);
  (void)T;
}

struct head_case {
  std::size_t T = 6;
  std::vector<float> q, k, decay, beta, S0;
  std::vector<std::uint16_t> v;
  explicit head_case(unsigned seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    q.resize(T * ref::H * ref::K);
    k.resize(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) {
      q[i] = u(g) * 0.09f;
      k[i] = (i / ref::K) % 5 == 3 ? 0.0f : u(g) * 0.09f;  // some all-zero heads (the eps path)
    }
    v.assign(T * ref::D, 0);
    for (auto& x : v) x = ref::to_bf(adversarial(g, static_cast<int>(g() % 8)) * 0.5f);
    decay.resize(T * ref::HV);
    beta.resize(T * ref::HV);
    for (std::size_t i = 0; i < decay.size(); ++i) {
      const int kind = static_cast<int>(i % 5);
      decay[i] = kind == 0 ? 0.0f : kind == 1 ? 1.0f : std::uniform_real_distribution<float>(0.5f, 1.0f)(g);  // g -> -inf, g = 0
      beta[i] = kind == 2 ? 0.0f : kind == 3 ? 1.0f : std::uniform_real_distribution<float>(0.0f, 1.0f)(g);
    }
    S0.resize(ref::V * ref::K);
    for (std::size_t i = 0; i < S0.size(); ++i) S0[i] = adversarial(g, static_cast<int>(i % 11));
  }
  ref::token_inputs inputs() const { return {q.data(), k.data(), v.data(), ref::D, decay.data(), beta.data()}; }
};

template <class C> void check_core_model(unsigned seed, std::size_t hv) {
  const head_case hc(seed);
  std::vector<float> expect = hc.S0, got = hc.S0;
  std::vector<std::uint16_t> out_expect(hc.T * ref::HV * ref::V, 0), out_got(out_expect.size(), 0);
  ref::run_head(expect.data(), hc.inputs(), 0, hc.T, hv, hc.T, out_expect.data());
  using core = kernels::gdn_recurrent_core<C>;
  for (u32 x = 0; x < core::shape(1).grid[0]; ++x)
    for (u32 w = 0; w < core::waves; ++w) model_wave<C>(x, w, got, hc.inputs(), hc.T, hv, hc.T, out_got);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) bad += bits(got[i]) != bits(expect[i]);
  for (std::size_t i = 0; i < out_got.size(); ++i) bad += out_got[i] != out_expect[i];
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE_TEMPLATE("the recurrent core's lane map and tree equal the oracle's dot order (wave64 and warp32, every value block and columns per lane)", C,
                   contracts::gdn_k0<gfx950, 0, 16>, contracts::gdn_k0<gfx950, 0, 32>, contracts::gdn_k0<gfx950, 0, 64>,
                   contracts::gdn_k0<gfx950, 0, 16, 1, 4>, contracts::gdn_k0<sm90a, 0, 8>, contracts::gdn_k0<sm90a, 0, 16>,
                   contracts::gdn_k0<sm90a, 0, 32, 1>, contracts::gdn_k0<sm90a, 0, 8, 1, 4>, contracts::gdn_k0<sm90a, 0, 16, 1, 8, 2>,
                   contracts::gdn_k0<sm90a, 0, 16, 1, 4, 2>, contracts::gdn_k0<sm90a, 0, 32, 1, 4, 4>, contracts::gdn_k0<sm90a, 0, 32, 0, 1, 2>) {
  using core = kernels::gdn_recurrent_core<C>;
  // Every (column, row) of a head is owned by exactly one (workgroup, lane, group, register).
  std::set<std::pair<u32, u32>> owned;
  for (u32 x = 0; x < core::shape(1).grid[0]; ++x)
    for (u32 w = 0; w < core::waves; ++w)
      for (u32 lane = 0; lane < C::wave_size; ++lane)
        for (u32 m = 0; m < core::groups_per_lane; ++m)
          for (u32 c = 0; c < core::cpl; ++c)
            for (u32 i = 0; i < core::rows; ++i) owned.insert({core::column(x, w, lane, c), core::row_group(lane, m) * core::rows + i});
  CHECK(owned.size() == ref::V * ref::K);
  CHECK(core::shape(64).grid[0] * core::columns == ref::V);
  check_core_model<C>(7, 5);
  check_core_model<C>(11, 30);
}

TEST_CASE("the oracle's step is the written order: a zero state and beta 1 give u = v, S = k u") {
  head_case hc(3);
  std::vector<float> S(ref::V * ref::K, 0.0f);
  std::vector<float> k(ref::K), q(ref::K, 0.0f);
  for (std::size_t i = 0; i < ref::K; ++i) k[i] = static_cast<float>(i % 7) * 0.125f;
  std::vector<std::uint16_t> v(ref::V), out(ref::V);
  for (std::size_t j = 0; j < ref::V; ++j) v[j] = ref::to_bf(static_cast<float>(j) * 0.5f);
  ref::step(S.data(), 0.5f, 1.0f, k.data(), q.data(), v.data(), out.data());
  for (std::size_t j = 0; j < ref::V; ++j) {
    CHECK(out[j] == 0);  // q = 0: o = +0
    for (std::size_t i = 0; i < ref::K; ++i) REQUIRE(S[j * ref::K + i] == k[i] * (static_cast<float>(j) * 0.5f));
  }
}

TEST_CASE_TEMPLATE("the conv history vectors cover each slot image once, in the oracle's indexing (both layouts, 8 or 4 channels a thread)", K,
                   contracts::gdn_conv<sm90a, 64, 12, gdn::conv_layout::channel_major, gdn::conv_writes::windows>,
                   contracts::gdn_conv<sm90a, 64, 12, gdn::conv_layout::tap_major, gdn::conv_writes::windows>,
                   contracts::gdn_conv<sm90a, 64, 12, gdn::conv_layout::channel_major, gdn::conv_writes::windows, 2, 256, 3, 4, 4>,
                   contracts::gdn_conv<sm90a, 64, 12, gdn::conv_layout::tap_major, gdn::conv_writes::windows, 2, 256, 3, 4, 4>) {
  using kernel = kernels::gdn_conv_update<K>;
  namespace m = kernels::gdn_conv_map;
  constexpr u32 L = K::layout, C = K::channels_per_thread;
  std::vector<int> hits(ref::conv_slot, 0), channels(ref::D, 0);
  for (u32 w = 0; w < kernel::shape(1).grid[0]; ++w)
    for (u32 t = 0; t < kernel::workgroup_size; ++t) {
      const u32 c0 = kernel::first_channel(w, t);
      for (u32 c = 0; c < C; ++c) {
        ++channels[c0 + c];
        for (u32 j = 0; j < 3; ++j) {
          const u64 at = m::vector_offset(L, c0, m::vector_of(L, c, j, C), C) + m::element_of(L, c, j, C);
          REQUIRE(at == ref::conv_index(L, c0 + c, j));
          ++hits[at];
        }
      }
      for (u32 v = 0; v < m::vectors; ++v) CHECK(m::vector_offset(L, c0, v, C) % C == 0);  // vectors aligned to their 2 C bytes
    }
  for (int h : hits) REQUIRE(h == 1);
  for (int n : channels) REQUIRE(n == 1);  // every channel has one owner
}

TEST_CASE("the precompute's head map covers the 32 head slots and the 32 v heads once") {
  using kernel = kernels::gdn_precompute_kernel<contracts::gdn_precompute<gfx950, 64, 12>>;
  std::set<u32> slots;
  for (u32 x = 0; x < kernel::shape(1).grid[0]; ++x)
    for (u32 g = 0; g < kernel::groups_per_workgroup; ++g) slots.insert(kernel::head_slot(x, g));
  CHECK(slots.size() == 32);
  CHECK(*slots.rbegin() == 31);
}

TEST_CASE_TEMPLATE("the state block through LDS: each lane's runs are the block's vectors once, at distinct units, 8 bank groups per row group (conflict-free 16-byte reads)", C,
                   contracts::gdn_replay<sm90a, 0, 16, 3, 8, 2, 264>, contracts::gdn_replay<sm90a, 1, 16, 3, 8, 2>, contracts::gdn_replay<sm90a, 0, 16, 3, 2, 2>,
                   contracts::gdn_replay<sm90a, 1, 16, 3, 2, 2>, contracts::gdn_k0<sm90a, 0, 16, 3, 4, 2>,
                   contracts::gdn_m16<sm90a, 0, 8, 3, 4, 1, 1>, contracts::gdn_m16<sm90a, 1, 8, 3, 4, 1, 1>, contracts::gdn_decode_core<sm90a, 0>,
                   contracts::gdn_decode_core<sm90a, 1>) {
  using core = kernels::gdn_recurrent_core<C>;
  using block = typename core::state_block;
  static_assert(C::state_through_lds && block::bytes * core::waves == C::state_lds_bytes);
  static_assert(core::shape(1).dynamic_lds_bytes == (C::state_copy_async ? C::state_lds_bytes : 0));
  CHECK(C::lds_bytes + 1024 <= C::budget().max_lds_bytes);
  // fetch: lane + k wave is the block's vector p (global offset 16 p); its unit at(p) is distinct and inside the wave's units.
  std::vector<int> unit_of_vector(block::units, 0);
  for (u32 p = 0; p < block::vectors; ++p) {
    REQUIRE(block::at(p) < block::units);
    ++unit_of_vector[block::at(p)];
  }
  for (int n : unit_of_vector) REQUIRE(n <= 1);
  // take / put: lane's column c, row group m, vector v is the block's vector (column) cv + (group) rv + v — every vector once.
  std::vector<int> taken(block::vectors, 0);
  for (u32 c = 0; c < core::cpl; ++c)
    for (u32 m = 0; m < core::groups_per_lane; ++m)
      for (u32 v = 0; v < block::run_vectors; ++v) {
        std::vector<int> lanes_per_bank_group(8, 0);
        for (u32 lane = 0; lane < C::wave_size; ++lane) {
          const u32 column = (lane % core::column_lanes) * core::cpl + c, p = column * block::column_vectors + core::row_group(lane, m) * block::run_vectors + v;
          ++taken[p];
          ++lanes_per_bank_group[block::at(p) % 8];  // 8 units of 16 bytes a bank row
        }
        for (int n : lanes_per_bank_group) CHECK(n == static_cast<int>(C::wave_size / 8));  // the minimum: wave x 16 B / 128 B wavefronts
      }
  for (int n : taken) REQUIRE(n == 1);
}

TEST_CASE("the raw-input staging (Inputs raw): its k / q channels are the precompute's head slots, its gates the precompute oracle's bits") {
  using Raw = contracts::gdn_m16<sm90a, gdn::state_storage::bf16, 8, gdn::token_staging::block_and_state, 4, 1, 1, gdn::core_inputs::raw>;
  using block = kernels::gdn_recurrent_core<Raw>::inputs;
  using pre = kernels::gdn_precompute_kernel<contracts::gdn_precompute<sm90a, 1, 16>>;
  for (u32 head = 0; head < gdn::heads_qk; ++head) {
    CHECK(block::raw_channel(1, head) == pre::head_slot(head / 8, head % 8) * gdn::key_dim);  // q head: slot head
    CHECK(block::raw_channel(0, head) == pre::head_slot((16 + head) / 8, head % 8) * gdn::key_dim);  // k head: slot 16 + head
  }
  // gates_of against ref::precompute_row's decay and beta on adversarial a, b and parameters.
  const std::uint16_t specials[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x0001, 0x8001, 0x007F, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80,
                                    0x4120, 0xC120, 0x42A0, 0xC2A0, 0x42B2, 0xC2B2, 0x4300, 0xC300, 0x3C00, 0xBC00, 0x4000, 0xC000};
  const float params[] = {0.0f, -0.0f, -1.0f, 1.0f, 4.5f, -20.0f, 88.0f, -88.0f, 1e-30f, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  std::vector<std::uint16_t> y(ref::D, 0), a(ref::HV), b(ref::HV);
  std::vector<float> al(ref::HV), dt(ref::HV), q(ref::H * ref::K), k(ref::H * ref::K), decay(ref::HV), beta(ref::HV);
  std::mt19937 rng(27);
  std::size_t checked = 0, mismatched = 0;
  for (int round = 0; round < 400; ++round) {
    for (std::size_t hv = 0; hv < ref::HV; ++hv) {
      const std::size_t n = std::size(specials);
      a[hv] = round < 40 ? specials[(round * ref::HV + hv) % n] : static_cast<std::uint16_t>(rng());
      b[hv] = round < 40 ? specials[(round * 7 + hv) % n] : static_cast<std::uint16_t>(rng());
      al[hv] = params[(round + hv) % std::size(params)];
      dt[hv] = round % 3 == 0 ? params[(round * 5 + hv) % std::size(params)] : ref::bf(static_cast<std::uint16_t>(rng() & 0xBFFF));
    }
    ref::precompute_row(y.data(), a.data(), b.data(), al.data(), dt.data(), q.data(), k.data(), decay.data(), beta.data());
    for (std::size_t hv = 0; hv < ref::HV; ++hv) {
      const auto g = kernels::gdn_precompute_math::gates_of(a[hv], b[hv], al[hv], dt[hv]);
      mismatched += bit_cast<u32>(g.decay) != bit_cast<u32>(decay[hv]) || bit_cast<u32>(g.beta) != bit_cast<u32>(beta[hv]);
      ++checked;
    }
  }
  CHECK(checked == 400 * ref::HV);
  CHECK(mismatched == 0);
}
