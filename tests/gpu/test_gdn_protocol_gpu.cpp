// The verify / commit protocol on the GPU (issue 27): conv update with windows, precompute, K0
// verify (nothing committed), random accepted prefixes (0 and T included, out-of-range lengths on
// padded rows), replay. After every step the recurrent and conv states equal, bit for bit, a host
// recurrence over exactly the accepted tokens from the old state; slots no real row names (the
// sentinel included) and rows that accepted nothing are unchanged byte for byte. Every batch
// 1..128 eagerly, for FP32 and BF16 storage; then one captured graph per batch replayed with
// inputs, slots and lengths changing before every replay (100 times at B = 128, FP32 state); the
// same for the whole-head schedule (the shipped conv and K0 mappings), with the whole-head replay's
// L2 prefetch, and with each wave's state block through LDS (Staging 3, with and without the prefetch;
// whole heads, and the shipped K0 on half heads with the shipped replay on quarter heads).
#include <doctest/doctest.h>

#include <numeric>

#include "gpu/test_gdn_common.hpp"

using namespace netra;
using namespace netra::testing::gdn;
using netra::testing::drv;
using netra::testing::gpu_array;

namespace {
constexpr std::size_t D = ref::D, HV = ref::HV, H = ref::H, K = ref::K, V = ref::V, T = 12;
constexpr std::size_t max_batch = 128, capacity = 130;  // slots 0..128 real, 129 the sentinel
constexpr std::size_t max_rows = max_batch * T, pool_rows = 2400;

/// A schedule: the mappings of the conv update (Staging, Threads, TokenGroups) and of the K0 and
/// replay cores (ValueBlock, Staging, Waves, ColumnsPerLane; the replay's waves ReplayWaves).
template <u32 ConvStaging, u32 ConvThreads, u32 ConvGroups, u32 Vb, u32 Staging, u32 Waves, u32 Columns, u32 Prefetch = 0, u32 ReplayWaves = Waves> struct schedule {
  using conv = contracts::gdn_conv<sm90a, 64, T, gdn::conv_layout::channel_major, gdn::conv_writes::windows, ConvStaging, ConvThreads, ConvGroups>;
  template <u32 Storage> using k0 = contracts::gdn_k0<sm90a, Storage, Vb, Staging, Waves, Columns>;
  template <u32 Storage> using replay = contracts::gdn_replay<sm90a, Storage, Vb, Staging, ReplayWaves, Columns, Prefetch>;
};
using per_token_schedule = schedule<0, 256, 1, 8, 0, 1, 1>;
using staged_schedule = schedule<0, 256, 1, 8, 1, 4, 1>;
/// The shipped conv (6 preloaded tokens a thread) and K0 (whole-head workgroups, 8 warps, 2 columns
/// per lane), with the replay on the same whole-head map.
using head_schedule = schedule<1, 256, 2, 16, 1, 8, 2>;
/// The same with the replay's L2 prefetch of the workgroup 264 later in launch order (the shipped replay).
using prefetch_schedule = schedule<1, 256, 2, 16, 1, 8, 2, 264>;
/// The whole-head maps with each wave's state block through LDS (Staging 3), with and without the prefetch.
using lds_schedule = schedule<1, 256, 2, 16, 3, 8, 2>;
using lds_prefetch_schedule = schedule<1, 256, 2, 16, 3, 8, 2, 264>;
/// The shipped K0 (half heads, 4 warps) with the shipped replay (quarter heads, 2 warps, 8 a SM), state through LDS.
using lds_quarter_schedule = schedule<1, 256, 2, 16, 3, 4, 2, 0, 2>;

template <u32 Storage, class Schedule = per_token_schedule> struct protocol {
  using elem = conditional_t<Storage == gdn::state_storage::fp32, float, std::uint16_t>;
  static constexpr dtype sd = Storage == gdn::state_storage::fp32 ? dtype::f32 : dtype::bf16;
  using conv_c = typename Schedule::conv;
  using pre_c = contracts::gdn_precompute<sm90a, max_batch, T>;
  using k0_c = typename Schedule::template k0<Storage>;
  using replay_c = typename Schedule::template replay<Storage>;

  std::mt19937 rng{Storage * 1000u + 7u};
  std::vector<std::uint16_t> x_pool = bf16_values(pool_rows * D, 61 + Storage, 1.5f, false), ab_pool = bf16_values(pool_rows * 2 * HV, 62, 3.0f, false);
  gpu_array<std::uint16_t> x{max_rows * D}, y{max_rows * D}, win{max_rows * ref::conv_slot}, ab{max_rows * 2 * HV}, w{D * 4}, out{max_rows * HV * V};
  gpu_array<std::uint16_t> conv_pool{capacity * ref::conv_slot};
  gpu_array<float> q{max_rows * H * K}, k{max_rows * H * K}, decay{max_rows * HV}, beta{max_rows * HV}, a_log{HV}, dt_bias{HV};
  gpu_array<elem> pool{capacity * ref::state_slot};
  gpu_array<std::int32_t> slot{max_batch}, accepted{max_batch};
  std::vector<elem> pool_host, new_pool;
  std::vector<std::uint16_t> conv_host, new_conv, x_host;
  std::vector<std::int32_t> slot_host, acc_host;
  long checked_heads = 0, steps = 0;

  protocol() {
    w.upload(bf16_values(D * 4, 63, 0.6f, false));
    std::vector<float> al, dt;
    gate_parameters(al, dt);
    a_log.upload(al), dt_bias.upload(dt);
    pool_host = random_state_pool<elem>(rng, capacity);
    pool.upload(pool_host);
    conv_host = bf16_values(capacity * ref::conv_slot, 64, 1.5f, false);
    conv_pool.upload(conv_host);
  }

  /// New inputs, slots and accepted lengths for a batch of B (uploaded; nothing launched).
  void prepare(std::size_t B) {
    const std::size_t rows = B * T, x_at = rng() % (pool_rows - rows + 1), ab_at = rng() % (pool_rows - rows + 1);
    x_host.assign(x_pool.begin() + static_cast<std::ptrdiff_t>(x_at * D), x_pool.begin() + static_cast<std::ptrdiff_t>((x_at + rows) * D));
    x.upload(x_host);
    ab.upload(std::vector<std::uint16_t>(ab_pool.begin() + static_cast<std::ptrdiff_t>(ab_at * 2 * HV),
                                         ab_pool.begin() + static_cast<std::ptrdiff_t>((ab_at + rows) * 2 * HV)));
    std::vector<std::int32_t> perm(capacity - 1);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    slot_host.assign(perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(B));
    acc_host.resize(B);
    for (std::size_t b = 0; b < B; ++b) {
      acc_host[b] = b % 5 == 0 ? 0 : b % 5 == 1 ? static_cast<std::int32_t>(T) : static_cast<std::int32_t>(rng() % (T + 1));
      if (b >= 3 && rng() % 6 == 0) {  // a padded row: the sentinel or an invalid index, any length
        const std::int32_t pads[] = {static_cast<std::int32_t>(capacity - 1), -1, 1 << 20};
        slot_host[b] = pads[rng() % 3];
        const std::int32_t lengths[] = {0, static_cast<std::int32_t>(T), static_cast<std::int32_t>(T + 1), -3};
        acc_host[b] = lengths[rng() % 4];
      }
    }
    slot.upload(slot_host), accepted.upload(acc_host);
    out.fill_bytes(0xAB), win.fill_bytes(0xCD);
  }

  /// The verify step and the commit on `stream` (K0 and the conv take at most 64 requests a call).
  void launch(std::size_t B, CUstream stream) {
    const std::size_t rows = B * T;
    for (std::size_t b0 = 0; b0 < B; b0 += 64) {
      const std::size_t n = std::min<std::size_t>(64, B - b0), r0 = b0 * T, nr = n * T;
      launch_gdn_conv(handle_of<conv_c>(), stream,
                      gdn_conv_call(device(), tensor(x, dtype::bf16, {i64(nr), i64(D)}, {}, r0 * D), tensor(w, dtype::bf16, {i64(D), 4}),
                                    tensor(y, dtype::bf16, {i64(nr), i64(D)}, {}, r0 * D), tensor(slot, dtype::i32, {i64(n)}, {}, b0),
                                    tensor(conv_pool, dtype::bf16, {i64(capacity), i64(D), 3}),
                                    tensor(win, dtype::bf16, {i64(n), i64(T), i64(D), 3}, {}, r0 * ref::conv_slot)));
    }
    gdn_precompute(handle_of<pre_c>(), stream, precompute_rows(y, ab, a_log, dt_bias, q, k, decay, beta, rows));
    for (std::size_t b0 = 0; b0 < B; b0 += 64) {
      const std::size_t n = std::min<std::size_t>(64, B - b0), r0 = b0 * T, nr = n * T;
      gdn_recurrent(handle_of<k0_c>(), stream,
                    gdn_recurrent_call(device(), tensor(q, dtype::f32, {i64(nr), i64(H), i64(K)}, {}, r0 * H * K),
                                       tensor(k, dtype::f32, {i64(nr), i64(H), i64(K)}, {}, r0 * H * K), tensor(y, dtype::bf16, {i64(nr), i64(D)}, {}, r0 * D),
                                       tensor(decay, dtype::f32, {i64(nr), i64(HV)}, {}, r0 * HV), tensor(beta, dtype::f32, {i64(nr), i64(HV)}, {}, r0 * HV),
                                       tensor(pool, sd, {i64(capacity), i64(HV), i64(V), i64(K)}), tensor(slot, dtype::i32, {i64(n)}, {}, b0),
                                       tensor(out, dtype::bf16, {i64(nr), i64(HV), i64(V)}, {}, r0 * HV * V), {}, {}, {}));
    }
    gdn_recurrent(handle_of<replay_c>(), stream,
                  gdn_recurrent_call(device(), tensor(q, dtype::f32, {i64(rows), i64(H), i64(K)}), tensor(k, dtype::f32, {i64(rows), i64(H), i64(K)}),
                                     tensor(y, dtype::bf16, {i64(rows), i64(D)}), tensor(decay, dtype::f32, {i64(rows), i64(HV)}),
                                     tensor(beta, dtype::f32, {i64(rows), i64(HV)}), tensor(pool, sd, {i64(capacity), i64(HV), i64(V), i64(K)}),
                                     tensor(slot, dtype::i32, {i64(B)}), {}, tensor(accepted, dtype::i32, {i64(B)}),
                                     tensor(win, dtype::bf16, {i64(B), i64(T), i64(D), 3}), tensor(conv_pool, dtype::bf16, {i64(capacity), i64(D), 3})));
  }

  /// Checks the step just run against the host, then takes the pools as the next step's old state.
  /// `all_heads`: every head of every request; otherwise every head of request `steps % B` and one
  /// random head of each other request.
  void check(std::size_t B, bool all_heads, const std::string& what) {
    const std::size_t rows = B * T;
    download_into(pool, new_pool);
    download_into(conv_pool, new_conv);
    auto dl = [](const auto& a, std::size_t n) { return download_prefix(a, n); };
    const auto yv = dl(y, rows * D), outv = dl(out, rows * HV * V);
    const auto qv = dl(q, rows * H * K), kv = dl(k, rows * H * K), dv = dl(decay, rows * HV), bv = dl(beta, rows * HV);
    const ref::token_inputs in{qv.data(), kv.data(), yv.data(), D, dv.data(), bv.data()};
    std::vector<bool> named(capacity, false);
    std::vector<std::pair<std::size_t, std::size_t>> heads;
    const std::size_t full = steps % B;
    for (std::size_t b = 0; b < B; ++b) {
      if (!ref::real_slot(slot_host[b], capacity)) continue;
      named[static_cast<std::size_t>(slot_host[b])] = true;
      if (all_heads || b == full) for (std::size_t hv = 0; hv < HV; ++hv) heads.push_back({b, hv});
      else heads.push_back({b, rng() % HV});
    }
    std::vector<std::size_t> bad(heads.size(), 0);
    parallel_for(heads.size(), [&](std::size_t i) {
      const auto [b, hv] = heads[i];
      const std::size_t s = static_cast<std::size_t>(slot_host[b]), n = static_cast<std::size_t>(acc_host[b]) <= T ? static_cast<std::size_t>(acc_host[b]) : 0;
      std::vector<float> S = ref::widen(pool_host.data() + (s * HV + hv) * V * K, Storage, V * K);
      std::vector<float> committed;
      std::uint16_t o[V];
      for (std::size_t t = 0; t < T; ++t) {
        if (t == n) committed = S;
        const std::size_t r = b * T + t;
        ref::step(S.data(), in.decay[r * HV + hv], in.beta[r * HV + hv], in.k + (r * H + hv / 2) * K, in.q + (r * H + hv / 2) * K,
                  in.v + r * D + gdn::v_offset + hv * V, o);
        for (std::size_t j = 0; j < V; ++j) bad[i] += o[j] != outv[(r * HV + hv) * V + j];  // K0 outputs
      }
      if (n == T) committed = S;
      std::vector<elem> expect(V * K);
      if (n == 0) std::copy_n(pool_host.data() + (s * HV + hv) * V * K, V * K, expect.data());  // nothing committed: byte for byte
      else ref::narrow(committed, Storage, expect.data());
      bad[i] += std::memcmp(new_pool.data() + (s * HV + hv) * V * K, expect.data(), V * K * sizeof(elem)) != 0;
    });
    std::size_t total = 0;
    for (auto v : bad) total += v;
    // Unnamed slots (the sentinel included) and real rows that accepted nothing: whole slots unchanged.
    std::size_t untouched_bad = 0, conv_bad = 0;
    for (std::size_t s = 0; s < capacity; ++s)
      if (!named[s]) {
        untouched_bad += std::memcmp(new_pool.data() + s * ref::state_slot, pool_host.data() + s * ref::state_slot, ref::state_slot * sizeof(elem)) != 0;
        conv_bad += std::memcmp(new_conv.data() + s * ref::conv_slot, conv_host.data() + s * ref::conv_slot, ref::conv_slot * 2) != 0;
      }
    for (std::size_t b = 0; b < B; ++b) {
      if (!ref::real_slot(slot_host[b], capacity)) continue;
      const std::size_t s = static_cast<std::size_t>(slot_host[b]), n = static_cast<std::size_t>(acc_host[b]);
      if (n == 0) untouched_bad += std::memcmp(new_pool.data() + s * ref::state_slot, pool_host.data() + s * ref::state_slot, ref::state_slot * sizeof(elem)) != 0;
      // Conv history after exactly n accepted tokens: the last three of (old history, x_0 .. x_(n-1)).
      for (std::size_t c = 0; c < D; ++c)
        for (std::size_t j = 0; j < 3; ++j) {
          const std::size_t pos = n + j;  // position in the sequence old[0..2], x[0..n-1]
          const std::uint16_t want = pos < 3 ? conv_host[s * ref::conv_slot + ref::conv_index(0, c, pos)] : x_host[(b * T + pos - 3) * D + c];
          conv_bad += new_conv[s * ref::conv_slot + ref::conv_index(0, c, j)] != want;
        }
    }
    INFO(what, " B ", B, " step ", steps);
    CHECK(total == 0);
    CHECK(untouched_bad == 0);
    CHECK(conv_bad == 0);
    checked_heads += static_cast<long>(heads.size());
    ++steps;
    pool_host.swap(new_pool);  // the next step's old state (no copy)
    conv_host.swap(new_conv);
  }
};

template <u32 Storage, class Schedule = per_token_schedule> void eager_every_batch() {
  protocol<Storage, Schedule> p;
  for (std::size_t B = 1; B <= max_batch; ++B) {
    p.prepare(B);
    p.launch(B, nullptr);
    p.check(B, B <= 3 || B == 64 || B == 127 || B == 128, "eager");
  }
  MESSAGE(instance_name<typename protocol<Storage, Schedule>::k0_c>(), ": ", p.steps, " eager steps, ", p.checked_heads, " (request, head) states checked");
}

template <class Schedule> void eager_both_storages() {
  eager_every_batch<gdn::state_storage::bf16, Schedule>();
  eager_every_batch<gdn::state_storage::fp32, Schedule>();
}

template <u32 Storage, class Schedule = per_token_schedule> void graph_buckets(std::initializer_list<std::size_t> buckets, int replays) {
  protocol<Storage, Schedule> p;
  replay_in_graphs(p, buckets, replays);
  MESSAGE(instance_name<typename protocol<Storage, Schedule>::k0_c>(), ": ", p.steps, " graph replays, ", p.checked_heads, " (request, head) states checked");
}
}  // namespace

