// netra-bench-norm: times the sm90a normalization instances through netra's C++ launch path,
// eager (a burst of back-to-back calls) and graph-replayed (the same burst captured once), every
// call reading its own input set (sets together >= 3x L2), per docs/benchmarks.md. Dispatch
// as netra's: the decode instance for tokens <= 64, the prefill instance above. Each shape's first
// input set is checked bitwise against the oracle (tests/oracles/norm.hpp) in the same process.
// Prints one JSON object per (operation, fp8_out, tokens) on stdout; "diagnostic" lines time the
// alternative mappings of catalog::norm_alternatives and norm_gated_alternatives (and the prefill
// instances at 64 tokens). --gated-chain times only the gated decode: the served forms as records
// (with --dump), each candidate of catalog::norm_gated_chain, the served forms again, at 1, 16, 64 tokens;
// --prefill-chain the rms / add_rms FP8 forms beside catalog::norm_quarter_groups (the same way);
// --gated-prefill the gated prefill's two sm90a mappings at 512 .. 8192 tokens.
//
// --dump DIR also writes, for bench/norm.py's check of the torch peers, each shape's first input
// set and netra's outputs for it: <name>.{x,residual,gate,weight}.bin, <name>.{out,scales,r}.bin
// (raw little-endian arrays).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench/gpu_timing.hpp"
#include "netra/runtime/catalog/norm.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/norm.hpp"
#include "oracles/norm.hpp"

using namespace netra;
using netra::bench::drv;

namespace {

struct options {
  std::string objects = NETRA_CODE_OBJECT_DIR, dump;
  bool gated_chain = false, prefill_chain = false, gated_prefill = false;
  int l2 = 0;
  device_info device;
};

template <class T> void write_file(const std::string& path, const std::vector<T>& v) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  std::fwrite(v.data(), sizeof(T), v.size(), f);
  std::fclose(f);
}

/// Device memory for `sets` input sets of one shape, and the calls on each.
template <class C> struct shape_sets {
  i64 tokens, cols = C::cols, sets;
  std::size_t in_elems, out_bytes, scale_elems;
  device_buffer x, residual, gate, weight, out, scales;
  shape_sets(const device_info& d, i64 t, int l2)
      : tokens(t),
        sets(0),
        in_elems(static_cast<std::size_t>(t * C::cols)),
        out_bytes(static_cast<std::size_t>(t * C::cols) * (C::fp8_out ? 1 : 2)),
        scale_elems(static_cast<std::size_t>(t * C::cols / 128)),
        x(), residual(), gate(), weight(), out(), scales() {
    const std::size_t per_set = in_elems * 2 * (C::kind == norm_kind::rms ? 1 : 2) + out_bytes + scale_elems * 4;
    sets = std::max<i64>(2, std::min<i64>(4096, static_cast<i64>(3.0 * l2 / static_cast<double>(per_set)) + 1));
    x = device_buffer(d.api, in_elems * 2 * sets);
    if (C::kind == norm_kind::add_rms) residual = device_buffer(d.api, in_elems * 2 * sets);
    if (C::kind == norm_kind::gated) gate = device_buffer(d.api, in_elems * 2 * sets);
    weight = device_buffer(d.api, C::n * 2);
    out = device_buffer(d.api, out_bytes * sets);
    if (C::fp8_out) scales = device_buffer(d.api, scale_elems * 4 * sets);
  }
  u16* at(const device_buffer& b, i64 s) const { return static_cast<u16*>(b.data()) + in_elems * s; }
  template <class H> void call(const H& h, CUstream stream, i64 s, float eps) const {
    norm(h, stream, eps, tokens, at(x, s), cols, C::kind == norm_kind::add_rms ? at(residual, s) : nullptr, cols,
         C::kind == norm_kind::gated ? at(gate, s) : nullptr, cols, weight.data(), static_cast<u8*>(out.data()) + out_bytes * s,
         C::fp8_out ? static_cast<float*>(scales.data()) + scale_elems * s : nullptr);
  }
  std::size_t bytes() const {
    const std::size_t reads = in_elems * 2 * (C::kind == norm_kind::rms ? 1 : 2) + C::n * 2;
    const std::size_t writes = out_bytes + scale_elems * 4 + (C::kind == norm_kind::add_rms ? in_elems * 2 : 0);
    return reads + writes;
  }
};

