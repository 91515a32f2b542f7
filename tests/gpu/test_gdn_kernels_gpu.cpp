// gdn kernels on the GPU (sm90a cubins built by CMake), each bitwise against its oracle: the conv
// update in both layouts with and without windows, the precompute, the K0 verify core (FP32 and
// BF16 state, value blocks 8 and 16, per-token and staged inputs: no state written), the M16 core
// (state committed, BF16 rounding midpoints); padded rows and refused calls write nothing.
#include <doctest/doctest.h>

#include "gpu/test_gdn_common.hpp"

using namespace netra;
using namespace netra::testing::gdn;
using netra::testing::gpu_array;

namespace {
/// Expects `call` to be refused (netra::error, status invalid_argument) naming `field`.
template <class F> void refused(F&& call, const char* field) {
  try {
    call();
    FAIL("the call was not refused: ", field);
  } catch (const error& e) {
    CHECK(e.code() == status::invalid_argument);
    CHECK_MESSAGE(std::string(e.what()).find(field) != std::string::npos, e.what());
  }
}

constexpr std::size_t D = ref::D, HV = ref::HV, H = ref::H, K = ref::K, V = ref::V;

template <class C> void conv_case(std::size_t B, std::size_t x_stride, unsigned seed) {
  constexpr std::size_t T = C::tokens;
  constexpr bool windows = C::writes == gdn::conv_writes::windows;
  const std::size_t slots = B + 3, rows = B * T;
  auto x = bf16_values(rows * x_stride, seed, 2.0f, true);
  const auto weight = bf16_values(D * 4, seed + 1, 0.7f, false);
  const auto pool = bf16_values(slots * ref::conv_slot, seed + 2, 1.5f, true);
  std::vector<std::int32_t> slot(B);
  for (std::size_t b = 0; b < B; ++b) slot[b] = static_cast<std::int32_t>((b * 5 + 1) % (slots - 1));
  if (B >= 3) slot[1] = static_cast<std::int32_t>(slots - 1), slot[2] = -7;  // padded rows: the sentinel and an invalid index
  gpu_array<std::uint16_t> dx(x.size()), dw(weight.size()), dy(rows * D), dpool(pool.size()), dwin(rows * ref::conv_slot);
  gpu_array<std::int32_t> dslot(B);
  dx.upload(x), dw.upload(weight), dpool.upload(pool), dslot.upload(slot);
  dy.fill_bytes(0xAB), dwin.fill_bytes(0xCD);
  const auto s = gdn_conv_call(device(), tensor(dx, dtype::bf16, {i64(rows), i64(D)}, {i64(x_stride), 1}), tensor(dw, dtype::bf16, {i64(D), 4}),
                               tensor(dy, dtype::bf16, {i64(rows), i64(D)}), tensor(dslot, dtype::i32, {i64(B)}),
                               C::channel_major ? tensor(dpool, dtype::bf16, {i64(slots), i64(D), 3}) : tensor(dpool, dtype::bf16, {i64(slots), 3, i64(D)}),
                               windows ? (C::channel_major ? tensor(dwin, dtype::bf16, {i64(B), i64(T), i64(D), 3}) : tensor(dwin, dtype::bf16, {i64(B), i64(T), 3, i64(D)}))
                                       : tensor_arg{});
  gdn_conv(handle_of<C>(), nullptr, s);
  std::vector<std::uint16_t> y(rows * D), win(rows * ref::conv_slot, 0xCDCD), expect_pool = pool;
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t at = ref::resolve_slot(slot[b], static_cast<std::int64_t>(slots));
    std::vector<std::uint16_t> final_image(ref::conv_slot);
    ref::conv_request(x.data(), x_stride, weight.data(), pool.data() + at * ref::conv_slot, C::layout, b, T, y.data(), windows ? win.data() : nullptr,
                      final_image.data());
    if (!windows && ref::real_slot(slot[b], static_cast<std::int64_t>(slots)))
      std::copy(final_image.begin(), final_image.end(), expect_pool.begin() + static_cast<std::ptrdiff_t>(at * ref::conv_slot));
  }
  INFO(instance_name<C>(), " B ", B, " x stride ", x_stride);
  CHECK(mismatches(dy.download(), y, y.size()) == 0);
  CHECK(mismatches(dpool.download(), expect_pool, pool.size()) == 0);  // windows: the pool is untouched
  CHECK(mismatches(dwin.download(), win, win.size()) == 0);          // final_state: the windows stay poisoned
}