TEST_CASE("protocol smoke: B 1, 3 and 70, FP32 and BF16 storage, every schedule") {
  protocol<gdn::state_storage::fp32> f;
  protocol<gdn::state_storage::bf16> b;
  protocol<gdn::state_storage::bf16, staged_schedule> s;
  protocol<gdn::state_storage::fp32, head_schedule> hf;
  protocol<gdn::state_storage::bf16, head_schedule> hb;
  protocol<gdn::state_storage::fp32, prefetch_schedule> pf;
  protocol<gdn::state_storage::bf16, prefetch_schedule> pb;
  protocol<gdn::state_storage::fp32, lds_schedule> lf;
  protocol<gdn::state_storage::bf16, lds_prefetch_schedule> lb;
  protocol<gdn::state_storage::fp32, lds_quarter_schedule> qf;
  protocol<gdn::state_storage::bf16, lds_quarter_schedule> qb;
  for (const std::size_t B : {std::size_t{1}, std::size_t{3}, std::size_t{70}}) {
    f.prepare(B), f.launch(B, nullptr), f.check(B, B < 4, "smoke fp32");
    b.prepare(B), b.launch(B, nullptr), b.check(B, B < 4, "smoke bf16");
    s.prepare(B), s.launch(B, nullptr), s.check(B, B < 4, "smoke bf16 staged");
    hf.prepare(B), hf.launch(B, nullptr), hf.check(B, B < 4, "smoke fp32 whole-head");
    hb.prepare(B), hb.launch(B, nullptr), hb.check(B, B < 4, "smoke bf16 whole-head");
    pf.prepare(B), pf.launch(B, nullptr), pf.check(B, B < 4, "smoke fp32 whole-head, prefetch 264");
    pb.prepare(B), pb.launch(B, nullptr), pb.check(B, B < 4, "smoke bf16 whole-head, prefetch 264");
    lf.prepare(B), lf.launch(B, nullptr), lf.check(B, B < 4, "smoke fp32 whole-head, state through LDS");
    lb.prepare(B), lb.launch(B, nullptr), lb.check(B, B < 4, "smoke bf16 whole-head, state through LDS, prefetch 264");
    qf.prepare(B), qf.launch(B, nullptr), qf.check(B, B < 4, "smoke fp32 quarter-head replay, state through LDS");
    qb.prepare(B), qb.launch(B, nullptr), qb.check(B, B < 4, "smoke bf16 quarter-head replay, state through LDS");
  }
}

