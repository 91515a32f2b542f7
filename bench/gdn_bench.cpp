// bench/gdn_bench.cpp — netra's gdn kernels timed on the GPU (sm90a cubins from the build): conv
// update (with / without windows), precompute, K0 verify (FP32 / BF16 state), M16 (and
// precompute + M16 as one burst), replay (every request accepting T tokens, and random lengths),
// the one-token decode core (B 1, 16, 64, 128; --decode-only: those records alone),
// each for the default mapping and every mapping candidate of the catalog (catalog/gdn.hpp). Eager and graph-replayed bursts over input sets rotated past 3x the L2
// (bench/gpu_timing.hpp). Each record is checked in this process against the host oracle on its
// first input set (sampled requests, every head). One JSON line per record on stdout; with
// --dump DIR, the inputs and netra's outputs of one shape per contract for bench/gdn.py's peers.
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_timing.hpp"
#include "gpu/test_gdn_common.hpp"
#include "netra/runtime/catalog/gdn.hpp"

using namespace netra;
using namespace netra::testing::gdn;
using netra::testing::gpu_array;
using netra::bench::drv;

namespace {
constexpr std::size_t D = ref::D, HV = ref::HV, H = ref::H, K = ref::K, V = ref::V;
constexpr double l2 = 60.0 * 1024 * 1024;
std::string dump_dir;
CUstream stream;

std::size_t sets_for(double bytes_per_call) { return std::max<std::size_t>(2, std::min<std::size_t>(64, static_cast<std::size_t>(3 * l2 / bytes_per_call) + 1)); }

template <class T> void dump(const std::string& name, const std::vector<T>& v) {
  if (dump_dir.empty()) return;
  std::ofstream(dump_dir + "/" + name, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

void emit(const char* contract, const std::string& instance, const std::string& shape, bench::timing t, bool correct, double bytes, double fp32_ops) {
  std::printf("{\"contract\": \"%s\", \"instance\": \"%s\", \"shape\": {%s}, \"netra_graph_us\": %.3f, \"netra_eager_us\": %.3f, \"correct\": %s, "
              "\"bytes\": %.0f, \"fp32_ops\": %.0f}\n",
              contract, instance.c_str(), shape.c_str(), t.graph_us, t.eager_us, correct ? "true" : "false", bytes, fp32_ops);
  std::fflush(stdout);
}

// ---------------------------------------------------------------- conv
bool admitted(const decision& d) {
  if (!d.admitted()) std::fprintf(stderr, "netra-bench-gdn: refused: %s\n", to_string(d).c_str());
  return d.admitted();
}

template <class C> void bench_conv(std::size_t B) {
  constexpr std::size_t T = C::tokens;
  constexpr bool windows = C::writes == gdn::conv_writes::windows;
  const std::size_t rows = B * T;
  const double bytes = rows * D * 2.0 * 2 + B * ref::conv_slot * 2.0 * (windows ? 1 + T : 2);
  const std::size_t n = sets_for(bytes), slots = n * B + 1;
  gpu_array<std::uint16_t> x(n * rows * D), y(n * rows * D), w(D * 4), pool(slots * ref::conv_slot), win(windows ? n * rows * ref::conv_slot : 1);
  gpu_array<std::int32_t> slot(n * B);
  const auto xh = bf16_values(rows * D, 1, 1.5f, false), wh = bf16_values(D * 4, 2, 0.6f, false), ph = bf16_values(slots * ref::conv_slot, 3, 1.5f, false);
  for (std::size_t i = 0; i < n; ++i)
    drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(x.data() + i * rows * D), xh.data(), rows * D * 2), "upload");
  w.upload(wh), pool.upload(ph);
  std::vector<std::int32_t> sh(n * B);
  for (std::size_t i = 0; i < sh.size(); ++i) sh[i] = static_cast<std::int32_t>(i);
  slot.upload(sh);
  auto sig = [&](std::size_t i) {
    return gdn_conv_call(device(), tensor(x, dtype::bf16, {i64(rows), i64(D)}, {}, i * rows * D), tensor(w, dtype::bf16, {i64(D), 4}),
                         tensor(y, dtype::bf16, {i64(rows), i64(D)}, {}, i * rows * D), tensor(slot, dtype::i32, {i64(B)}, {}, i * B),
                         C::channel_major ? tensor(pool, dtype::bf16, {i64(slots), i64(D), 3}) : tensor(pool, dtype::bf16, {i64(slots), 3, i64(D)}),
                         !windows ? tensor_arg{}
                         : C::channel_major ? tensor(win, dtype::bf16, {i64(B), i64(T), i64(D), 3}, {}, i * rows * ref::conv_slot)
                                            : tensor(win, dtype::bf16, {i64(B), i64(T), 3, i64(D)}, {}, i * rows * ref::conv_slot));
  };
  const auto& h = handle_of<C>();
  bool ok = true;
  for (std::size_t i = 0; i < n; ++i) ok &= admitted(C::admits(sig(i)));
  // Correctness on set 0 (before timing: final_state calls advance the pool).
  launch_gdn_conv(h, stream, sig(0));
  drv().check(drv().cuStreamSynchronize(stream), "sync");
  std::vector<std::uint16_t> ye(rows * D), we(windows ? rows * ref::conv_slot : 0), fe(ref::conv_slot);
  const auto yg = y.download();
  const auto wg = win.download();
  for (std::size_t b : {std::size_t{0}, B - 1}) {
    ref::conv_request(xh.data(), D, wh.data(), ph.data() + b * ref::conv_slot, C::layout, b, T, ye.data(), windows ? we.data() : nullptr, fe.data());
    for (std::size_t e = b * T * D; e < (b + 1) * T * D; ++e) ok &= yg[e] == ye[e];
    if (windows)
      for (std::size_t e = b * T * ref::conv_slot; e < (b + 1) * T * ref::conv_slot; ++e) ok &= wg[e] == we[e];
  }
  if (!dump_dir.empty() && B == 64 && C::channel_major) {
    dump("conv_x.bin", xh), dump("conv_w.bin", wh);
    dump("conv_state.bin", std::vector<std::uint16_t>(ph.begin(), ph.begin() + static_cast<std::ptrdiff_t>(B * ref::conv_slot)));
    dump(windows ? "conv_y_windows.bin" : "conv_y.bin", std::vector<std::uint16_t>(yg.begin(), yg.begin() + static_cast<std::ptrdiff_t>(rows * D)));
    if (windows) dump("conv_windows.bin", std::vector<std::uint16_t>(wg.begin(), wg.begin() + static_cast<std::ptrdiff_t>(rows * ref::conv_slot)));
  }
  const auto t = bench::time_eager_and_graph(stream, static_cast<int>(n), [&] {
    for (std::size_t i = 0; i < n; ++i) launch_gdn_conv(h, stream, sig(i));
  });
  emit("conv", instance_name<C>(), "\"batch\": " + std::to_string(B) + ", \"t\": " + std::to_string(T) + ", \"windows\": " + (windows ? "true" : "false") +
                                      ", \"layout\": \"" + (C::channel_major ? "channel_major" : "tap_major") + "\", \"staging\": \"" +
                                      (C::staging == 2 ? "next_token" : C::staging ? "block" : "per_token") + "\", \"threads\": " + std::to_string(C::threads) +
                                      ", \"token_groups\": " + std::to_string(C::token_groups) +
                                      ", \"workgroups_per_processor\": " + std::to_string(C::workgroups_per_processor) +
                                      ", \"channels_per_thread\": " + std::to_string(C::channels_per_thread) + ", \"division\": \"" +
                                      (C::division ? "instruction_seed" : "integer_seed") + "\", \"window_stores\": \"" +
                                      (C::window_stores ? "streaming" : "plain") + "\", \"silu\": \"" + (C::silu ? "lean" : "selects") + "\"",
       t, ok, bytes, 0);
}
}  // namespace