/// Token inputs from the host precompute of random conv outputs (so q, k are normalised as the
/// core sees them), with decay / beta forced to 0 and 1 at some (token, head) and a zero k head.
struct core_inputs {
  std::size_t rows;
  std::vector<std::uint16_t> y;
  std::vector<float> q, k, decay, beta;
  core_inputs(std::size_t rows_, unsigned seed) : rows(rows_), y(bf16_values(rows_ * D, seed, 1.0f, false)), q(rows_ * H * K), k(q.size()),
                                                 decay(rows_ * HV), beta(rows_ * HV) {
    const auto a = bf16_values(rows * HV, seed + 1, 3.0f, false), b = bf16_values(rows * HV, seed + 2, 3.0f, false);
    std::vector<float> a_log(HV), dt_bias(HV);
    for (std::size_t h = 0; h < HV; ++h) a_log[h] = -1.5f + 0.1f * static_cast<float>(h), dt_bias[h] = 0.05f * static_cast<float>(h) - 0.8f;
    for (std::size_t r = 0; r < rows; ++r) {
      if (r % 7 == 3) std::fill_n(y.begin() + static_cast<std::ptrdiff_t>(r * D + gdn::k_offset + 5 * K), K, 0);  // zero k head 5
      ref::precompute_row(y.data() + r * D, a.data() + r * HV, b.data() + r * HV, a_log.data(), dt_bias.data(), q.data() + r * H * K,
                          k.data() + r * H * K, decay.data() + r * HV, beta.data() + r * HV);
      decay[r * HV + r % HV] = 0.0f, decay[r * HV + (r + 1) % HV] = 1.0f;  // g -> -inf, g = 0
      beta[r * HV + (r + 2) % HV] = 0.0f, beta[r * HV + (r + 3) % HV] = 1.0f;
    }
  }
  ref::token_inputs view() const { return {q.data(), k.data(), y.data(), D, decay.data(), beta.data()}; }
};

struct core_buffers {
  gpu_array<float> q, k, decay, beta;
  gpu_array<std::uint16_t> y;
  explicit core_buffers(const core_inputs& in) : q(in.q.size()), k(in.k.size()), decay(in.decay.size()), beta(in.beta.size()), y(in.y.size()) {
    q.upload(in.q), k.upload(in.k), decay.upload(in.decay), beta.upload(in.beta), y.upload(in.y);
  }
};

template <class Elem> std::vector<Elem> random_state(std::size_t slots, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  std::vector<Elem> s(slots * ref::state_slot);
  for (auto& e : s) {
    const float f = u(g);
    if constexpr (sizeof(Elem) == 4) e = f;
    else e = ref::to_bf(f);
  }
  return s;
}