TEST_CASE("protocol: verify, random accepted prefixes, replay for every B in 1..128 (FP32 state)") { eager_every_batch<gdn::state_storage::fp32>(); }
TEST_CASE("protocol: verify, random accepted prefixes, replay for every B in 1..128 (BF16 state)") { eager_every_batch<gdn::state_storage::bf16>(); }
TEST_CASE("protocol in one captured graph, replayed 100 times at B = 128 (5 times at B = 1, 37, 64, and with BF16 state) with changing inputs and lengths") {
  graph_buckets<gdn::state_storage::fp32>({1, 37, 64}, 5);
  graph_buckets<gdn::state_storage::fp32>({128}, 100);
  graph_buckets<gdn::state_storage::bf16>({128}, 5);
}
TEST_CASE("protocol, whole-head schedule: every B in 1..128 eagerly (FP32 and BF16 state)") { eager_both_storages<head_schedule>(); }
TEST_CASE("protocol, whole-head prefetch schedule: every B in 1..128 eagerly (BF16 and FP32 state)") { eager_both_storages<prefetch_schedule>(); }
TEST_CASE("protocol, whole-head prefetch schedule: one captured graph replayed 100 times at B = 128 (BF16 state; 5 times at B = 1, 37, 64, FP32)") {
  graph_buckets<gdn::state_storage::bf16, prefetch_schedule>({128}, 100);
  graph_buckets<gdn::state_storage::fp32, prefetch_schedule>({1, 37, 64}, 5);
}
TEST_CASE("protocol, state-through-LDS schedule: every B in 1..128 eagerly (BF16 and FP32 state)") { eager_both_storages<lds_schedule>(); }
TEST_CASE("protocol, state-through-LDS prefetch schedule: every B in 1..128 eagerly (BF16 and FP32 state)") { eager_both_storages<lds_prefetch_schedule>(); }
TEST_CASE("protocol, state-through-LDS schedules: one captured graph replayed 100 times at B = 128 (BF16, prefetch; 5 times at B = 1, 37, 64, FP32, and without the prefetch)") {
  graph_buckets<gdn::state_storage::bf16, lds_prefetch_schedule>({128}, 100);
  graph_buckets<gdn::state_storage::fp32, lds_prefetch_schedule>({1, 37, 64, 128}, 5);
  graph_buckets<gdn::state_storage::bf16, lds_schedule>({1, 64, 128}, 5);
  graph_buckets<gdn::state_storage::fp32, lds_schedule>({1, 64, 128}, 5);
}
TEST_CASE("protocol, quarter-head replay schedule (state through LDS): every B in 1..128 eagerly (BF16 and FP32 state)") { eager_both_storages<lds_quarter_schedule>(); }
TEST_CASE("protocol, quarter-head replay schedule: one captured graph replayed 100 times at B = 128 (BF16; 5 times at B = 1, 37, 64, 128, FP32)") {
  graph_buckets<gdn::state_storage::bf16, lds_quarter_schedule>({128}, 100);
  graph_buckets<gdn::state_storage::fp32, lds_quarter_schedule>({1, 37, 64, 128}, 5);
}