void upload(const device_buffer& b, std::size_t offset_bytes, const void* host, std::size_t bytes) {
  drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(static_cast<char*>(b.data()) + offset_bytes), host, bytes), "HtoD");
}
template <class T> std::vector<T> download(const device_buffer& b, std::size_t offset_bytes, std::size_t count) {
  std::vector<T> v(count);
  drv().check(drv().cuMemcpyDtoH(v.data(), reinterpret_cast<CUdeviceptr>(static_cast<const char*>(b.data()) + offset_bytes), count * sizeof(T)), "DtoH");
  return v;
}

/// Every input set's random rows of one (operation, tokens, set count), and the oracle's outputs
/// for set 0 of one (operation, weight form, output format, tokens): the same for every mapping,
/// so generated once (the host's rows and oracle at 8192 tokens take seconds).
struct host_rows {
  std::vector<std::uint16_t> x, r, z;  // set-major, r and z only where the operation reads them
};
struct host_expected {
  std::vector<std::uint16_t> w, want_r;
  oracles::norm_outputs outputs;
};
const host_rows& rows_of(norm_kind kind, u32 n, u32 heads, i64 tokens, i64 sets) {
  static std::map<std::tuple<int, i64, i64>, std::unique_ptr<host_rows>> cache;
  auto& slot = cache[{static_cast<int>(kind), tokens, sets}];
  if (!slot) {
    slot = std::make_unique<host_rows>();
    const std::size_t elems = static_cast<std::size_t>(tokens * heads * n * sets);
    slot->x.resize(elems);
    if (kind == norm_kind::add_rms) slot->r.resize(elems);
    if (kind == norm_kind::gated) slot->z.resize(elems);
    for (i64 set = 0; set < sets; ++set)
      for (i64 row = 0; row < tokens * heads; ++row) {
        const std::uint64_t seed = static_cast<std::uint64_t>(set * 1000003 + row);
        const std::size_t at = static_cast<std::size_t>((set * tokens * heads + row) * n);
        oracles::fill_norm_row(slot->x.data() + at, static_cast<int>(n), oracles::norm_row::random, seed);
        if (kind == norm_kind::add_rms) oracles::fill_norm_row(slot->r.data() + at, static_cast<int>(n), oracles::norm_row::random, seed + 17);
        if (kind == norm_kind::gated) oracles::fill_norm_row(slot->z.data() + at, static_cast<int>(n), oracles::norm_row::random, seed + 29);
      }
  }
  return *slot;
}
using expected_key = std::tuple<int, int, bool, i64>;
std::map<expected_key, std::unique_ptr<host_expected>>& expected_cache() {  // one for every mapping
  static std::map<expected_key, std::unique_ptr<host_expected>> cache;
  return cache;
}
template <class C> const host_expected& expected_of(const host_rows& rows, i64 tokens, float eps) {
  auto& slot = expected_cache()[{static_cast<int>(C::kind), static_cast<int>(C::weight_form), C::fp8_out, tokens}];
  if (!slot) {
    slot = std::make_unique<host_expected>();
    slot->w.resize(C::n);
    oracles::fill_norm_weight(slot->w.data(), C::n, C::weight_form, 7);
    const std::size_t elems = static_cast<std::size_t>(tokens * C::cols);
    slot->want_r.assign(rows.r.begin(), rows.r.begin() + static_cast<std::ptrdiff_t>(rows.r.empty() ? 0 : elems));
    const oracles::norm_call call{.kind = C::kind, .weight_form = C::weight_form, .fp8_out = C::fp8_out, .eps = eps, .tokens = tokens,
                                  .x = rows.x.data(), .x_stride = C::cols, .residual = slot->want_r.data(), .residual_stride = C::cols,
                                  .gate = rows.z.data(), .gate_stride = C::cols, .weight = slot->w.data()};
    slot->outputs = oracles::norm_expected(call);
  }
  return *slot;
}

