// Several real processes filling one JIT cache at once: eight hammer the same three entries with
// atomic writes while reading them back (no read may ever see a partial or corrupted entry),
// and four JIT-compile the same new shape into an empty cache (all succeed with the same code
// object, one entry remains, no temporary file is left behind, and the next run hits it).
#include <doctest/doctest.h>

#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "netra/runtime/jit/compile.hpp"

extern char** environ;
using namespace netra;
namespace fs = std::filesystem;

namespace {

struct worker {
  pid_t pid = 0;
  fs::path output;
};

/// Starts jit_cache_worker with `args`, its stdout and stderr going to `output`.
worker start(const std::vector<std::string>& args, const fs::path& output) {
  std::vector<std::string> argv{NETRA_JIT_CACHE_WORKER};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (auto& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  worker w{0, output};
  REQUIRE(posix_spawn(&w.pid, raw[0], &actions, nullptr, raw.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  return w;
}

int wait_for(const worker& w) {
  int status = 0;
  while (waitpid(w.pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string text_of(const fs::path& p) {
  std::ifstream f(p);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

}  // namespace

TEST_CASE("eight processes storing and loading the same entries never read a partial one") {
  jit::scratch_directory cache, logs;
  std::vector<worker> workers;
  for (int i = 0; i < 8; ++i)
    workers.push_back(start({"hammer", cache.path().string(), "150", std::to_string(1000 + i)}, logs.path() / std::to_string(i)));
  for (const auto& w : workers) {
    const int code = wait_for(w);
    INFO(text_of(w.output));
    CHECK(code == 0);
  }
  const auto entries = files_in(cache.path() / "jit-v1");
  CHECK(entries.size() == 3);  // three keys, no temporary files left over
  for (const auto& e : entries) CHECK(e.string().find(".tmp.") == std::string::npos);
}

TEST_CASE("four processes JIT-compiling the same new shape into one empty cache") {
  try {
    jit::clang_identity(jit::clang_path());
  } catch (const error& e) {
    MESSAGE("SKIPPED: ", std::string(e.what()));
    return;
  }
  jit::scratch_directory cache, logs;
  std::vector<worker> workers;
  for (int i = 0; i < 4; ++i) workers.push_back(start({"compile", cache.path().string()}, logs.path() / std::to_string(i)));
  std::set<std::string> objects;
  for (const auto& w : workers) {
    const int code = wait_for(w);
    const std::string out = text_of(w.output);
    INFO(out);
    REQUIRE(code == 0);
    objects.insert(out.substr(2));
  }
  CHECK(objects.size() == 1);  // the same code object, whoever compiled or loaded it
  const auto entries = files_in(cache.path() / "jit-v1");
  REQUIRE(entries.size() == 1);
  CHECK(entries.front().string().find(".tmp.") == std::string::npos);

  const worker again = start({"compile", cache.path().string()}, logs.path() / "again");
  REQUIRE(wait_for(again) == 0);
  const std::string out = text_of(again.output);
  CHECK(out.starts_with("1 "));  // served from the cache
  CHECK(objects.contains(out.substr(2)));
}