/// The recurrent core on a batch (Commit none or final) against the oracle for `checked` requests
/// (every head), the pool compared in full.
template <class C> void core_case(std::size_t B, std::vector<std::size_t> checked, unsigned seed) {
  constexpr std::size_t T = C::tokens;
  using elem = conditional_t<C::state_storage == gdn::state_storage::fp32, float, std::uint16_t>;
  constexpr dtype sd = C::state_storage == gdn::state_storage::fp32 ? dtype::f32 : dtype::bf16;
  const std::size_t rows = B * T, slots = B + 2;
  const core_inputs in(rows, seed);
  const core_buffers buf(in);
  const auto pool = random_state<elem>(slots, seed + 9);
  std::vector<std::int32_t> slot(B);
  for (std::size_t b = 0; b < B; ++b) slot[b] = static_cast<std::int32_t>(slots - 2 - b);  // distinct real slots
  if (B >= 3) slot[2] = 1 << 30;  // padded row: reads the sentinel, writes no state
  gpu_array<elem> dpool(pool.size());
  gpu_array<std::int32_t> dslot(B);
  gpu_array<std::uint16_t> dout(rows * HV * V);
  dpool.upload(pool), dslot.upload(slot), dout.fill_bytes(0xAB);
  const auto s = gdn_recurrent_call(device(), tensor(buf.q, dtype::f32, {i64(rows), i64(H), i64(K)}), tensor(buf.k, dtype::f32, {i64(rows), i64(H), i64(K)}),
                                    tensor(buf.y, dtype::bf16, {i64(rows), i64(D)}), tensor(buf.decay, dtype::f32, {i64(rows), i64(HV)}),
                                    tensor(buf.beta, dtype::f32, {i64(rows), i64(HV)}), tensor(dpool, sd, {i64(slots), i64(HV), i64(V), i64(K)}),
                                    tensor(dslot, dtype::i32, {i64(B)}), tensor(dout, dtype::bf16, {i64(rows), i64(HV), i64(V)}), {}, {}, {});
  gdn_recurrent(handle_of<C>(), nullptr, s);
  const auto out = dout.download();
  const auto got_pool = dpool.download();
  std::vector<elem> expect_pool = pool;
  std::vector<std::size_t> bad(checked.size() * HV, 0);
  std::vector<std::uint16_t> expect_out(rows * HV * V, 0);
  parallel_for(checked.size() * HV, [&](std::size_t i) {
    const std::size_t b = checked[i / HV], hv = i % HV;
    const std::size_t at = ref::resolve_slot(slot[b], static_cast<std::int64_t>(slots));
    std::vector<float> S = ref::widen(pool.data() + (at * HV + hv) * V * K, C::state_storage, V * K);
    ref::run_head(S.data(), in.view(), b, T, hv, T, expect_out.data());
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < V; ++j) bad[i] += out[((b * T + t) * HV + hv) * V + j] != expect_out[((b * T + t) * HV + hv) * V + j];
    if (C::commit == gdn::state_commit::final && ref::real_slot(slot[b], static_cast<std::int64_t>(slots)))
      ref::narrow(S, C::state_storage, expect_pool.data() + (at * HV + hv) * V * K);
  });
  std::size_t total = 0;
  for (auto v : bad) total += v;
  INFO(instance_name<C>(), " B ", B);
  CHECK(total == 0);
  if (C::commit == gdn::state_commit::final) {
    for (std::size_t b = 0; b < B; ++b) CHECK(std::find(checked.begin(), checked.end(), b) != checked.end());  // every request's heads checked
  }
  CHECK(mismatches(got_pool, expect_pool, pool.size()) == 0);  // K0: the pool is only read
}
}  // namespace