/// One (contract, tokens) record: every set's random rows uploaded, set 0 checked, timed.
template <class C> void bench_shape(const options& o, const handle<C>& h, CUstream stream, i64 tokens, const char* family, const char* name) {
  shape_sets<C> s(o.device, tokens, o.l2);
  const float eps = 1e-6f;
  const host_rows& rows = rows_of(C::kind, C::n, C::heads, tokens, s.sets);
  const host_expected& e = expected_of<C>(rows, tokens, eps);
  upload(s.weight, 0, e.w.data(), e.w.size() * 2);
  upload(s.x, 0, rows.x.data(), rows.x.size() * 2);
  if (C::kind == norm_kind::add_rms) upload(s.residual, 0, rows.r.data(), rows.r.size() * 2);
  if (C::kind == norm_kind::gated) upload(s.gate, 0, rows.z.data(), rows.z.size() * 2);
  // The check: set 0, one call, against the oracle (which updated its copy of r to r').
  s.call(h, stream, 0, eps);
  drv().check(drv().cuStreamSynchronize(stream), "sync");
  const std::vector<std::uint16_t>& want_r = e.want_r;
  const auto& want = e.outputs.y;
  const auto& want_q = e.outputs.q;
  const auto& want_s = e.outputs.scales;
  const auto got = download<std::uint8_t>(s.out, 0, s.out_bytes);
  bool correct = C::fp8_out ? got == want_q : std::memcmp(got.data(), want.data(), s.out_bytes) == 0;
  std::vector<float> got_s;
  std::vector<std::uint16_t> got_r;
  if (C::fp8_out) {
    got_s = download<float>(s.scales, 0, s.scale_elems);
    correct = correct && std::memcmp(got_s.data(), want_s.data(), s.scale_elems * 4) == 0;
  }
  if (C::kind == norm_kind::add_rms) {
    got_r = download<std::uint16_t>(s.residual, 0, s.in_elems);
    correct = correct && got_r == want_r;
  }
  if (!o.dump.empty() && std::string(family) == "norm") {
    const std::string base = o.dump + "/" + name + "-" + std::to_string(tokens);
    const auto set0 = [&](const std::vector<std::uint16_t>& v) { return std::vector<std::uint16_t>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(s.in_elems)); };
    write_file(base + ".x.bin", set0(rows.x));
    write_file(base + ".weight.bin", e.w);
    if (C::kind == norm_kind::add_rms) write_file(base + ".residual.bin", set0(rows.r)), write_file(base + ".r.bin", got_r);
    if (C::kind == norm_kind::gated) write_file(base + ".gate.bin", set0(rows.z));
    write_file(base + ".out.bin", got);
    if (C::fp8_out) write_file(base + ".scales.bin", got_s);
  }
  const int calls = static_cast<int>(s.sets);
  const bench::timing t = bench::time_eager_and_graph(stream, calls, [&] {
    for (i64 set = 0; set < s.sets; ++set) s.call(h, stream, set, eps);
  });
  std::printf("{\"family\": \"%s\", \"contract\": \"%s\", \"instance\": \"%s\", \"tokens\": %ld, \"fp8_out\": %s, \"input_sets\": %ld, "
              "\"bytes\": %zu, \"eager_us\": %.3f, \"graph_us\": %.3f, \"correct\": %s}\n",
              family, name, instance_name<C>().c_str(), static_cast<long>(tokens), C::fp8_out ? "true" : "false", static_cast<long>(s.sets),
              s.bytes(), t.eager_us, t.graph_us, correct ? "true" : "false");
  std::fflush(stdout);
}

template <class C> const handle<C>& handle_of(const options& o) {
  static const handle<C> h(o.objects + "/" + instance_name<C>() + ".cubin", o.device);
  return h;
}

