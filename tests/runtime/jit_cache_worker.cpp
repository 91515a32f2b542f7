// jit_cache_worker: one of several processes that share a JIT cache at the same time, started
// by test_jit_cache_concurrency.
//   jit_cache_worker compile DIR          JIT-compile argmax<gfx950, 32768, 16, 8> (clang-22) into
//                                         the cache DIR; prints "<from_cache> <sha256 of object>"
//   jit_cache_worker hammer DIR N SEED    N times: store one of three large entries, then load a
//                                         random one; exits 1 on a corrupted read, 2 on a wrong
//                                         payload
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "netra/kernels/all.hpp"
#include "netra/runtime/jit/compile.hpp"

using namespace netra;

namespace {
/// Entry i of the hammer: a key and ~100-170 KB of bytes that depend on i only.
std::vector<std::byte> hammer_payload(int i) {
  std::vector<std::byte> bytes(100000 + 37777 * static_cast<std::size_t>(i));
  std::mt19937_64 rng(static_cast<std::uint64_t>(i) + 1);
  for (auto& b : bytes) b = static_cast<std::byte>(rng());
  return bytes;
}
jit::digest hammer_key(int i) { return jit::sha256().update("hammer key " + std::to_string(i)).finish(); }
}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "compile") {
    jit::options o;
    o.cache_root = argv[2];
    o.include_root = NETRA_TEST_INCLUDE_DIR;
    o.compiler = jit::compiler_kind::clang;
    o.log = [](const std::string&) {};
    try {
      const auto r = jit::compile<contracts::argmax<gfx950, 32768, 16, 8>>(o);
      std::printf("%d %s\n", r.from_cache ? 1 : 0, jit::to_hex(jit::sha256_of(r.code_object)).c_str());
      return 0;
    } catch (const error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 3;
    }
  }
  if (argc >= 5 && std::string(argv[1]) == "hammer") {
    const jit::disk_cache cache(argv[2]);
    const int iterations = std::atoi(argv[3]);
    std::mt19937 rng(static_cast<unsigned>(std::atoi(argv[4])));
    const std::vector<std::byte> payloads[3] = {hammer_payload(0), hammer_payload(1), hammer_payload(2)};
    for (int it = 0; it < iterations; ++it) {
      const int w = static_cast<int>(rng() % 3);
      cache.store("hammer", hammer_key(w), payloads[w]);
      const int r = static_cast<int>(rng() % 3);
      const auto got = cache.load("hammer", hammer_key(r));
      if (got.state == jit::entry_state::corrupted) {
        std::fprintf(stderr, "iteration %d: corrupted read: %s\n", it, got.problem.c_str());
        return 1;
      }
      if (got.state == jit::entry_state::valid && got.payload != payloads[r]) {
        std::fprintf(stderr, "iteration %d: a valid entry with the wrong payload\n", it);
        return 2;
      }
    }
    return 0;
  }
  std::fprintf(stderr, "usage: jit_cache_worker compile DIR | hammer DIR N SEED\n");
  return 64;
}