TEST_CASE_TEMPLATE("conv update equals the oracle (layouts, windows / final state, padded rows, strided x, every catalogued mapping)", C,
                   contracts::gdn_conv<sm90a, 64, 12, 0, 1>, contracts::gdn_conv<sm90a, 64, 12, 1, 1>, contracts::gdn_conv<sm90a, 64, 12, 0, 0>,
                   contracts::gdn_conv<sm90a, 64, 12, 1, 0>, contracts::gdn_conv<sm90a, 1, 16, 0, 0>, contracts::gdn_conv<sm90a, 64, 12, 0, 1, 1, 256, 2>,
                   contracts::gdn_conv<sm90a, 64, 12, 0, 0, 2, 256, 3, 3>, contracts::gdn_conv<sm90a, 64, 12, 0, 1, 2, 256, 3, 3>,
                   contracts::gdn_conv<sm90a, 64, 12, 0, 1, 2, 256, 3, 4, 4, 1, 1>, contracts::gdn_conv<sm90a, 64, 12, 0, 0, 2, 256, 3, 4, 4, 1, 0>,
                   contracts::gdn_conv<sm90a, 64, 12, 0, 1, 2, 256, 2, 4, 4, 1, 0>, contracts::gdn_conv<sm90a, 64, 12, 0, 0, 2, 256, 2, 4, 4, 1, 0>,
                   contracts::gdn_conv<sm90a, 64, 12, 0, 1, 2, 256, 6, 4, 4, 1, 0>, contracts::gdn_conv<sm90a, 64, 12, 0, 0, 2, 256, 6, 4, 4, 1, 0>,
                   contracts::gdn_conv<sm90a, 64, 12, 1, 1, 2, 256, 3, 4, 4, 1, 0>, contracts::gdn_conv<sm90a, 64, 12, 0, 1, 2, 256, 3, 4, 4, 1, 1, 1>,
                   contracts::gdn_conv<sm90a, 64, 12, 0, 0, 2, 256, 3, 4, 4, 1, 0, 1>, contracts::gdn_conv<sm90a, 64, 12, 1, 1, 2, 256, 3, 4, 4, 1, 0, 1>,
                   contracts::gdn_conv<sm90a, 64, 12, 0, 1, 2, 256, 6, 4, 4, 1, 1, 1>, contracts::gdn_conv<sm90a, 64, 12, 0, 0, 2, 256, 6, 4, 4, 1, 0, 1>,
                   contracts::gdn_conv<sm90a, 64, 12, 0, 1, 2, 256, 2, 4, 4, 1, 1, 1>, contracts::gdn_conv<sm90a, 64, 12, 0, 0, 2, 256, 2, 4, 4, 1, 0, 1>) {
  conv_case<C>(1, D, 11);
  if (C::max_batch > 1) {
    conv_case<C>(7, D + 64, 12);
    conv_case<C>(64, D, 13);
  }
}

