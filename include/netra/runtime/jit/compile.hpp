// netra/runtime/jit/compile.hpp — startup JIT of one contract instance that was not compiled at
// build time.
//
//   1. generate the instantiation source from the contract (instance.hpp);
//   2. collect the netra headers it includes, transitively, with their contents;
//   3. choose the compiler: NVRTC for sm90a; for AMD targets hipRTC when the loaded one can build
//      the target, else clang-22 offline (or what jit::options / $NETRA_JIT_COMPILER ask for);
//   4. key = SHA-256 of (source, every header's name and content, compiler identity, options,
//      target); a valid cache entry for the key is returned as is;
//   5. otherwise log a line, compile, log the wall time, check that the object is for the target
//      and defines every kernel symbol, and store it in the cache (atomically, and only if no
//      other process stored it meanwhile). Without a cache directory (no NETRA_CACHE_DIR,
//      XDG_CACHE_HOME or HOME) or a writable one, the compilation still succeeds, uncached.
// The include root is not part of the key (the headers' contents are), so a source tree and an
// install tree with the same headers share entries.
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "netra/runtime/code_object.hpp"
#include "netra/runtime/elf.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/jit/clang_offline.hpp"
#include "netra/runtime/jit/disk_cache.hpp"
#include "netra/runtime/jit/header_closure.hpp"
#include "netra/runtime/jit/hiprtc.hpp"
#include "netra/runtime/jit/nvrtc.hpp"
#include "netra/runtime/jit/sha256.hpp"

