// The GDN one-token decode step on the GPU (contracts/gdn/decode.hpp): conv update committing the
// final conv state (T = 1, no windows), precompute, and the recurrent core with Commit final, for
// every batch 1..128 and a pool of 129 real slots plus the sentinel. After every step, bit for bit
// against the host: y rows, q / k / decay / beta, the outputs, the recurrent state of each real
// request (one step of the host recurrence from the slot's stored state, FP32 or BF16 storage)
// and its conv history; padded rows (the sentinel, -1, an index past the pool) and slots no real
// row names are unchanged byte for byte. Each step's pools are the next step's old state, so a
// slot sees a sequence of decode steps (from B 4 on, at least one padded row a step). Then one
// captured graph per bucket, replayed with inputs and slots changing before every replay. Every
// mapping candidate of the decode core (catalog/gdn.hpp decode_candidates) runs the same protocol at
// B 1, 5, 64 and 128 (every head checked) and in a graph bucket.
#include <doctest/doctest.h>

#include <numeric>
#include <utility>

#include "gpu/test_gdn_common.hpp"
#include "netra/contracts/gdn/decode.hpp"
#include "netra/runtime/catalog/gdn.hpp"

using namespace netra;
using namespace netra::testing::gdn;
using netra::testing::drv;
using netra::testing::gpu_array;