/// One decode size through the dispatch rule: the gated FP8 norm's norm_decode16 up to 16 tokens,
/// else the decode instance.
template <u32 Kind, u32 Fp8> void bench_decode(const options& o, CUstream stream, i64 tokens, const char* family, const char* name) {
  using decode = contracts::norm_decode<sm90a, Kind, 0, Fp8>;
  using decode16 = contracts::norm_decode16<sm90a>;
  if constexpr (Kind == 2 && Fp8 == 1)
    if (tokens <= decode16::max_tokens) return bench_shape<decode16>(o, handle_of<decode16>(o), stream, tokens, family, name);
  bench_shape<decode>(o, handle_of<decode>(o), stream, tokens, family, name);
}

/// Every shape of one operation through the dispatch rule (decode <= 64 tokens, the middle tier
/// <= 512 where there is one, else prefill).
template <u32 Kind, u32 Fp8> void bench_operation(const options& o, CUstream stream, const char* name) {
  using prefill = contracts::norm_prefill<sm90a, Kind, 0, Fp8>;
  using mid = contracts::norm_mid<sm90a, Kind, 0, Fp8>;
  for (i64 tokens : {1, 16, 64}) bench_decode<Kind, Fp8>(o, stream, tokens, "norm", name);
  if constexpr (contracts::norm_has_mid<sm90a, Kind>) bench_shape<mid>(o, handle_of<mid>(o), stream, 512, "norm", name);
  else bench_shape<prefill>(o, handle_of<prefill>(o), stream, 512, "norm", name);
  bench_shape<prefill>(o, handle_of<prefill>(o), stream, 8192, "norm", name);
}

/// The prefill instances at a decode size (the warp32 rms / add_rms one is the decode mapping
/// with the run-time release point), and catalog::norm_alternatives at the sizes they compete for.
template <class C> void bench_alternative(const options& o, CUstream stream, std::initializer_list<i64> tokens_list) {
  const std::string name = std::string(norm_kind_name(C::kind)) + (C::fp8_out ? "_fp8" : "");
  for (i64 tokens : tokens_list) bench_shape<C>(o, handle_of<C>(o), stream, tokens, "diagnostic", name.c_str());
}
void bench_alternatives(const options& o, CUstream stream) {
  bench_alternative<contracts::norm_prefill<sm90a, 0, 0, 0>>(o, stream, {64});
  bench_alternative<contracts::norm_prefill<sm90a, 1, 0, 1>>(o, stream, {1, 16, 64});  // the decode mapping without Split
  bench_alternative<contracts::norm_prefill<sm90a, 2, 0, 0>>(o, stream, {64});
  bench_alternative<contracts::norm_prefill<sm90a, 2, 0, 1>>(o, stream, {64});
  boost::hana::for_each(catalog::norm_alternatives, [&](auto type) {
    using C = typename decltype(type)::type;
    bench_alternative<C>(o, stream, {512});  // at 8192 tokens measured slower at cde6c96 and e13c138 (lab/norm)
  });
}
void bench_gated_alternatives(const options& o, CUstream stream) {  // 16 threads a head up to 8192 tokens
  boost::hana::for_each(catalog::norm_gated_alternatives, [&](auto type) { bench_alternative<typename decltype(type)::type>(o, stream, {512, 8192}); });
}

/// The served gated decode as records (family "norm", dumped with --dump for bench/norm.py's
/// peers), then every sm90a candidate of catalog::norm_gated_chain, then the served forms again
/// (diagnostics: the drift over the run), at 1, 16 and 64 tokens, in one process.
void bench_gated_chain(const options& o, CUstream stream) {
  for (i64 tokens : {1, 16, 64}) bench_decode<2, 1>(o, stream, tokens, "norm", "gated_rms_norm_fp8");
  for (i64 tokens : {1, 16, 64}) bench_decode<2, 0>(o, stream, tokens, "norm", "gated_rms_norm");
  boost::hana::for_each(catalog::norm_gated_chain, [&](auto type) {
    using C = typename decltype(type)::type;
    if constexpr (same_v<typename C::target, sm90a>) bench_alternative<C>(o, stream, {1, 16, 64});
  });
  for (i64 tokens : {1, 16, 64}) bench_decode<2, 1>(o, stream, tokens, "diagnostic", "gated_rms_norm_fp8");
  for (i64 tokens : {1, 16, 64}) bench_decode<2, 0>(o, stream, tokens, "diagnostic", "gated_rms_norm");
}

}  // namespace