TEST_CASE_TEMPLATE("precompute equals the oracle (zero, subnormal and huge heads; extreme gates; a, b compact or column views at a row stride)", C,
                   contracts::gdn_precompute<sm90a, 128, 12>, contracts::gdn_precompute<sm90a, 1, 16>) {
  constexpr std::size_t S = 67, a_col = 35;  // strided: b at columns 0..31 and a at 35..66 of one [rows, 67] buffer (odd stride and offset)
  for (const bool strided : {false, true})
  for (const std::size_t B : {std::size_t{1}, std::size_t{C::max_batch}}) {
    const std::size_t rows = B * C::tokens;
    auto y = bf16_values(rows * D, 21, 1.0f, false);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t head = r % 32;
      auto* h = y.data() + r * D + head * K;
      if (r % 3 == 0) std::fill_n(h, K, 0);                                                 // zero head: the eps path
      if (r % 3 == 1) for (std::size_t i = 0; i < K; ++i) h[i] = static_cast<std::uint16_t>(1 + i);  // subnormals
      if (r % 5 == 2) for (std::size_t i = 0; i < K; ++i) h[i] = ref::to_bf(i % 2 ? 3e38f : -1e30f);  // sum of squares overflows
    }
    auto a = bf16_values(rows * HV, 22, 30.0f, true), b = bf16_values(rows * HV, 23, 30.0f, true);
    std::vector<float> a_log(HV), dt_bias(HV);
    for (std::size_t h = 0; h < HV; ++h) a_log[h] = h == 0 ? 100.0f : h == 1 ? -100.0f : -2.0f + 0.15f * static_cast<float>(h), dt_bias[h] = 0.1f * static_cast<float>(h) - 1.0f;
    std::vector<std::uint16_t> gates(rows * S, 0x7FC0);  // the columns between are NaN: read only if the stride were ignored
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t h = 0; h < HV; ++h) gates[r * S + h] = b[r * HV + h], gates[r * S + a_col + h] = a[r * HV + h];
    gpu_array<std::uint16_t> dy(y.size()), da(a.size()), db(b.size()), dg(gates.size());
    gpu_array<float> dal(HV), ddt(HV), dq(rows * H * K), dk(rows * H * K), ddecay(rows * HV), dbeta(rows * HV);
    dy.upload(y), da.upload(a), db.upload(b), dg.upload(gates), dal.upload(a_log), ddt.upload(dt_bias);
    for (auto* o : {&dq, &dk, &ddecay, &dbeta}) o->fill_bytes(0xAB);
    const tensor_arg ta = strided ? tensor(dg, dtype::bf16, {i64(rows), i64(HV)}, {i64(S), 1}, a_col) : tensor(da, dtype::bf16, {i64(rows), i64(HV)});
    const tensor_arg tb = strided ? tensor(dg, dtype::bf16, {i64(rows), i64(HV)}, {i64(S), 1}) : tensor(db, dtype::bf16, {i64(rows), i64(HV)});
    gdn_precompute(handle_of<C>(), nullptr,
                   gdn_precompute_call(device(), tensor(dy, dtype::bf16, {i64(rows), i64(D)}), ta, tb, tensor(dal, dtype::f32, {i64(HV)}), tensor(ddt, dtype::f32, {i64(HV)}),
                                       tensor(dq, dtype::f32, {i64(rows), i64(H), i64(K)}), tensor(dk, dtype::f32, {i64(rows), i64(H), i64(K)}),
                                       tensor(ddecay, dtype::f32, {i64(rows), i64(HV)}), tensor(dbeta, dtype::f32, {i64(rows), i64(HV)})));
    std::vector<float> q(rows * H * K), k(q.size()), decay(rows * HV), beta(rows * HV);
    for (std::size_t r = 0; r < rows; ++r)
      ref::precompute_row(y.data() + r * D, a.data() + r * HV, b.data() + r * HV, a_log.data(), dt_bias.data(), q.data() + r * H * K, k.data() + r * H * K,
                          decay.data() + r * HV, beta.data() + r * HV);
    INFO(instance_name<C>(), " rows ", rows, strided ? " a, b strided" : " a, b compact");
    CHECK(mismatches(dq.download(), q, q.size()) == 0);
    CHECK(mismatches(dk.download(), k, k.size()) == 0);
    CHECK(mismatches(ddecay.download(), decay, decay.size()) == 0);
    CHECK(mismatches(dbeta.download(), beta, beta.size()) == 0);
  }
}

TEST_CASE_TEMPLATE("K0 verify core equals the oracle and writes no state (FP32 / BF16 state, every catalogued mapping)", C, contracts::gdn_k0<sm90a, 0>,
                   contracts::gdn_k0<sm90a, 1>, contracts::gdn_k0<sm90a, 0, 16>, contracts::gdn_k0<sm90a, 1, 16>, contracts::gdn_k0<sm90a, 0, 8, 1, 4>,
                   contracts::gdn_k0<sm90a, 1, 8, 1, 4>, contracts::gdn_k0<sm90a, 0, 16, 1, 8, 2>, contracts::gdn_k0<sm90a, 1, 16, 1, 8, 2>,
                   contracts::gdn_k0<sm90a, 0, 16, 1, 4, 2>, contracts::gdn_k0<sm90a, 1, 16, 1, 4, 2>, contracts::gdn_k0<sm90a, 0, 16, 3, 8, 2>,
                   contracts::gdn_k0<sm90a, 1, 16, 3, 8, 2>, contracts::gdn_k0<sm90a, 0, 16, 3, 4, 2>, contracts::gdn_k0<sm90a, 1, 16, 3, 4, 2>) {
  core_case<C>(1, {0}, 31);
  core_case<C>(5, {0, 2, 4}, 32);
  core_case<C>(64, {0, 2, 33, 63}, 33);
}

