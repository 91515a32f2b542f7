// netra/runtime/jit/header_closure.hpp — the netra headers a generated instantiation source
// includes, transitively, with their contents: the JIT cache key covers every one of them, so an
// edited device header can never be served from a stale cache entry.
//
// Every `#include "netra/..."` and `#include <netra/...>` line counts, whatever #if surrounds
// it (a superset of what one compiler pass reads). Device headers include nothing else (no
// standard library), so the closure is the whole netra input of a compilation.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "netra/runtime/error.hpp"

namespace netra::jit {

struct header {
  std::string name;  // as included: "netra/dsl/config.hpp"
  std::string text;
};

/// The netra/... names `text` includes, in order of appearance.
inline std::vector<std::string> netra_includes(std::string_view text) {
  std::vector<std::string> names;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    auto skip_blanks = [&] {
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    };
    skip_blanks();
    if (line.empty() || line.front() != '#') continue;
    line.remove_prefix(1);
    skip_blanks();
    if (!line.starts_with("include")) continue;
    line.remove_prefix(7);
    skip_blanks();
    if (line.empty() || (line.front() != '"' && line.front() != '<')) continue;
    const char close = line.front() == '"' ? '"' : '>';
    line.remove_prefix(1);
    const std::size_t stop = line.find(close);
    if (stop == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, stop);
    if (name.starts_with("netra/")) names.emplace_back(name);
  }
  return names;
}

/// Every netra header reachable from `source`, resolved under `include_root`, sorted by name.
/// Throws status::unavailable naming the first header that cannot be read.
inline std::vector<header> header_closure(std::string_view source, const std::filesystem::path& include_root) {
  std::map<std::string, std::string> found;
  std::vector<std::string> pending = netra_includes(source);
  while (!pending.empty()) {
    const std::string name = pending.back();
    pending.pop_back();
    if (found.contains(name)) continue;
    std::ifstream f(include_root / name, std::ios::binary);
    if (!f)
      throw error(status::unavailable, "netra: JIT cannot read header " + name + " under " + include_root.string() +
                                           " (set NETRA_INCLUDE_DIR to the directory that holds netra/)");
    std::ostringstream text;
    text << f.rdbuf();
    for (std::string& inner : netra_includes(text.str())) pending.push_back(std::move(inner));
    found.emplace(name, text.str());
  }
  std::vector<header> out;
  for (auto& [name, text] : found) out.push_back(header{name, std::move(text)});
  return out;
}

/// The directory that holds netra/: $NETRA_INCLUDE_DIR, else the include tree this header was
/// compiled from (the source tree, or the install prefix's include/).
inline std::filesystem::path default_include_root() {
  if (const char* dir = std::getenv("NETRA_INCLUDE_DIR"); dir && *dir) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
}

}  // namespace netra::jit
