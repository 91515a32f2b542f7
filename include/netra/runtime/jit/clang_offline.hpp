// netra/runtime/jit/clang_offline.hpp — clang-22 as an offline compiler for AMD targets when no
// hipRTC can build them (gfx950 on machines without ROCm 7): writes the instantiation source to
// a private temporary directory, runs clang with the flags the build uses for code objects
// (cmake/NetraCodeObjects.cmake), and reads the code object back.
//
// The compiler is $NETRA_CLANG, else the clang the build found (NETRA_DEFAULT_CLANG, set by
// CMake for libnetra and the tests), else clang-22 on PATH. It runs through posix_spawnp with
// an argument vector, never a shell.
#pragma once
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "netra/runtime/error.hpp"

extern char** environ;

namespace netra::jit {

#ifndef NETRA_DEFAULT_CLANG
#define NETRA_DEFAULT_CLANG "clang-22"
#endif

inline std::string clang_path() {
  if (const char* c = std::getenv("NETRA_CLANG"); c && *c) return c;
  return NETRA_DEFAULT_CLANG;
}

/// What running a program produced.
struct process_result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

/// Runs `argv` (argv[0] looked up on PATH) with stdout and stderr captured to `capture_file`.
/// Throws status::unavailable when the program cannot be started.
inline process_result run_program(const std::vector<std::string>& argv, const std::filesystem::path& capture_file) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, capture_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int started = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0) throw error(status::unavailable, "netra: cannot run " + argv[0] + ": " + std::strerror(started));
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  process_result r;
  r.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  std::ifstream f(capture_file, std::ios::binary);
  std::ostringstream text;
  text << f.rdbuf();
  r.output = text.str();
  return r;
}

/// A private directory under the system temporary directory, removed on destruction.
class scratch_directory {
 public:
  scratch_directory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "netra-jit-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw error(status::unavailable, std::string("netra: cannot create a JIT scratch directory: ") + std::strerror(errno));
    path_ = pattern;
  }
  ~scratch_directory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  scratch_directory(const scratch_directory&) = delete;
  scratch_directory& operator=(const scratch_directory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// "clang-22: Debian clang version 22.0.0 (...)": part of every cache key. Asked once per path;
/// throws status::unavailable when the compiler cannot be run.
inline std::string clang_identity(const std::string& clang) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard lock(mutex);
  if (const auto it = known.find(clang); it != known.end()) return it->second;
  scratch_directory scratch;
  const auto r = run_program({clang, "--version"}, scratch.path() / "version.txt");
  if (r.exit_code != 0) throw error(status::unavailable, "netra: " + clang + " --version failed: " + r.output);
  const std::string identity = clang + ": " + r.output.substr(0, r.output.find('\n'));
  known.emplace(clang, identity);
  return identity;
}

/// The flags netra compiles an AMD target with through clang (besides -I<include root>, the
/// input and the output): the build's code-object flags, plus -fuse-cuid=none so that the
/// object does not depend on the scratch file's path (clang names a symbol after it otherwise).
inline std::vector<std::string> clang_options(const char* target) {
  return {"-x", "hip", std::string("--offload-arch=") + target, "--cuda-device-only", "-nogpulib", "-nogpuinc",
          "-O3", "-std=c++20", "--no-gpu-bundle-output", "-fuse-cuid=none"};
}

/// Compiles `source` with `clang`. Throws status::compile_error with clang's output when it fails.
inline std::vector<std::byte> clang_compile(const std::string& clang, const std::string& source, const std::string& name,
                                            const std::vector<std::string>& options) {
  scratch_directory scratch;
  const auto input = scratch.path() / (name + ".hip");
  const auto output = scratch.path() / (name + ".hsaco");
  std::ofstream(input, std::ios::binary) << source;
  std::vector<std::string> argv{clang};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {input.string(), "-o", output.string()});
  const auto r = run_program(argv, scratch.path() / "log.txt");
  if (r.exit_code != 0) throw error(status::compile_error, "netra: " + clang + " failed to compile " + name + ":\n" + r.output);
  std::ifstream f(output, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw error(status::compile_error, "netra: " + clang + " produced no code object for " + name);
  std::vector<std::byte> code(bytes.size());
  std::memcpy(code.data(), bytes.data(), bytes.size());
  return code;
}

}  // namespace netra::jit