TEST_CASE_TEMPLATE("M16 core equals the oracle, outputs and committed state", C, contracts::gdn_m16<sm90a, 0>, contracts::gdn_m16<sm90a, 1>,
                   contracts::gdn_m16<sm90a, 0, 8, 1, 4>, contracts::gdn_m16<sm90a, 0, 16, 1, 2, 2>,
                   contracts::gdn_m16<sm90a, 1, 16, 1, 2, 2>, contracts::gdn_m16<sm90a, 0, 8, 1, 4, 1, 1>,
                   contracts::gdn_m16<sm90a, 1, 8, 1, 4, 1, 1>, contracts::gdn_m16<sm90a, 0, 8, 3, 4, 1, 1>, contracts::gdn_m16<sm90a, 1, 8, 3, 4, 1, 1>) {
  core_case<C>(1, {0}, 41);
}

TEST_CASE("M16 with BF16 storage rounds state midpoints to even at the storage boundary") {
  using C = contracts::gdn_m16<sm90a, gdn::state_storage::bf16>;
  constexpr std::size_t T = 16, slots = 3;
  core_inputs in(T, 51);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t h = 0; h < HV; ++h) in.decay[t * HV + h] = t == 0 ? 0.5f : 1.0f, in.beta[t * HV + h] = 0.0f;
  const core_buffers buf(in);
  std::vector<std::uint16_t> pool(slots * ref::state_slot);
  for (std::size_t e = 0; e < pool.size(); ++e) pool[e] = static_cast<std::uint16_t>((e % 2 ? 0x8000 : 0) | (1 + 2 * (e % 60)));  // odd subnormals
  gpu_array<std::uint16_t> dpool(pool.size()), dout(T * HV * V);
  gpu_array<std::int32_t> dslot(1);
  dpool.upload(pool), dslot.upload(std::vector<std::int32_t>{1});
  gdn_recurrent(handle_of<C>(), nullptr,
                gdn_recurrent_call(device(), tensor(buf.q, dtype::f32, {i64(T), i64(H), i64(K)}), tensor(buf.k, dtype::f32, {i64(T), i64(H), i64(K)}),
                                   tensor(buf.y, dtype::bf16, {i64(T), i64(D)}), tensor(buf.decay, dtype::f32, {i64(T), i64(HV)}),
                                   tensor(buf.beta, dtype::f32, {i64(T), i64(HV)}), tensor(dpool, dtype::bf16, {i64(slots), i64(HV), i64(V), i64(K)}),
                                   tensor(dslot, dtype::i32, {1}), tensor(dout, dtype::bf16, {i64(T), i64(HV), i64(V)}), {}, {}, {}));
  const auto got = dpool.download();
  std::size_t bad = 0, ties = 0;
  for (std::size_t e = 0; e < ref::state_slot; ++e) {
    const std::uint16_t old = pool[ref::state_slot + e];
    const float half = ref::bf(old) * 0.5f;  // exact in FP32: a BF16 midpoint when the mantissa is odd
    ties += (bit_cast<std::uint32_t>(half) & 0xFFFFu) == 0x8000u;
    bad += got[ref::state_slot + e] != ref::to_bf(half);
  }
  CHECK(ties > ref::state_slot / 2);
  CHECK(bad == 0);
  CHECK(mismatches(got, pool, ref::state_slot) == 0);  // slot 0 untouched
}