namespace {
// ---------------------------------------------------------------- precompute
template <class C> double bench_precompute(std::size_t B, bool record) {
  constexpr std::size_t T = C::tokens;
  const std::size_t rows = B * T;
  const double bytes = rows * (D * 2.0 + 4 * HV * 2.0 + 2 * H * K * 4.0 + 2 * HV * 4.0);
  const std::size_t n = sets_for(bytes);
  gpu_array<std::uint16_t> y(n * rows * D), a(n * rows * HV), b(n * rows * HV);
  gpu_array<float> al(HV), dt(HV), q(n * rows * H * K), k(n * rows * H * K), decay(n * rows * HV), beta(n * rows * HV);
  const auto yh = bf16_values(n * rows * D, 4, 1.0f, false), ah = bf16_values(n * rows * HV, 5, 3.0f, false), bh = bf16_values(n * rows * HV, 6, 3.0f, false);
  std::vector<float> alh(HV), dth(HV);
  for (std::size_t h = 0; h < HV; ++h) alh[h] = -1.0f + 0.08f * static_cast<float>(h), dth[h] = 0.03f * static_cast<float>(h) - 0.5f;
  y.upload(yh), a.upload(ah), b.upload(bh), al.upload(alh), dt.upload(dth);
  auto sig = [&](std::size_t i) {
    const std::size_t r0 = i * rows;
    return gdn_precompute_call(device(), tensor(y, dtype::bf16, {i64(rows), i64(D)}, {}, r0 * D), tensor(a, dtype::bf16, {i64(rows), i64(HV)}, {}, r0 * HV),
                               tensor(b, dtype::bf16, {i64(rows), i64(HV)}, {}, r0 * HV), tensor(al, dtype::f32, {i64(HV)}), tensor(dt, dtype::f32, {i64(HV)}),
                               tensor(q, dtype::f32, {i64(rows), i64(H), i64(K)}, {}, r0 * H * K), tensor(k, dtype::f32, {i64(rows), i64(H), i64(K)}, {}, r0 * H * K),
                               tensor(decay, dtype::f32, {i64(rows), i64(HV)}, {}, r0 * HV), tensor(beta, dtype::f32, {i64(rows), i64(HV)}, {}, r0 * HV));
  };
  const auto& h = handle_of<C>();
  bool ok = admitted(C::admits(sig(0)));
  launch_gdn_precompute(h, stream, sig(0));
  drv().check(drv().cuStreamSynchronize(stream), "sync");
  const auto qg = q.download(), kg = k.download(), dg = decay.download(), bg = beta.download();
  std::vector<float> qe(H * K), ke(H * K), de(HV), be(HV);
  for (std::size_t r = 0; r < rows; r += std::max<std::size_t>(1, rows / 16)) {
    ref::precompute_row(yh.data() + r * D, ah.data() + r * HV, bh.data() + r * HV, alh.data(), dth.data(), qe.data(), ke.data(), de.data(), be.data());
    ok &= std::memcmp(qe.data(), qg.data() + r * H * K, H * K * 4) == 0 && std::memcmp(ke.data(), kg.data() + r * H * K, H * K * 4) == 0;
    ok &= std::memcmp(de.data(), dg.data() + r * HV, HV * 4) == 0 && std::memcmp(be.data(), bg.data() + r * HV, HV * 4) == 0;
  }
  if (!dump_dir.empty() && B == 64 && T == 12) {
    dump("pre_y.bin", std::vector<std::uint16_t>(yh.begin(), yh.begin() + static_cast<std::ptrdiff_t>(rows * D)));
    dump("pre_a.bin", std::vector<std::uint16_t>(ah.begin(), ah.begin() + static_cast<std::ptrdiff_t>(rows * HV)));
    dump("pre_b.bin", std::vector<std::uint16_t>(bh.begin(), bh.begin() + static_cast<std::ptrdiff_t>(rows * HV)));
    dump("pre_alog.bin", alh), dump("pre_dtbias.bin", dth);
    dump("pre_q.bin", std::vector<float>(qg.begin(), qg.begin() + static_cast<std::ptrdiff_t>(rows * H * K)));
    dump("pre_k.bin", std::vector<float>(kg.begin(), kg.begin() + static_cast<std::ptrdiff_t>(rows * H * K)));
    dump("pre_decay.bin", std::vector<float>(dg.begin(), dg.begin() + static_cast<std::ptrdiff_t>(rows * HV)));
    dump("pre_beta.bin", std::vector<float>(bg.begin(), bg.begin() + static_cast<std::ptrdiff_t>(rows * HV)));
  }
  const auto t = bench::time_eager_and_graph(stream, static_cast<int>(n), [&] {
    for (std::size_t i = 0; i < n; ++i) launch_gdn_precompute(h, stream, sig(i));
  });
  if (record) emit("precompute", instance_name<C>(), "\"batch\": " + std::to_string(B) + ", \"t\": " + std::to_string(T), t, ok, bytes, 0);
  return t.graph_us;
}

// ---------------------------------------------------------------- recurrent core (K0, M16, replay)
/// random_lengths: replay lengths drawn from 0..T (else every request accepts T).
template <class C, class Pre = void> void bench_core(std::size_t B, bool random_lengths, const char* contract) {
  constexpr std::size_t T = C::tokens;
  constexpr bool replay = C::commit == gdn::state_commit::accepted_prefix;
  using elem = conditional_t<C::state_storage == gdn::state_storage::fp32, float, std::uint16_t>;
  constexpr dtype sd = C::state_storage == gdn::state_storage::fp32 ? dtype::f32 : dtype::bf16;
  const std::size_t rows = B * T;
  const double state_bytes = static_cast<double>(B) * ref::state_slot * sizeof(elem) * (C::commit == gdn::state_commit::none ? 1 : 2);
  const double token_bytes = rows * (2 * H * K * 4.0 + HV * V * 2.0 + 2 * HV * 4.0) + (replay ? 0 : rows * HV * V * 2.0) +
                             (replay ? B * ref::conv_slot * 2.0 * 2 : 0);
  const std::size_t n = sets_for(state_bytes + token_bytes), slots = n * B + 1;
  std::vector<float> qh, kh, dh, bh;
  std::vector<std::uint16_t> yh, gates_a, gates_b;
  const std::vector<float> al(HV, -1.0f), dt(HV, 0.2f);
  {
    // Token inputs: the host precompute of random conv outputs (normalised q / k, decays in (0, 1)).
    yh = bf16_values(rows * D, 7, 1.0f, false);
    gates_a = bf16_values(rows * HV, 8, 3.0f, false), gates_b = bf16_values(rows * HV, 9, 3.0f, false);
    qh.resize(rows * H * K), kh.resize(rows * H * K), dh.resize(rows * HV), bh.resize(rows * HV);
    for (std::size_t r = 0; r < rows; ++r)
      ref::precompute_row(yh.data() + r * D, gates_a.data() + r * HV, gates_b.data() + r * HV, al.data(), dt.data(), qh.data() + r * H * K, kh.data() + r * H * K,
                          dh.data() + r * HV, bh.data() + r * HV);
  }
  gpu_array<float> q(n * rows * H * K), k(n * rows * H * K), decay(n * rows * HV), beta(n * rows * HV);
  gpu_array<std::uint16_t> y(n * rows * D), out(replay ? 1 : n * rows * HV * V), win(replay ? n * rows * ref::conv_slot : 1), conv(replay ? slots * ref::conv_slot : 1);
  gpu_array<elem> pool(slots * ref::state_slot);
  gpu_array<std::int32_t> slot(n * B), acc(n * B);
  for (std::size_t i = 0; i < n; ++i) {
    auto up = [&](auto& dst, const auto& src) {
      drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst.data() + i * src.size()), src.data(), src.size() * sizeof(src[0])), "upload");
    };
    up(q, qh), up(k, kh), up(decay, dh), up(beta, bh), up(y, yh);
  }
  // Inputs raw (the precompute fused into the core): a, b and the parameters the host precompute used.
  gpu_array<std::uint16_t> ga(C::raw_inputs ? n * rows * HV : 1), gb(C::raw_inputs ? n * rows * HV : 1);
  gpu_array<float> gal(HV), gdt(HV);
  if constexpr (C::raw_inputs) {
    std::vector<std::uint16_t> an, bn;
    for (std::size_t i = 0; i < n; ++i) an.insert(an.end(), gates_a.begin(), gates_a.end()), bn.insert(bn.end(), gates_b.begin(), gates_b.end());
    ga.upload(an), gb.upload(bn), gal.upload(al), gdt.upload(dt);
    q.fill_bytes(0xCD), k.fill_bytes(0xCD), decay.fill_bytes(0xCD), beta.fill_bytes(0xCD);  // not read: the core forms them
  }
  std::mt19937 g(11);
  // The random pool, drawn once per state type and grown as needed (drawing it per record cost
  // seconds each): every record starts from the same values.
  static std::vector<elem> pool_values;
  if (pool_values.size() < slots * ref::state_slot) {
    std::mt19937 rg(11 + static_cast<unsigned>(pool_values.size() % 1000));
    std::uniform_real_distribution<float> u(-0.3f, 0.3f);
    const std::size_t from = pool_values.size();
    pool_values.resize(slots * ref::state_slot);
    for (std::size_t e = from; e < pool_values.size(); ++e) {
      if constexpr (sizeof(elem) == 4) pool_values[e] = u(rg);
      else pool_values[e] = ref::to_bf(u(rg));
    }
  }
  const std::vector<elem>& ph = pool_values;  // its first slots * state_slot values are this record's pool
  drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(pool.data()), ph.data(), slots * ref::state_slot * sizeof(elem)), "upload");
  std::vector<std::int32_t> sh(n * B), ah(n * B);
  for (std::size_t i = 0; i < sh.size(); ++i) sh[i] = static_cast<std::int32_t>(i), ah[i] = random_lengths ? static_cast<std::int32_t>(g() % (T + 1)) : static_cast<std::int32_t>(T);
  slot.upload(sh), acc.upload(ah);
  if (replay) win.fill_bytes(0x3C), conv.fill_bytes(0x3C);
  auto sig = [&](std::size_t i) {
    const std::size_t r0 = i * rows;
    if constexpr (C::raw_inputs)
      return gdn_recurrent_raw_call(device(), tensor(y, dtype::bf16, {i64(rows), i64(D)}, {}, r0 * D), tensor(ga, dtype::bf16, {i64(rows), i64(HV)}, {}, r0 * HV),
                                    tensor(gb, dtype::bf16, {i64(rows), i64(HV)}, {}, r0 * HV), tensor(gal, dtype::f32, {i64(HV)}), tensor(gdt, dtype::f32, {i64(HV)}),
                                    tensor(pool, sd, {i64(slots), i64(HV), i64(V), i64(K)}), tensor(slot, dtype::i32, {i64(B)}, {}, i * B),
                                    tensor(out, dtype::bf16, {i64(rows), i64(HV), i64(V)}, {}, r0 * HV * V));
    return gdn_recurrent_call(device(), tensor(q, dtype::f32, {i64(rows), i64(H), i64(K)}, {}, r0 * H * K), tensor(k, dtype::f32, {i64(rows), i64(H), i64(K)}, {}, r0 * H * K),
                              tensor(y, dtype::bf16, {i64(rows), i64(D)}, {}, r0 * D), tensor(decay, dtype::f32, {i64(rows), i64(HV)}, {}, r0 * HV),
                              tensor(beta, dtype::f32, {i64(rows), i64(HV)}, {}, r0 * HV), tensor(pool, sd, {i64(slots), i64(HV), i64(V), i64(K)}),
                              tensor(slot, dtype::i32, {i64(B)}, {}, i * B), replay ? tensor_arg{} : tensor(out, dtype::bf16, {i64(rows), i64(HV), i64(V)}, {}, r0 * HV * V),
                              replay ? tensor(acc, dtype::i32, {i64(B)}, {}, i * B) : tensor_arg{},
                              replay ? tensor(win, dtype::bf16, {i64(B), i64(T), i64(D), 3}, {}, r0 * ref::conv_slot) : tensor_arg{},
                              replay ? tensor(conv, dtype::bf16, {i64(slots), i64(D), 3}) : tensor_arg{});
  };
  const auto& h = handle_of<C>();
  bool ok = admitted(C::admits(sig(0)));
  launch_gdn_recurrent(h, stream, sig(0));
  drv().check(drv().cuStreamSynchronize(stream), "sync");
  const auto pg = download_prefix(pool, B * ref::state_slot);  // set 0's slots 0 .. B-1: the checked requests
  std::vector<std::uint16_t> og = replay ? std::vector<std::uint16_t>{} : out.download();
  const ref::token_inputs in{qh.data(), kh.data(), yh.data(), D, dh.data(), bh.data()};
  std::vector<std::uint16_t> oe(rows * HV * V);
  for (std::size_t b : {std::size_t{0}, B - 1})
    for (std::size_t hv = 0; hv < HV; hv += (b == 0 ? 1 : 7)) {
      std::vector<float> S = ref::widen(ph.data() + (b * HV + hv) * V * K, C::state_storage, V * K);
      const std::size_t steps = replay ? static_cast<std::size_t>(ah[b]) : T;
      ref::run_head(S.data(), in, b, T, hv, steps, replay ? nullptr : oe.data());
      std::vector<elem> se(V * K);
      if (C::commit == gdn::state_commit::none || steps == 0) std::copy_n(ph.data() + (b * HV + hv) * V * K, V * K, se.data());
      else ref::narrow(S, C::state_storage, se.data());
      ok &= std::memcmp(se.data(), pg.data() + (b * HV + hv) * V * K, V * K * sizeof(elem)) == 0;
      if (!replay)
        for (std::size_t t = 0; t < T; ++t) ok &= std::memcmp(oe.data() + ((b * T + t) * HV + hv) * V, og.data() + ((b * T + t) * HV + hv) * V, V * 2) == 0;
    }
  if (!dump_dir.empty() && ((std::string(contract) == "k0" && B == 64) || std::string(contract) == "m16" || (replay && B == 128 && !random_lengths) ||
                            (std::string(contract) == "decode" && B == 64 && C::staging == gdn::token_staging::per_token))) {
    const std::string p = std::string(contract) + (C::state_storage ? "_bf16" : "_fp32");
    dump(p + "_q.bin", qh), dump(p + "_k.bin", kh), dump(p + "_y.bin", yh), dump(p + "_decay.bin", dh), dump(p + "_beta.bin", bh);
    dump(p + "_state.bin", std::vector<elem>(ph.begin(), ph.begin() + static_cast<std::ptrdiff_t>(B * ref::state_slot)));
    dump(p + "_state_after.bin", std::vector<elem>(pg.begin(), pg.begin() + static_cast<std::ptrdiff_t>(B * ref::state_slot)));
    if (!replay) dump(p + "_out.bin", std::vector<std::uint16_t>(og.begin(), og.begin() + static_cast<std::ptrdiff_t>(rows * HV * V)));
    else dump(p + "_accepted.bin", std::vector<std::int32_t>(ah.begin(), ah.begin() + static_cast<std::ptrdiff_t>(B)));
  }
  double accepted_tokens = 0;
  for (std::size_t b = 0; b < B; ++b) accepted_tokens += replay ? ah[b] : static_cast<double>(T);
  const double fp32_ops = accepted_tokens * HV * V * K * (replay ? 3.0 : 4.0);
  const std::string shape = "\"batch\": " + std::to_string(B) + ", \"t\": " + std::to_string(T) + ", \"state_dtype\": \"" +
                            (C::state_storage ? "bf16" : "fp32") + "\", \"value_block\": " + std::to_string(C::value_block) +
                            ", \"staging\": \"" + (C::staging == 3 ? "block_and_state" : C::staging ? "block" : "per_token") + "\", \"waves\": " + std::to_string(C::waves_per_workgroup) +
                            ", \"columns_per_lane\": " + std::to_string(C::columns_per_lane) + ", \"prefetch_ahead\": " + std::to_string(C::prefetch_ahead) +
                            (replay ? std::string(", \"accepted\": \"") + (random_lengths ? "random 0..T" : "T") + "\"" : std::string());
  if constexpr (same_v<Pre, void>) {
    const auto t = bench::time_eager_and_graph(stream, static_cast<int>(n), [&] {
      for (std::size_t i = 0; i < n; ++i) launch_gdn_recurrent(h, stream, sig(i));
    });
    // Inputs raw: one launch does precompute + core (the combined M16 target's record).
    if constexpr (C::raw_inputs) emit("m16_precompute_core", instance_name<C>(), shape + ", \"inputs\": \"raw\"", t, ok, state_bytes + rows * (D * 2.0 + 2 * HV * 2.0) + rows * HV * V * 2.0, fp32_ops);
    else emit(contract, instance_name<C>(), shape, t, ok, state_bytes + token_bytes, fp32_ops);
  } else {
    // Precompute + core in one burst (M16 at B = 1: the combined target).
    gpu_array<std::uint16_t> ab(n * rows * HV * 2);
    gpu_array<float> al(HV), dt(HV);
    ab.fill_bytes(0x3E), al.fill_bytes(0), dt.fill_bytes(0);
    auto psig = [&](std::size_t i) {
      const std::size_t r0 = i * rows;
      return gdn_precompute_call(device(), tensor(y, dtype::bf16, {i64(rows), i64(D)}, {}, r0 * D), tensor(ab, dtype::bf16, {i64(rows), i64(HV)}, {}, 2 * r0 * HV),
                                 tensor(ab, dtype::bf16, {i64(rows), i64(HV)}, {}, (2 * r0 + rows) * HV), tensor(al, dtype::f32, {i64(HV)}),
                                 tensor(dt, dtype::f32, {i64(HV)}), tensor(q, dtype::f32, {i64(rows), i64(H), i64(K)}, {}, r0 * H * K),
                                 tensor(k, dtype::f32, {i64(rows), i64(H), i64(K)}, {}, r0 * H * K), tensor(decay, dtype::f32, {i64(rows), i64(HV)}, {}, r0 * HV),
                                 tensor(beta, dtype::f32, {i64(rows), i64(HV)}, {}, r0 * HV));
    };
    ok &= admitted(Pre::admits(psig(0)));
    const auto& hp = handle_of<Pre>();
    const auto t = bench::time_eager_and_graph(stream, static_cast<int>(n), [&] {
      for (std::size_t i = 0; i < n; ++i) launch_gdn_precompute(hp, stream, psig(i)), launch_gdn_recurrent(h, stream, sig(i));
    });
    emit("m16_precompute_core", instance_name<C>(), shape, t, ok, state_bytes + token_bytes + rows * D * 2.0, fp32_ops);
  }
}
}  // namespace

