// netra-prebuild fills the cache that handles read at startup: a spelled contract is compiled
// once and then found; a family prebuilds the JIT tactics of its dispatch list under the very
// keys the runtime computes (and reports the embedded ones); bad items fail with a reason.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "netra/kernels/all.hpp"
#include "netra/runtime/jit/compile.hpp"
#include "netra/runtime/tactics/sampling.hpp"

using namespace netra;

namespace {
jit::process_result prebuild(const std::vector<std::string>& args, const jit::scratch_directory& scratch) {
  std::vector<std::string> argv{NETRA_PREBUILD};
  argv.insert(argv.end(), args.begin(), args.end());
  return jit::run_program(argv, scratch.path() / "output.txt");
}
bool have(auto&& probe) {
  try {
    probe();
    return true;
  } catch (const error& e) {
    MESSAGE("SKIPPED: ", std::string(e.what()));
    return false;
  }
}
}  // namespace

TEST_CASE("a spelled contract is compiled once, then found in the cache") {
  if (!have([] { jit::clang_identity(jit::clang_path()); })) return;
  jit::scratch_directory cache, scratch;
  const std::string spelling = "netra::contracts::argmax<netra::gfx950,16384,8,  4>";
  auto r = prebuild({"--cache-dir", cache.path().string(), spelling}, scratch);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("netra-prebuild: argmax-gfx950-16384-8-4: compiled in") != std::string::npos);
  CHECK(r.output.find("netra: JIT compiling argmax-gfx950-16384-8-4 (netra::contracts::argmax<netra::gfx950, 16384, 8, 4>)") !=
        std::string::npos);
  r = prebuild({"--cache-dir", cache.path().string(), spelling}, scratch);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("argmax-gfx950-16384-8-4: already cached at") != std::string::npos);
}

TEST_CASE("a family prebuilds its JIT tactics under the keys the runtime uses") {
  if (!have([] { jit::nvrtc_library::get(); })) return;
  jit::scratch_directory cache, scratch;
  const auto r = prebuild({"--cache-dir", cache.path().string(), "--target", "sm90a", "argmax"}, scratch);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  using jit_tactic = contracts::argmax<sm90a, 32768, 16, 8>;
  CHECK(r.output.find(instance_name<jit_tactic>() + ": compiled in") != std::string::npos);
  CHECK(r.output.find(instance_name<tactics::argmax_served<sm90a>>() + ": embedded in libnetra") != std::string::npos);
  CHECK(r.output.find("gfx950") == std::string::npos);  // --target sm90a only

  jit::options o;
  o.cache_root = cache.path();
  o.include_root = NETRA_TEST_INCLUDE_DIR;
  CHECK(jit::compile<jit_tactic>(o).from_cache);
}

TEST_CASE("bad items fail with the reason and a non-zero exit") {
  jit::scratch_directory cache, scratch;
  const auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--cache-dir", cache.path().string()});
    return prebuild(args, scratch);
  };
  auto r = run({"softmax"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("no dispatch list has a tactic of family 'softmax'") != std::string::npos);
  r = run({"netra::contracts::nothing<netra::sm90a, 4>"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("no netra contract template is named 'netra::contracts::nothing'") != std::string::npos);
  r = run({"netra::contracts::argmax<netra::sm99, 4, 2, 1>"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("'netra::sm99' is not a netra target") != std::string::npos);
  r = run({"--target", "sm99", "argmax"});
  CHECK(r.exit_code == 2);
  r = run({});
  CHECK(r.exit_code == 2);
  if (!have([] { jit::nvrtc_library::get(); })) return;
  r = run({"netra::contracts::argmax<netra::sm90a, 32770, 16, 8>"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("compile_error") != std::string::npos);
  CHECK(r.output.find("field N (row length) must be a multiple of 4") != std::string::npos);
}