TEST_CASE("refused calls name the field and write nothing (wrong dtype, small outputs, a pool without a sentinel)") {
  using K0 = contracts::gdn_k0<sm90a, gdn::state_storage::fp32>;
  using Conv = contracts::gdn_conv<sm90a, 64, 12, gdn::conv_layout::channel_major, gdn::conv_writes::windows>;
  constexpr std::size_t B = 2, T = 12, rows = B * T;
  gpu_array<float> q(rows * H * K), gate(rows * HV), pool(3 * ref::state_slot);
  gpu_array<std::uint16_t> y(rows * D), out(rows * HV * V), conv_pool(3 * ref::conv_slot), win(rows * ref::conv_slot), w(D * 4);
  gpu_array<std::int32_t> slot(B);
  slot.upload({0, 1});
  for (auto* b : {&out, &conv_pool, &win, &y}) b->fill_bytes(0xAB);
  pool.fill_bytes(0xAB);
  auto k0 = [&](tensor_arg state, tensor_arg o) {
    gdn_recurrent(handle_of<K0>(), nullptr,
                  gdn_recurrent_call(device(), tensor(q, dtype::f32, {i64(rows), i64(H), i64(K)}), tensor(q, dtype::f32, {i64(rows), i64(H), i64(K)}),
                                     tensor(y, dtype::bf16, {i64(rows), i64(D)}), tensor(gate, dtype::f32, {i64(rows), i64(HV)}),
                                     tensor(gate, dtype::f32, {i64(rows), i64(HV)}), state, tensor(slot, dtype::i32, {i64(B)}), o, {}, {}, {}));
  };
  const tensor_arg good_out = tensor(out, dtype::bf16, {i64(rows), i64(HV), i64(V)});
  refused([&] { k0(tensor(pool, dtype::bf16, {3, i64(HV), i64(V), i64(K)}), good_out); }, "'state'");          // BF16 pool for an FP32 contract
  refused([&] { k0(tensor(pool, dtype::f32, {1, i64(HV), i64(V), i64(K)}), good_out); }, "'state slots'");     // no sentinel slot
  refused([&] { k0(tensor(pool, dtype::f32, {3, i64(HV), i64(V), i64(K)}), tensor(out, dtype::bf16, {i64(rows - 1), i64(HV), i64(V)})); }, "'out'");
  refused([&] { k0(tensor(pool, dtype::f32, {3, i64(HV), i64(V), i64(K)}), tensor(out, dtype::f32, {i64(rows), i64(HV), i64(V)})); }, "'out'");
  refused([&] { k0(tensor(pool, dtype::f32, {3, i64(HV), i64(V), i64(K)}, {}, 1), good_out); }, "'state'");  // misaligned
  auto conv = [&](tensor_arg windows) {
    gdn_conv(handle_of<Conv>(), nullptr,
             gdn_conv_call(device(), tensor(y, dtype::bf16, {i64(rows), i64(D)}), tensor(w, dtype::bf16, {i64(D), 4}), tensor(y, dtype::bf16, {i64(rows), i64(D)}),
                           tensor(slot, dtype::i32, {i64(B)}), tensor(conv_pool, dtype::bf16, {3, i64(D), 3}), windows));
  };
  refused([&] { conv(tensor(win, dtype::bf16, {i64(B), i64(T - 1), i64(D), 3})); }, "'windows'");  // windows for fewer tokens
  refused([&] { conv(tensor(win, dtype::bf16, {i64(B), i64(T), 3, i64(D)})); }, "'windows'");      // the other layout
  refused([&] { conv(tensor_arg{}); }, "'windows'");
  std::vector<std::uint16_t> poison16(rows * HV * V, 0xABAB);
  CHECK(mismatches(out.download(), poison16, poison16.size()) == 0);
  CHECK(mismatches(conv_pool.download(), std::vector<std::uint16_t>(3 * ref::conv_slot, 0xABAB), 3 * ref::conv_slot) == 0);
  CHECK(mismatches(win.download(), std::vector<std::uint16_t>(rows * ref::conv_slot, 0xABAB), rows * ref::conv_slot) == 0);
  CHECK(mismatches(y.download(), std::vector<std::uint16_t>(rows * D, 0xABAB), rows * D) == 0);
  const auto p = pool.download();
  std::size_t changed = 0;
  for (float f : p) changed += bit_cast<std::uint32_t>(f) != 0xABABABABu;
  CHECK(changed == 0);
}