/// The rms / add_rms FP8 forms served (Chain 0) at 1, 16, 64 (rms), 512 and 8192 tokens, every sm90a
/// candidate of catalog::norm_quarter_groups at the sizes its MaxTokens serves, the served forms again.
void bench_prefill_chain(const options& o, CUstream stream) {
  const auto served = [&] {
    bench_alternative<contracts::norm_decode<sm90a, 0, 0, 1>>(o, stream, {1, 16, 64});
    bench_alternative<contracts::norm_prefill<sm90a, 0, 0, 1>>(o, stream, {512, 8192});
    bench_alternative<contracts::norm_prefill<sm90a, 1, 0, 1>>(o, stream, {512, 8192});
  };
  served();
  boost::hana::for_each(catalog::norm_quarter_groups, [&](auto type) {
    using C = typename decltype(type)::type;
    if constexpr (same_v<typename C::target, sm90a>) {
      if constexpr (C::max_tokens <= 64) bench_alternative<C>(o, stream, {1, 16, 64});
      else bench_alternative<C>(o, stream, {512, 8192});
    }
  });
  served();
}

/// The sm90a gated prefill mappings, 16 heads per block over 16 threads each (1-16-0) and over 8
/// (SlicesPerThread 2), BF16 and FP8, at 512 .. 8192 tokens, in two alternating rounds (the
/// token count from which dispatch takes the second).
void bench_gated_prefill(const options& o, CUstream stream) {
  for (int round = 0; round < 2; ++round) {
    bench_alternative<contracts::gated_rms_norm<sm90a, 0, 8192, 16>>(o, stream, {512, 1024, 2048, 4096, 8192});
    bench_alternative<contracts::gated_rms_norm<sm90a, 0, 8192, 16, 0, 2>>(o, stream, {512, 1024, 2048, 4096, 8192});
    bench_alternative<contracts::gated_rms_norm<sm90a, 1, 8192, 16>>(o, stream, {512, 1024, 2048, 4096, 8192});
    bench_alternative<contracts::gated_rms_norm<sm90a, 1, 8192, 16, 0, 2>>(o, stream, {512, 1024, 2048, 4096, 8192});
  }
}

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dump" && i + 1 < argc) o.dump = argv[++i];
    else if (a == "--gated-chain") o.gated_chain = true;
    else if (a == "--prefill-chain") o.prefill_chain = true;
    else if (a == "--gated-prefill") o.gated_prefill = true;
    else o.objects = a;
  }
  o.device = current_cuda_device();
  drv().check(drv().cuDeviceGetAttribute(&o.l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, o.device.ordinal), "L2 size");
  CUstream stream;
  drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  if (o.gated_chain || o.prefill_chain || o.gated_prefill) {  // only the candidates beside the served forms
    if (o.gated_chain) bench_gated_chain(o, stream);
    if (o.prefill_chain) bench_prefill_chain(o, stream);
    if (o.gated_prefill) bench_gated_prefill(o, stream);
    drv().cuStreamDestroy(stream);
    return 0;
  }
  // The order of bench/norm.py (a run cut short by its time limit keeps the first).
  bench_operation<2, 1>(o, stream, "gated_rms_norm_fp8");
  bench_operation<2, 0>(o, stream, "gated_rms_norm");
  bench_gated_alternatives(o, stream);
  bench_operation<1, 1>(o, stream, "add_rms_norm_fp8");
  bench_operation<1, 0>(o, stream, "add_rms_norm");
  bench_operation<0, 1>(o, stream, "rms_norm_fp8");
  bench_operation<0, 0>(o, stream, "rms_norm");
  bench_alternatives(o, stream);
  drv().cuStreamDestroy(stream);
  return 0;
}