namespace {
constexpr std::size_t D = ref::D, HV = ref::HV, H = ref::H, K = ref::K, V = ref::V;
constexpr std::size_t max_batch = 128, capacity = 130;  // slots 0..128 real, 129 the sentinel
constexpr std::size_t pool_rows = 1024;

template <u32 Storage, u32 Layout, class Core = contracts::gdn_decode_core<sm90a, Storage>> struct decode_step {
  using elem = conditional_t<Storage == gdn::state_storage::fp32, float, std::uint16_t>;
  static constexpr dtype sd = Storage == gdn::state_storage::fp32 ? dtype::f32 : dtype::bf16;
  static constexpr bool channel_major = Layout == gdn::conv_layout::channel_major;
  using conv_c = contracts::gdn_decode_conv<sm90a, Layout>;
  using pre_c = contracts::gdn_decode_precompute<sm90a>;
  using core_c = Core;

  std::mt19937 rng{Storage * 100u + Layout * 10u + 3u};
  std::vector<std::uint16_t> x_pool = bf16_values(pool_rows * D, 71 + Storage, 1.5f, false), ab_pool = bf16_values(pool_rows * 2 * HV, 72, 3.0f, false);
  std::vector<std::uint16_t> w_host = bf16_values(D * 4, 73, 0.6f, false);
  std::vector<float> al, dt;
  gpu_array<std::uint16_t> x{max_batch * D}, y{max_batch * D}, ab{max_batch * 2 * HV}, w{D * 4}, out{max_batch * HV * V}, conv_pool{capacity * ref::conv_slot};
  gpu_array<float> q{max_batch * H * K}, k{max_batch * H * K}, decay{max_batch * HV}, beta{max_batch * HV}, a_log{HV}, dt_bias{HV};
  gpu_array<elem> pool{capacity * ref::state_slot};
  gpu_array<std::int32_t> slot{max_batch};
  std::vector<elem> pool_host, new_pool;
  std::vector<std::uint16_t> conv_host, new_conv, x_host, ab_host;
  std::vector<std::int32_t> slot_host;
  long checked_heads = 0, steps = 0;

  decode_step() {
    w.upload(w_host);
    gate_parameters(al, dt);
    a_log.upload(al), dt_bias.upload(dt);
    pool_host = random_state_pool<elem>(rng, capacity);
    pool.upload(pool_host);
    conv_host = bf16_values(capacity * ref::conv_slot, 74, 1.5f, false);
    conv_pool.upload(conv_host);
  }

  /// New token rows and slots for a batch of B (uploaded; nothing launched); a then b, [B, 32] each, in ab.
  void prepare(std::size_t B) {
    const std::size_t x_at = rng() % (pool_rows - B + 1), ab_at = rng() % (pool_rows - B + 1);
    x_host.assign(x_pool.begin() + static_cast<std::ptrdiff_t>(x_at * D), x_pool.begin() + static_cast<std::ptrdiff_t>((x_at + B) * D));
    ab_host.assign(ab_pool.begin() + static_cast<std::ptrdiff_t>(ab_at * 2 * HV), ab_pool.begin() + static_cast<std::ptrdiff_t>((ab_at + B) * 2 * HV));
    x.upload(x_host), ab.upload(ab_host);
    std::vector<std::int32_t> perm(capacity - 1);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    slot_host.assign(perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(B));
    bool padded = false;
    for (std::size_t b = 3; b < B; ++b)
      if (rng() % 6 == 0) {  // a padded row: the sentinel or an invalid index
        const std::int32_t pads[] = {static_cast<std::int32_t>(capacity - 1), -1, 1 << 20};
        slot_host[b] = pads[rng() % 3], padded = true;
      }
    if (B >= 4 && !padded) slot_host[B - 1] = static_cast<std::int32_t>(capacity - 1);
    slot.upload(slot_host);
    out.fill_bytes(0xAB), y.fill_bytes(0xCD);
  }

  /// The decode step's three GDN kernels on `stream`.
  void launch(std::size_t B, CUstream stream) {
    const i64 b = static_cast<i64>(B);
    const tensor_arg conv_state = channel_major ? tensor(conv_pool, dtype::bf16, {i64(capacity), i64(D), 3}) : tensor(conv_pool, dtype::bf16, {i64(capacity), 3, i64(D)});
    launch_gdn_conv(handle_of<conv_c>(), stream,
                    gdn_conv_call(device(), tensor(x, dtype::bf16, {b, i64(D)}), tensor(w, dtype::bf16, {i64(D), 4}), tensor(y, dtype::bf16, {b, i64(D)}),
                                  tensor(slot, dtype::i32, {b}), conv_state, {}));
    gdn_precompute(handle_of<pre_c>(), stream,
                   gdn_precompute_call(device(), tensor(y, dtype::bf16, {b, i64(D)}), tensor(ab, dtype::bf16, {b, i64(HV)}),
                                       tensor(ab, dtype::bf16, {b, i64(HV)}, {}, B * HV), tensor(a_log, dtype::f32, {i64(HV)}),
                                       tensor(dt_bias, dtype::f32, {i64(HV)}), tensor(q, dtype::f32, {b, i64(H), i64(K)}),
                                       tensor(k, dtype::f32, {b, i64(H), i64(K)}), tensor(decay, dtype::f32, {b, i64(HV)}), tensor(beta, dtype::f32, {b, i64(HV)})));
    gdn_recurrent(handle_of<core_c>(), stream,
                  gdn_recurrent_call(device(), tensor(q, dtype::f32, {b, i64(H), i64(K)}), tensor(k, dtype::f32, {b, i64(H), i64(K)}),
                                     tensor(y, dtype::bf16, {b, i64(D)}), tensor(decay, dtype::f32, {b, i64(HV)}), tensor(beta, dtype::f32, {b, i64(HV)}),
                                     tensor(pool, sd, {i64(capacity), i64(HV), i64(V), i64(K)}), tensor(slot, dtype::i32, {b}),
                                     tensor(out, dtype::bf16, {b, i64(HV), i64(V)}), {}, {}, {}));
  }

  /// Checks the step just run against the host, then takes the pools as the next step's old state.
  void check(std::size_t B, bool all_heads, const std::string& what) {
    download_into(pool, new_pool);  // reused buffers: no allocation per step
    download_into(conv_pool, new_conv);
    const auto yv = download_prefix(y, B * D), outv = download_prefix(out, B * HV * V);
    const auto qv = download_prefix(q, B * H * K), kv = download_prefix(k, B * H * K), dv = download_prefix(decay, B * HV), bv = download_prefix(beta, B * HV);
    std::size_t y_bad = 0, pre_bad = 0, conv_bad = 0, untouched_bad = 0;
    std::vector<bool> named(capacity, false);
    std::vector<std::uint16_t> y_ref(D), image(ref::conv_slot);
    std::vector<float> pq(H * K), pk(H * K), pd(HV), pb(HV);
    for (std::size_t b = 0; b < B; ++b) {
      const std::size_t s = ref::resolve_slot(slot_host[b], capacity);
      // conv: one token from the slot's history (padded rows read the sentinel and write only y).
      ref::conv_request(x_host.data() + b * D, D, w_host.data(), conv_host.data() + s * ref::conv_slot, Layout, 0, 1, y_ref.data(), nullptr, image.data());
      for (std::size_t c = 0; c < D; ++c) y_bad += y_ref[c] != yv[b * D + c];
      if (ref::real_slot(slot_host[b], capacity)) {
        named[s] = true;
        conv_bad += std::memcmp(image.data(), new_conv.data() + s * ref::conv_slot, ref::conv_slot * 2) != 0;
      }
      ref::precompute_row(y_ref.data(), ab_host.data() + b * HV, ab_host.data() + (B + b) * HV, al.data(), dt.data(), pq.data(), pk.data(), pd.data(),
                          pb.data());
      pre_bad += std::memcmp(pq.data(), qv.data() + b * H * K, H * K * 4) != 0;
      pre_bad += std::memcmp(pk.data(), kv.data() + b * H * K, H * K * 4) != 0;
      pre_bad += std::memcmp(pd.data(), dv.data() + b * HV, HV * 4) != 0;
      pre_bad += std::memcmp(pb.data(), bv.data() + b * HV, HV * 4) != 0;
    }
    // The core: every head of the requests checked in full, one random head of the others.
    const ref::token_inputs in{qv.data(), kv.data(), yv.data(), D, dv.data(), bv.data()};
    std::vector<std::pair<std::size_t, std::size_t>> heads;
    const std::size_t full = static_cast<std::size_t>(steps) % B;
    for (std::size_t b = 0; b < B; ++b) {
      if (all_heads || b == full)
        for (std::size_t hv = 0; hv < HV; ++hv) heads.push_back({b, hv});
      else heads.push_back({b, rng() % HV});
    }
    std::vector<std::size_t> bad(heads.size(), 0);
    parallel_for(heads.size(), [&](std::size_t i) {
      const auto [b, hv] = heads[i];
      const std::size_t s = ref::resolve_slot(slot_host[b], capacity);
      std::vector<float> S = ref::widen(pool_host.data() + (s * HV + hv) * V * K, Storage, V * K);
      std::uint16_t o[V];
      ref::step(S.data(), in.decay[b * HV + hv], in.beta[b * HV + hv], in.k + (b * H + hv / 2) * K, in.q + (b * H + hv / 2) * K,
                in.v + b * D + gdn::v_offset + hv * V, o);
      for (std::size_t j = 0; j < V; ++j) bad[i] += o[j] != outv[(b * HV + hv) * V + j];
      if (!ref::real_slot(slot_host[b], capacity)) return;  // the sentinel's state is checked unchanged below
      std::vector<elem> expect(V * K);
      ref::narrow(S, Storage, expect.data());
      bad[i] += std::memcmp(expect.data(), new_pool.data() + (s * HV + hv) * V * K, V * K * sizeof(elem)) != 0;
    });
    std::size_t core_bad = 0;
    for (auto v : bad) core_bad += v;
    for (std::size_t s = 0; s < capacity; ++s)
      if (!named[s]) {
        untouched_bad += std::memcmp(new_pool.data() + s * ref::state_slot, pool_host.data() + s * ref::state_slot, ref::state_slot * sizeof(elem)) != 0;
        untouched_bad += std::memcmp(new_conv.data() + s * ref::conv_slot, conv_host.data() + s * ref::conv_slot, ref::conv_slot * 2) != 0;
      }
    INFO(what, " ", instance_name<core_c>(), " B ", B, " step ", steps);
    CHECK(y_bad == 0);
    CHECK(pre_bad == 0);
    CHECK(conv_bad == 0);
    CHECK(core_bad == 0);
    CHECK(untouched_bad == 0);
    checked_heads += static_cast<long>(heads.size());
    ++steps;
    pool_host.swap(new_pool);
    conv_host.swap(new_conv);
  }
};

template <u32 Storage, u32 Layout> void eager_every_batch() {
  decode_step<Storage, Layout> p;
  for (std::size_t B = 1; B <= max_batch; ++B) {
    p.prepare(B);
    p.launch(B, nullptr);
    p.check(B, B <= 3 || B == 64 || B == 65 || B == 128, "eager");
  }
  MESSAGE(instance_name<typename decode_step<Storage, Layout>::core_c>(), ": ", p.steps, " eager decode steps, ", p.checked_heads, " (request, head) states checked");
}

template <u32 Storage, u32 Layout> void graph_buckets(std::initializer_list<std::size_t> buckets, int replays) {
  decode_step<Storage, Layout> p;
  replay_in_graphs(p, buckets, replays);
  MESSAGE(instance_name<typename decode_step<Storage, Layout>::core_c>(), ": ", p.steps, " graph replays");
}
}  // namespace