namespace netra::jit {

enum class compiler_kind { nvrtc, hiprtc, clang };

constexpr const char* compiler_name(compiler_kind k) {
  switch (k) {
    case compiler_kind::nvrtc: return "nvrtc";
    case compiler_kind::hiprtc: return "hiprtc";
    case compiler_kind::clang: return "clang";
  }
  return "unknown";
}

/// "nvrtc" / "hiprtc" / "clang"; throws status::invalid_argument for anything else.
inline compiler_kind parse_compiler(std::string_view name) {
  for (const auto k : {compiler_kind::nvrtc, compiler_kind::hiprtc, compiler_kind::clang})
    if (name == compiler_name(k)) return k;
  throw error(status::invalid_argument, "netra: unknown JIT compiler '" + std::string(name) + "' (nvrtc, hiprtc or clang)");
}

using log_sink = std::function<void(const std::string&)>;
inline void log_to_stderr(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

struct options {
  std::filesystem::path cache_root;       // empty: default_cache_root()
  std::filesystem::path include_root;     // empty: default_include_root()
  std::optional<compiler_kind> compiler;  // empty: $NETRA_JIT_COMPILER, else chosen by target
  log_sink log = log_to_stderr;
};

/// One instance to compile, spelled without its C++ type (netra-prebuild builds these from text).
struct request {
  std::string family;    // "argmax": the instantiation header netra/instantiate/<family>.hpp
  std::string spelling;  // "netra::contracts::argmax<netra::sm90a, 32768, 16, 8>"
  std::string instance;  // "argmax-sm90a-32768-16-8"
  target_id target = target_id::sm90a;
  std::vector<std::string> symbols;  // kernel entry points the object must define
};

template <class Contract> request request_for() {
  const auto& symbols = kernel_symbols<typename kernels::kernels_of<Contract>::type>::value;
  return request{Contract::family, contract_spelling<Contract>(), instance_name<Contract>(), Contract::target::id,
                 std::vector<std::string>(symbols.begin(), symbols.end())};
}

struct result {
  std::vector<std::byte> code_object;
  bool from_cache = false;
  std::filesystem::path entry;  // the cache entry (empty when the cache could not be written)
  std::string compiler;         // the compiler's identity
  double compile_seconds = 0;   // wall time of the compilation (0 when from the cache)
  digest key{};
};

/// The compiler a compilation uses, as the cache key sees it.
struct compiler_choice {
  compiler_kind kind = compiler_kind::nvrtc;
  std::string identity;
  std::vector<std::string> options;  // without -I<include root>
};

/// Whether a hipRTC of ROCm `rocm_major` compiles `t` (gfx90a since ROCm 5, gfx942 since 6,
/// gfx950 and gfx1151 since 7).
constexpr bool hiprtc_builds(target_id t, int rocm_major) {
  switch (t) {
    case target_id::gfx90a: return rocm_major >= 5;
    case target_id::gfx942: return rocm_major >= 6;
    case target_id::gfx950:
    case target_id::gfx1151: return rocm_major >= 7;
    case target_id::sm90a: return false;
  }
  return false;
}

inline compiler_choice choose_compiler(target_id target, std::optional<compiler_kind> preferred) {
  if (!preferred)
    if (const char* env = std::getenv("NETRA_JIT_COMPILER"); env && *env) preferred = parse_compiler(env);
  const bool nvidia = target == target_id::sm90a;
  if (preferred && (*preferred == compiler_kind::nvrtc) != nvidia)
    throw error(status::invalid_argument, std::string("netra: the ") + compiler_name(*preferred) + " JIT compiler cannot build " +
                                              target_name(target));
  if (nvidia) return {compiler_kind::nvrtc, nvrtc_library::get().identity, nvrtc_options()};
  std::string hiprtc_reason;
  if (!preferred || *preferred == compiler_kind::hiprtc) {
    try {
      const auto& lib = hiprtc_library::get();
      if (hiprtc_builds(target, lib.rocm_major)) return {compiler_kind::hiprtc, lib.identity, hiprtc_options(target_name(target))};
      hiprtc_reason = "the hipRTC of ROCm " + std::to_string(lib.rocm_major) + " cannot build " + target_name(target);
    } catch (const error& e) {
      hiprtc_reason = e.what();
    }
    if (preferred) throw error(status::unavailable, hiprtc_reason);
  }
  try {
    return {compiler_kind::clang, clang_identity(clang_path()), clang_options(target_name(target))};
  } catch (const error& e) {
    throw error(status::unavailable, std::string("netra: no JIT compiler for ") + target_name(target) + ": " +
                                         (hiprtc_reason.empty() ? "" : hiprtc_reason + "; ") + e.what());
  }
}

/// The cache key: every input of the compilation, each field length-prefixed.
inline digest cache_key(const request& r, const compiler_choice& c, const std::string& source, const std::vector<header>& headers) {
  sha256 h;
  auto field = [&](std::string_view text) {
    h.update(std::to_string(text.size()));
    h.update(":");
    h.update(text);
  };
  field("netra-jit-v1");
  field(target_name(r.target));
  field(compiler_name(c.kind));
  field(c.identity);
  for (const auto& o : c.options) field(o);
  field(source);
  for (const auto& hd : headers) {
    field(hd.name);
    field(hd.text);
  }
  return h.finish();
}

/// Empty when `object` is a code object for `r.target` defining every symbol of `r`; else why not.
inline std::string check_code_object(std::span<const std::byte> object, const request& r) {
  const auto built_for = code_object_target(object);
  if (!built_for) return "the output is not a code object netra recognises";
  if (*built_for != r.target) return std::string("the output is for ") + target_name(*built_for) + ", not " + target_name(r.target);
  const auto image = elf::image::parse(object);
  for (const auto& symbol : r.symbols) {
    const auto s = image->find_symbol(symbol);
    if (!s || s->type != 2 /*STT_FUNC*/) return "the output does not define kernel " + symbol;
  }
  return {};
}

inline result compile(const request& r, const options& o = {}) {
  const log_sink& log = o.log ? o.log : log_sink(log_to_stderr);
  const std::string source = instantiation_source(r.family, r.spelling);
  const auto include_root = o.include_root.empty() ? default_include_root() : o.include_root;
  const auto headers = header_closure(source, include_root);
  const compiler_choice compiler = choose_compiler(r.target, o.compiler);
  std::optional<disk_cache> cache;
  std::string uncached;  // why there is no cache, when there is none
  try {
    cache.emplace(o.cache_root.empty() ? default_cache_root() : o.cache_root);
  } catch (const error& e) {
    uncached = e.what();
  }

  result out;
  out.compiler = compiler.identity;
  out.key = cache_key(r, compiler, source, headers);
  if (cache) {
    const entry_lookup cached = cache->load(r.instance, out.key);
    if (cached.state == entry_state::valid && check_code_object(cached.payload, r).empty()) {
      out.code_object = cached.payload;
      out.from_cache = true;
      out.entry = cache->entry_path(r.instance, out.key);
      return out;
    }
    if (cached.state == entry_state::corrupted)
      log("netra: JIT cache entry " + cache->entry_path(r.instance, out.key).string() + " is corrupted (" + cached.problem + "); rebuilding");
  }

  std::vector<std::string> invocation = compiler.options;
  invocation.push_back("-I" + include_root.string());
  log("netra: JIT compiling " + r.instance + " (" + r.spelling + ") for " + target_name(r.target) + " with " + compiler.identity);
  const auto start = std::chrono::steady_clock::now();
  switch (compiler.kind) {
    case compiler_kind::nvrtc: out.code_object = nvrtc_compile(source, r.instance + ".cu", invocation); break;
    case compiler_kind::hiprtc: out.code_object = hiprtc_compile(source, r.instance + ".hip", invocation); break;
    case compiler_kind::clang: out.code_object = clang_compile(clang_path(), source, r.instance, invocation); break;
  }
  out.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (const std::string problem = check_code_object(out.code_object, r); !problem.empty())
    throw error(status::compile_error, "netra: JIT of " + r.instance + " with " + compiler.identity + ": " + problem);

  std::string where = ", not cached: " + uncached;
  if (cache) {
    try {
      if (cache->load(r.instance, out.key).state == entry_state::valid) out.entry = cache->entry_path(r.instance, out.key);
      else out.entry = cache->store(r.instance, out.key, out.code_object);
      where = ", cached at " + out.entry.string();
    } catch (const error& e) {
      where = ", not cached: " + std::string(e.what());
    }
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", out.compile_seconds);
  log("netra: JIT compiled " + r.instance + " in " + seconds + " s (" + std::to_string(out.code_object.size()) + " bytes)" + where);
  return out;
}

template <class Contract> result compile(const options& o = {}) { return compile(request_for<Contract>(), o); }

}  // namespace netra::jit