int main(int argc, char** argv) {
  bool conv_only = false;   // --conv-only: the conv records alone (B 64, 32, 16, 8, 4, 2, 1: the batch ranges of dispatch)
  bool cores_only = false;  // --cores-only: the K0 and replay records alone (K0 B 64, 16, 1; replay B 128, 64, 16, 1)
  bool decode_only = false;  // --decode-only: the decode core records alone
  bool lds_only = false;     // --lds-only: the state-through-LDS maps (Staging 3) beside the maps they would replace
  bool m16_only = false;     // --m16-only: M16 B 1 with the precompute fused in (Inputs raw), the two-launch chain, the core alone
  bool maps_only = false;  // --maps-only: the whole-head against the quarter-head replay (state through LDS), the shipped K0 B 64
  bool once = false;       // --once: --m16-only one round; --maps-only: the replay at B 128 (every request accepting T) and K0 only
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && std::string(argv[i]) == "--dump") dump_dir = argv[i + 1];
    conv_only |= std::string(argv[i]) == "--conv-only";
    cores_only |= std::string(argv[i]) == "--cores-only";
    decode_only |= std::string(argv[i]) == "--decode-only";
    lds_only |= std::string(argv[i]) == "--lds-only";
    m16_only |= std::string(argv[i]) == "--m16-only";
    maps_only |= std::string(argv[i]) == "--maps-only";
    once |= std::string(argv[i]) == "--once";
  }
  (void)device();
  drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  namespace cl = gdn::conv_layout;
  namespace cw = gdn::conv_writes;
  namespace ss = gdn::state_storage;
  namespace cd = catalog::gdn_detail;
  auto each = [](auto candidates, auto f) { boost::hana::for_each(candidates, [&](auto t) { f.template operator()<typename decltype(t)::type>(); }); };
  // The target shapes first (a run cut short keeps them): K0 B 64, conv B 64, M16, replay B 128.
  auto k0 = [&](std::size_t B) {
    bench_core<contracts::gdn_k0<sm90a, ss::fp32>>(B, false, "k0");
    bench_core<contracts::gdn_k0<sm90a, ss::bf16>>(B, false, "k0");
    bench_core<contracts::gdn_k0<sm90a, ss::fp32, 8, 1, 4>>(B, false, "k0");
    bench_core<contracts::gdn_k0<sm90a, ss::bf16, 8, 1, 4>>(B, false, "k0");
    each(cd::k0_candidates<ss::fp32>{}, [&]<class C>() { bench_core<C>(B, false, "k0"); });
    each(cd::k0_candidates<ss::bf16>{}, [&]<class C>() { bench_core<C>(B, false, "k0"); });
  };
  auto conv = [&](std::size_t B) {
    bench_conv<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, cw::windows>>(B);
    bench_conv<contracts::gdn_conv<sm90a, 64, 12, cl::channel_major, cw::final_state>>(B);
    each(cd::conv_candidates<cw::windows>{}, [&]<class C>() { if (C::channel_major || B == 64) bench_conv<C>(B); });
    each(cd::conv_candidates<cw::final_state>{}, [&]<class C>() { if (C::channel_major || B == 64) bench_conv<C>(B); });
    if (B == 64) {
      bench_conv<contracts::gdn_conv<sm90a, 64, 12, cl::tap_major, cw::windows>>(64);
      bench_conv<contracts::gdn_conv<sm90a, 64, 12, cl::tap_major, cw::final_state>>(64);
    }
  };
  // Every replay candidate at B 128; at the other batches the defaults and the prefetching whole-head map.
  auto replay = [&](std::size_t B, bool random) {
    bench_core<contracts::gdn_replay<sm90a, ss::bf16>>(B, random, "replay");
    bench_core<contracts::gdn_replay<sm90a, ss::fp32>>(B, random, "replay");
    bench_core<contracts::gdn_replay<sm90a, ss::bf16, 16, 1, 8, 2, 264>>(B, random, "replay");
    bench_core<contracts::gdn_replay<sm90a, ss::fp32, 16, 1, 8, 2, 264>>(B, random, "replay");
    if (B != 128) return;
    bench_core<contracts::gdn_replay<sm90a, ss::bf16, 8, 1, 4>>(B, random, "replay");
    each(cd::replay_candidates<ss::bf16>{}, [&]<class C>() { if (C::prefetch_ahead != 264) bench_core<C>(B, random, "replay"); });
    each(cd::replay_candidates<ss::fp32>{}, [&]<class C>() { if (C::prefetch_ahead != 264) bench_core<C>(B, random, "replay"); });
  };
  // The decode core (T 1, Commit final): the default map and every candidate, both storages.
  auto decode = [&](std::size_t B) {
    bench_core<contracts::gdn_decode_core<sm90a, ss::fp32>>(B, false, "decode");
    bench_core<contracts::gdn_decode_core<sm90a, ss::bf16>>(B, false, "decode");
    each(cd::decode_candidates<ss::fp32>{}, [&]<class C>() { bench_core<C>(B, false, "decode"); });
    each(cd::decode_candidates<ss::bf16>{}, [&]<class C>() { bench_core<C>(B, false, "decode"); });
  };
  using pre = contracts::gdn_precompute<sm90a, 1, 16>;
  auto m16 = [&]<class C>() { bench_core<C, pre>(1, false, "m16"), bench_core<C>(1, false, "m16"); };
  if (m16_only) {  // twice each, interleaved: the one-launch against the two-launch form in the same minute
    for (int round = 0; round < (once ? 1 : 2); ++round) {
      bench_core<contracts::gdn_m16<sm90a, ss::bf16, 8, 3, 4, 1, 1, gdn::core_inputs::raw>>(1, false, "m16");
      m16.template operator()<contracts::gdn_m16<sm90a, ss::bf16, 8, 3, 4, 1, 1>>();
      bench_core<contracts::gdn_m16<sm90a, ss::fp32, 8, 3, 4, 1, 1, gdn::core_inputs::raw>>(1, false, "m16");
      m16.template operator()<contracts::gdn_m16<sm90a, ss::fp32, 8, 3, 4, 1, 1>>();
    }
    return 0;
  }
  if (maps_only) {  // the replay with the state through LDS: whole heads (8 warps) against quarter heads (2); the shipped K0 at B 64
    auto maps = [&](std::size_t B, bool random) {
      bench_core<contracts::gdn_replay<sm90a, ss::bf16, 16, 3, 8, 2>>(B, random, "replay");
      bench_core<contracts::gdn_replay<sm90a, ss::bf16, 16, 3, 2, 2>>(B, random, "replay");
      bench_core<contracts::gdn_replay<sm90a, ss::fp32, 16, 3, 8, 2>>(B, random, "replay");
      bench_core<contracts::gdn_replay<sm90a, ss::fp32, 16, 3, 2, 2>>(B, random, "replay");
    };
    maps(128, false);
    bench_core<contracts::gdn_k0<sm90a, ss::fp32, 16, 3, 4, 2>>(64, false, "k0");
    bench_core<contracts::gdn_k0<sm90a, ss::bf16, 16, 3, 4, 2>>(64, false, "k0");
    if (once) return 0;
    maps(128, true);
    maps(1, false);
    return 0;
  }
  if (lds_only) {  // M16 B 1 (core, and precompute + core), replay B 128 / 64 / 16 / 1, K0 B 64, the decode default map B 64 / 128
    bench_core<contracts::gdn_m16<sm90a, ss::bf16, 8, 3, 4, 1, 1, gdn::core_inputs::raw>>(1, false, "m16");
    bench_core<contracts::gdn_m16<sm90a, ss::fp32, 8, 3, 4, 1, 1, gdn::core_inputs::raw>>(1, false, "m16");
    m16.template operator()<contracts::gdn_m16<sm90a, ss::bf16, 8, 3, 4, 1, 1>>();
    m16.template operator()<contracts::gdn_m16<sm90a, ss::bf16, 8, 1, 4, 1, 1>>();
    m16.template operator()<contracts::gdn_m16<sm90a, ss::fp32, 8, 3, 4, 1, 1>>();
    m16.template operator()<contracts::gdn_m16<sm90a, ss::fp32, 8, 1, 4, 1, 1>>();
    auto replays = [&](std::size_t B, bool random) {
      bench_core<contracts::gdn_replay<sm90a, ss::bf16, 16, 3, 8, 2, 264>>(B, random, "replay");
      bench_core<contracts::gdn_replay<sm90a, ss::bf16, 16, 3, 8, 2>>(B, random, "replay");
      bench_core<contracts::gdn_replay<sm90a, ss::bf16, 16, 1, 8, 2, 264>>(B, random, "replay");
      bench_core<contracts::gdn_replay<sm90a, ss::fp32, 16, 3, 8, 2, 264>>(B, random, "replay");
      bench_core<contracts::gdn_replay<sm90a, ss::fp32, 16, 3, 8, 2>>(B, random, "replay");
      bench_core<contracts::gdn_replay<sm90a, ss::fp32, 16, 1, 8, 2, 264>>(B, random, "replay");
    };
    replays(128, false);
    each(cd::k0_candidates<ss::fp32>{}, [&]<class C>() { bench_core<C>(64, false, "k0"); });
    each(cd::k0_candidates<ss::bf16>{}, [&]<class C>() { bench_core<C>(64, false, "k0"); });
    for (std::size_t B : {64, 16, 1}) replays(B, false);
    replays(128, true);
    for (std::size_t B : {64, 128}) {
      bench_core<contracts::gdn_decode_core<sm90a, ss::fp32>>(B, false, "decode");
      bench_core<contracts::gdn_decode_core<sm90a, ss::bf16>>(B, false, "decode");
    }
    return 0;
  }
  if (decode_only) {
    for (std::size_t B : {64, 128, 16, 1}) decode(B);
    return 0;
  }
  if (conv_only) {
    for (std::size_t B : {64, 32, 16, 8, 4, 2, 1}) conv(B);
    return 0;
  }
  if (cores_only) {
    k0(64);
    replay(128, false);
    replay(128, true);
    k0(16);
    k0(1);
    for (std::size_t B : {64, 16, 1}) replay(B, false);
    return 0;
  }
  k0(64);
  conv(64);
  for (std::size_t B : {64, 16, 1}) bench_precompute<contracts::gdn_precompute<sm90a, 128, 12>>(B, true);
  using pre16 = contracts::gdn_precompute<sm90a, 1, 16>;
  bench_precompute<pre16>(1, true);
  bench_core<contracts::gdn_m16<sm90a, ss::fp32>>(1, false, "m16");
  bench_core<contracts::gdn_m16<sm90a, ss::bf16>>(1, false, "m16");
  bench_core<contracts::gdn_m16<sm90a, ss::fp32>, pre16>(1, false, "m16");
  bench_core<contracts::gdn_m16<sm90a, ss::bf16>, pre16>(1, false, "m16");
  bench_core<contracts::gdn_m16<sm90a, ss::fp32, 8, 1, 4>>(1, false, "m16");
  bench_core<contracts::gdn_m16<sm90a, ss::fp32, 8, 1, 4>, pre16>(1, false, "m16");
  auto m16_candidate = [&]<class C>() {  // sm90a's candidates; a raw-input core is its own precompute + core
    if constexpr (same_v<typename C::target, sm90a>) {
      bench_core<C>(1, false, "m16");
      if constexpr (!C::raw_inputs) bench_core<C, pre16>(1, false, "m16");
    }
  };
  each(cd::m16_candidates<ss::fp32>{}, m16_candidate);
  each(cd::m16_candidates<ss::bf16>{}, m16_candidate);
  replay(128, false);
  replay(128, true);
  k0(16);
  k0(1);
  conv(16);
  conv(1);
  for (std::size_t B : {64, 16, 1}) replay(B, false);
  for (std::size_t B : {64, 16, 1}) replay(B, true);
  for (std::size_t B : {64, 128, 16, 1}) decode(B);
  return 0;
}