TEST_CASE("gdn decode: every B in 1..128, FP32 state, channel-major conv history") {
  eager_every_batch<gdn::state_storage::fp32, gdn::conv_layout::channel_major>();
}
TEST_CASE("gdn decode: every B in 1..128, BF16 state, tap-major conv history") {
  eager_every_batch<gdn::state_storage::bf16, gdn::conv_layout::tap_major>();
}
TEST_CASE("gdn decode in captured graphs: the step's buckets replayed with changing inputs and slots (FP32 and BF16 state)") {
  graph_buckets<gdn::state_storage::fp32, gdn::conv_layout::channel_major>({1, 2, 4, 8, 16, 32, 64, 80, 96, 112, 128}, 3);
  graph_buckets<gdn::state_storage::fp32, gdn::conv_layout::channel_major>({128}, 30);
  graph_buckets<gdn::state_storage::bf16, gdn::conv_layout::channel_major>({1, 64, 128}, 5);
}

TEST_CASE("gdn decode, every mapping candidate of the core: B 1, 5, 64, 128 eager (every head) and a graph bucket, FP32 and BF16 state") {
  auto each = [](auto candidates) {
    boost::hana::for_each(candidates, [](auto c) {
      using C = typename decltype(c)::type;
      decode_step<C::state_storage, C::state_storage == gdn::state_storage::fp32 ? gdn::conv_layout::channel_major : gdn::conv_layout::tap_major, C> p;
      for (std::size_t B : {1, 5, 64, 128}) {
        p.prepare(B);
        p.launch(B, nullptr);
        p.check(B, true, "eager candidate");
      }
      replay_in_graphs(p, {128, 5}, 3);
      MESSAGE(instance_name<C>(), ": ", p.steps, " decode steps, ", p.checked_heads, " (request, head) states checked");
    });
  };
  each(catalog::gdn_detail::decode_candidates<gdn::state_storage::fp32>{});
  each(catalog::gdn_detail::decode_candidates<gdn::state_storage::bf16>{});
}
