// netra-prebuild: fills the JIT cache ahead of time, so that serving never compiles on its hot
// path (handles find every JIT tactic in the cache at startup).
//
//   netra-prebuild [--cache-dir DIR] [--compiler nvrtc|hiprtc|clang] [--target T]... ITEM...
//
// ITEM is a contract spelling ("netra::contracts::argmax<netra::sm90a, 32768, 16, 8>") or a
// family ("argmax": every tactic of the dispatch lists of that family that this libnetra does
// not embed, for the --target targets, default all of them). The cache is --cache-dir, else
// $NETRA_CACHE_DIR, $XDG_CACHE_HOME/netra, ~/.cache/netra. Prints one line per instance and
// exits 1 when any of them failed.
#include <cctype>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "netra/runtime/builtin_catalog.hpp"
#include "netra/runtime/embedded_objects.hpp"
#include "netra/runtime/jit/compile.hpp"
#include "netra/runtime/tactics/all.hpp"

namespace hana = boost::hana;
using namespace netra;

namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

/// The template arguments of "name<a, b<c, d>, e>" split at top-level commas, trimmed.
std::vector<std::string> template_arguments(std::string_view inside) {
  std::vector<std::string> args;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < inside.size(); ++i) {
    if (inside[i] == '<') ++depth;
    else if (inside[i] == '>') --depth;
    else if (inside[i] == ',' && depth == 0) {
      args.push_back(trim(inside.substr(start, i - start)));
      start = i + 1;
    }
  }
  args.push_back(trim(inside.substr(start)));
  return args;
}

std::optional<target_id> target_of_spelling(std::string_view spelling) {
  std::optional<target_id> found;
  hana::for_each(hana::tuple_t<gfx90a, gfx942, gfx950, gfx1151, sm90a>, [&](auto t) {
    using target = typename decltype(t)::type;
    if (spelling == target::spelling) found = target::id;
  });
  return found;
}

/// Every contract netra knows: the dispatch lists' and the build-time catalog's.
template <class F> void for_each_known_contract(F&& f) {
  hana::for_each(tactics::all, [&](auto t) { f(hana::type_c<contract_of<typename decltype(t)::type>>); });
  hana::for_each(catalog::all, [&](auto t) { f(t); });
}

/// A JIT request from a contract spelling. Throws status::invalid_argument when the spelling
/// does not name a known contract template and target.
jit::request request_from_spelling(std::string_view text) {
  const std::size_t open = text.find('<'), close = text.rfind('>');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    throw error(status::invalid_argument, "netra-prebuild: '" + std::string(text) + "' is neither a family nor a contract spelling");
  const std::string name = trim(text.substr(0, open));
  const auto args = template_arguments(text.substr(open + 1, close - open - 1));
  const auto target = target_of_spelling(args.front());
  if (!target) throw error(status::invalid_argument, "netra-prebuild: '" + args.front() + "' is not a netra target (netra::sm90a, netra::gfx950, ...)");
  std::optional<jit::request> r;
  for_each_known_contract([&](auto t) {
    using contract = typename decltype(t)::type;
    if (r || name != contract::template_name) return;
    r = jit::request_for<contract>();
  });
  if (!r) throw error(status::invalid_argument, "netra-prebuild: no netra contract template is named '" + name + "'");
  r->target = *target;
  r->spelling = name + "<";
  r->instance = r->family + "-" + target_name(*target);
  for (std::size_t i = 0; i < args.size(); ++i) {
    r->spelling += (i ? ", " : "") + args[i];
    if (i) r->instance += "-" + args[i];
  }
  r->spelling += ">";
  for (char& c : r->instance)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '-';
  return *r;
}

/// The tactics of `family` for `targets` that this libnetra does not embed.
std::vector<jit::request> requests_of_family(const std::string& family, const std::set<target_id>& targets) {
  std::vector<jit::request> out;
  std::set<std::string> seen;
  bool known = false;
  hana::for_each(tactics::all, [&](auto t) {
    using contract = contract_of<typename decltype(t)::type>;
    if (family != contract::family) return;
    known = true;
    const std::string instance = instance_name<contract>();
    if (!targets.contains(contract::target::id) || !seen.insert(instance).second) return;
    if (find_embedded_code_object(instance)) {
      std::printf("netra-prebuild: %s: embedded in libnetra\n", instance.c_str());
      return;
    }
    out.push_back(jit::request_for<contract>());
  });
  if (!known) throw error(status::invalid_argument, "netra-prebuild: no dispatch list has a tactic of family '" + family + "'");
  return out;
}

int usage() {
  std::fprintf(stderr, "usage: netra-prebuild [--cache-dir DIR] [--compiler nvrtc|hiprtc|clang] [--target T]... "
                       "(CONTRACT-SPELLING | FAMILY)...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  jit::options options;
  std::set<target_id> targets;
  std::vector<std::string> items;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if ((a == "--cache-dir" || a == "--compiler" || a == "--target") && i + 1 >= argc) return usage();
      if (a == "--cache-dir") options.cache_root = argv[++i];
      else if (a == "--compiler") options.compiler = jit::parse_compiler(argv[++i]);
      else if (a == "--target") {
        const std::string t = argv[++i];
        const auto id = target_of_spelling("netra::" + t);
        if (!id) throw error(status::invalid_argument, "netra-prebuild: unknown target '" + t + "'");
        targets.insert(*id);
      } else if (a.starts_with("--")) return usage();
      else items.push_back(a);
    }
  } catch (const error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return usage();
  }
  if (items.empty()) return usage();
  if (targets.empty()) targets = {target_id::gfx90a, target_id::gfx942, target_id::gfx950, target_id::gfx1151, target_id::sm90a};

  int failures = 0;
  for (const std::string& item : items) {
    std::vector<jit::request> requests;
    try {
      requests = item.find('<') == std::string::npos ? requests_of_family(item, targets)
                                                     : std::vector<jit::request>{request_from_spelling(item)};
    } catch (const error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      ++failures;
      continue;
    }
    for (const auto& r : requests) {
      try {
        const jit::result done = jit::compile(r, options);
        if (done.from_cache) std::printf("netra-prebuild: %s: already cached at %s\n", r.instance.c_str(), done.entry.c_str());
        else std::printf("netra-prebuild: %s: compiled in %.2f s, cached at %s\n", r.instance.c_str(), done.compile_seconds, done.entry.c_str());
      } catch (const error& e) {
        std::fprintf(stderr, "netra-prebuild: %s: %s: %s\n", r.instance.c_str(), status_name(e.code()), e.what());
        ++failures;
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
