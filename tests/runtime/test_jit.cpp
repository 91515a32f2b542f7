// The startup JIT without a GPU: SHA-256; the include closure; a cache key that changes with any
// header, option or compiler; cache-directory precedence; cache entries that are detected when
// truncated, extended or corrupted; and JIT of a new shape through clang-22 (gfx950, gfx942,
// gfx1151), hipRTC (gfx90a) and NVRTC (sm90a), each checked for its target and kernel symbols,
// served from the cache the second time and rebuilt when its entry is damaged.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "netra/kernels/all.hpp"
#include "netra/runtime/jit/compile.hpp"

using namespace netra;
namespace fs = std::filesystem;

namespace {

std::string hex_of(std::string_view text) { return jit::to_hex(jit::sha256().update(text).finish()); }

/// JIT options into a private cache, with the log captured.
struct jit_fixture {
  jit::scratch_directory cache;
  std::vector<std::string> log;
  jit::options options(std::optional<jit::compiler_kind> compiler = std::nullopt) {
    jit::options o;
    o.cache_root = cache.path();
    o.include_root = NETRA_TEST_INCLUDE_DIR;
    o.compiler = compiler;
    o.log = [this](const std::string& line) { log.push_back(line); };
    return o;
  }
  bool logged(std::string_view what) const {
    for (const auto& l : log)
      if (l.find(what) != std::string::npos) return true;
    return false;
  }
};

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Copies the netra include tree, so that a test can edit a header.
fs::path copy_include_tree(const fs::path& into) {
  fs::copy(fs::path(NETRA_TEST_INCLUDE_DIR) / "netra", into / "netra", fs::copy_options::recursive);
  return into;
}

bool available(auto&& probe) {
  try {
    probe();
    return true;
  } catch (const error& e) {
    MESSAGE("SKIPPED: ", std::string(e.what()));
    return false;
  }
}

/// Compiles `Contract` with `compiler` into a fresh cache and checks what the JIT promises.
template <class Contract> void check_new_shape(jit::compiler_kind compiler, const char* identity_prefix) {
  jit_fixture f;
  const jit::result first = jit::compile<Contract>(f.options(compiler));
  CHECK_FALSE(first.from_cache);
  CHECK(first.compiler.find(identity_prefix) != std::string::npos);
  CHECK(code_object_target(first.code_object) == Contract::target::id);
  CHECK(jit::check_code_object(first.code_object, jit::request_for<Contract>()).empty());
  const auto image = elf::image::parse(first.code_object);
  REQUIRE(image.has_value());
  for (const char* symbol : kernel_symbols<typename kernels::kernels_of<Contract>::type>::value) {
    INFO("kernel ", symbol);
    const auto s = image->find_symbol(symbol);
    REQUIRE(s.has_value());
    CHECK(s->type == 2);  // STT_FUNC
    CHECK(s->size > 0);
  }
  CHECK(f.logged("netra: JIT compiling " + instance_name<Contract>()));
  CHECK(f.logged("netra: JIT compiled " + instance_name<Contract>() + " in "));
  CHECK(fs::exists(first.entry));

  f.log.clear();
  const jit::result second = jit::compile<Contract>(f.options(compiler));
  CHECK(second.from_cache);
  CHECK(second.code_object == first.code_object);
  CHECK(second.entry == first.entry);
  CHECK(f.log.empty());  // a cache hit compiles nothing and logs nothing
}

/// Restores an environment variable when the test is done with it.
struct saved_env {
  const char* name;
  std::optional<std::string> value;
  explicit saved_env(const char* n) : name(n) {
    if (const char* v = std::getenv(n)) value = v;
  }
  ~saved_env() {
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
};

}  // namespace

TEST_CASE("SHA-256 matches the FIPS 180-4 examples") {
  CHECK(hex_of("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex_of("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(hex_of(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("include lines are found in every spelling, netra headers only") {
  const auto names = jit::netra_includes(
      "#include \"netra/a.hpp\"\n  #  include <netra/b/c.hpp>\n#include <cstdint>\n#if X\n#include \"netra/d.hpp\"  // note\n#endif\n"
      "// #include \"netra/commented.hpp\"\n#define INCLUDE \"netra/e.hpp\"\n#include \"other/netra/f.hpp\"\n");
  CHECK(names == std::vector<std::string>{"netra/a.hpp", "netra/b/c.hpp", "netra/d.hpp"});
}

TEST_CASE("the include closure of an instantiation holds every device header it reaches, and only netra's") {
  const auto headers = jit::header_closure(instantiation_source<contracts::argmax<sm90a, 32768, 16, 8>>(), NETRA_TEST_INCLUDE_DIR);
  std::vector<std::string> names;
  for (const auto& h : headers) names.push_back(h.name);
  for (const char* expected : {"netra/instantiate/argmax.hpp", "netra/kernels/sampling/argmax.hpp", "netra/contracts/argmax.hpp",
                               "netra/contracts/common.hpp", "netra/dsl/config.hpp", "netra/dsl/arch/target_ops.hpp",
                               "netra/dsl/arch/sm90a/ops.hpp", "netra/dsl/arch/gfx950/ops.hpp", "netra/dsl/arch/amdgcn/ops.hpp"}) {
    INFO(expected);
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  }
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const auto& h : headers) {
    INFO(h.name);
    CHECK(h.name.starts_with("netra/"));
    CHECK(h.text == read_text(fs::path(NETRA_TEST_INCLUDE_DIR) / h.name));
  }
}

TEST_CASE("a missing header is named") {
  jit::scratch_directory root;
  fs::create_directories(root.path() / "netra");
  std::ofstream(root.path() / "netra" / "top.hpp") << "#include \"netra/gone.hpp\"\n";
  try {
    jit::header_closure("#include <netra/top.hpp>\n", root.path());
    FAIL("a missing header must be reported");
  } catch (const error& e) {
    CHECK(e.code() == status::unavailable);
    CHECK(std::string(e.what()).find("netra/gone.hpp") != std::string::npos);
  }
}

TEST_CASE("the cache key changes with any header, option, compiler or source, and only then") {
  jit::scratch_directory scratch;
  const fs::path root = copy_include_tree(scratch.path());
  using contract = contracts::argmax<gfx950, 32768, 16, 8>;
  const auto request = jit::request_for<contract>();
  const std::string source = instantiation_source<contract>();
  const jit::compiler_choice compiler{jit::compiler_kind::clang, "clang-22: test", jit::clang_options("gfx950")};
  const auto key = [&](const jit::compiler_choice& c, const std::string& src) {
    return jit::cache_key(request, c, src, jit::header_closure(src, root));
  };
  const jit::digest base = key(compiler, source);
  CHECK(key(compiler, source) == base);

  // A comment appended to a header deep in the closure.
  std::ofstream(root / "netra" / "dsl" / "ordered_key.hpp", std::ios::app) << "// edited\n";
  const jit::digest edited = key(compiler, source);
  CHECK(edited != base);
  // A header outside the closure does not matter.
  std::ofstream(root / "netra" / "dsl" / "unrelated_new_header.hpp") << "// not included\n";
  CHECK(key(compiler, source) == edited);

  auto other_options = compiler;
  other_options.options.push_back("-O2");
  CHECK(key(other_options, source) != edited);
  auto other_version = compiler;
  other_version.identity = "clang-22: another build";
  CHECK(key(other_version, source) != edited);
  CHECK(key(compiler, source + "\n") != edited);
}

TEST_CASE("the cache directory is NETRA_CACHE_DIR, else XDG_CACHE_HOME/netra, else ~/.cache/netra") {
  saved_env cache("NETRA_CACHE_DIR"), xdg("XDG_CACHE_HOME"), home("HOME");
  setenv("HOME", "/home/someone", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("NETRA_CACHE_DIR", "/explicit", 1);
  CHECK(jit::default_cache_root() == "/explicit");
  unsetenv("NETRA_CACHE_DIR");
  CHECK(jit::default_cache_root() == "/xdg/netra");
  unsetenv("XDG_CACHE_HOME");
  CHECK(jit::default_cache_root() == "/home/someone/.cache/netra");
  unsetenv("HOME");
  CHECK_THROWS_AS(jit::default_cache_root(), error);
}

TEST_CASE("a truncated, extended, corrupted or misfiled cache entry is detected, never loaded") {
  jit::scratch_directory root;
  const jit::disk_cache cache(root.path());
  const jit::digest key = jit::sha256().update("key one").finish();
  const jit::digest other_key = jit::sha256().update("key two").finish();
  std::vector<std::byte> payload(5000);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 7 + 3);

  CHECK(cache.load("inst", key).state == jit::entry_state::absent);
  const fs::path path = cache.store("inst", key, payload);
  const auto good = cache.load("inst", key);
  REQUIRE(good.state == jit::entry_state::valid);
  CHECK(good.payload == payload);
  for (const auto& e : fs::directory_iterator(cache.directory())) CHECK(e.path().string().find(".tmp.") == std::string::npos);

  const std::string original = read_text(path);
  auto damage = [&](const std::string& bytes, const char* problem) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    const auto r = cache.load("inst", key);
    INFO(problem, ": ", r.problem);
    CHECK(r.state == jit::entry_state::corrupted);
    CHECK(r.payload.empty());
    CHECK(r.problem.find(problem) != std::string::npos);
  };
  damage(original.substr(0, original.size() - 1), "truncated");
  damage(original.substr(0, 40), "truncated header");
  damage(original + "x", "extended");
  std::string flipped = original;
  flipped[jit::entry_header_bytes + 1234] ^= 0x10;
  damage(flipped, "checksum");
  flipped = original;
  flipped[2] = 'X';
  damage(flipped, "magic");
  flipped = original;
  flipped[16] ^= 1;  // payload length
  damage(flipped, "payload length");
  damage("", "truncated header");

  // An intact entry under another key's name belongs to that other key.
  std::ofstream(cache.entry_path("inst", other_key), std::ios::binary) << original;
  CHECK(cache.load("inst", other_key).problem == "entry belongs to another key");
}

TEST_CASE("JIT of a new argmax shape for gfx950 through clang-22") {
  if (!available([] { jit::clang_identity(jit::clang_path()); })) return;
  check_new_shape<contracts::argmax<gfx950, 32768, 16, 8>>(jit::compiler_kind::clang, "clang");
}

TEST_CASE("JIT of new shapes for gfx942 and gfx1151 through clang-22 (a hipRTC builds them from ROCm 6 / 7 only)") {
  CHECK_FALSE(jit::hiprtc_builds(target_id::gfx942, 5));
  CHECK(jit::hiprtc_builds(target_id::gfx942, 6));
  CHECK_FALSE(jit::hiprtc_builds(target_id::gfx1151, 6));
  if (!available([] { jit::clang_identity(jit::clang_path()); })) return;
  if (available([] { jit::hiprtc_library::get(); }) && jit::hiprtc_library::get().rocm_major < 6) {  // Debian's ROCm 5
    CHECK(jit::choose_compiler(target_id::gfx942, std::nullopt).kind == jit::compiler_kind::clang);
    CHECK(jit::choose_compiler(target_id::gfx1151, std::nullopt).kind == jit::compiler_kind::clang);
  }
  check_new_shape<contracts::argmax<gfx942, 32768, 16, 8>>(jit::compiler_kind::clang, "clang");
  check_new_shape<contracts::rms_norm<gfx1151, 0, 1, 16, 2, 1>>(jit::compiler_kind::clang, "clang");
}

TEST_CASE("JIT of a new argmax shape for gfx90a through hipRTC") {
  if (!available([] { jit::hiprtc_library::get(); })) return;
  check_new_shape<contracts::argmax<gfx90a, 32768, 16, 8>>(jit::compiler_kind::hiprtc, "hipRTC");
}

TEST_CASE("JIT of a new argmax shape for sm90a through NVRTC") {
  if (!available([] { jit::nvrtc_library::get(); })) return;
  check_new_shape<contracts::argmax<sm90a, 32768, 16, 8>>(jit::compiler_kind::nvrtc, "NVRTC");
}

TEST_CASE("a damaged cache entry is rebuilt with a log line, then served again") {
  if (!available([] { jit::nvrtc_library::get(); })) return;
  using contract = contracts::argmax<sm90a, 32768, 16, 8>;
  jit_fixture f;
  const jit::result first = jit::compile<contract>(f.options());
  std::string bytes = read_text(first.entry);
  bytes[bytes.size() - 100] ^= 0x55;
  std::ofstream(first.entry, std::ios::binary | std::ios::trunc) << bytes;
  f.log.clear();
  const jit::result rebuilt = jit::compile<contract>(f.options());
  CHECK_FALSE(rebuilt.from_cache);
  CHECK(f.logged("is corrupted (payload checksum mismatch); rebuilding"));
  CHECK(f.logged("netra: JIT compiling"));
  CHECK(rebuilt.code_object == first.code_object);  // NVRTC output is deterministic
  const jit::result again = jit::compile<contract>(f.options());
  CHECK(again.from_cache);
}

TEST_CASE("the compiler follows the target; a contract's static_assert surfaces as compile_error with its message") {
  if (available([] { jit::hiprtc_library::get(); }) && available([] { jit::clang_identity(jit::clang_path()); })) {
    // Debian's hipRTC (ROCm 5) builds gfx90a but not gfx950, which falls to clang-22.
    if (jit::hiprtc_library::get().rocm_major < 7) CHECK(jit::choose_compiler(target_id::gfx950, std::nullopt).kind == jit::compiler_kind::clang);
    CHECK(jit::choose_compiler(target_id::gfx90a, std::nullopt).kind == jit::compiler_kind::hiprtc);
  }
  CHECK_THROWS_AS(jit::choose_compiler(target_id::sm90a, jit::compiler_kind::clang), error);
  CHECK_THROWS_AS(jit::choose_compiler(target_id::gfx950, jit::compiler_kind::nvrtc), error);
  CHECK_THROWS_AS(jit::parse_compiler("gcc"), error);

  if (!available([] { jit::nvrtc_library::get(); })) return;
  jit_fixture f;
  jit::request bad = jit::request_for<contracts::argmax<sm90a, 32768, 16, 8>>();
  bad.spelling = "netra::contracts::argmax<netra::sm90a, 32770, 16, 8>";  // N not a multiple of 4
  bad.instance = "argmax-sm90a-32770-16-8";
  try {
    jit::compile(bad, f.options());
    FAIL("the contract must refuse N = 32770");
  } catch (const error& e) {
    CHECK(e.code() == status::compile_error);
    CHECK(std::string(e.what()).find("field N (row length) must be a multiple of 4") != std::string::npos);
  }
  CHECK(f.logged("netra: JIT compiling argmax-sm90a-32770-16-8"));
}

TEST_CASE("without any cache directory the JIT still compiles, uncached, and says so") {
  if (!available([] { jit::nvrtc_library::get(); })) return;
  saved_env cache("NETRA_CACHE_DIR"), xdg("XDG_CACHE_HOME"), home("HOME");
  unsetenv("NETRA_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  jit_fixture f;
  jit::options o = f.options();
  o.cache_root.clear();
  const jit::result r = jit::compile<contracts::argmax<sm90a, 32768, 16, 8>>(o);
  CHECK_FALSE(r.from_cache);
  CHECK(r.entry.empty());
  CHECK(code_object_target(r.code_object) == target_id::sm90a);
  CHECK(f.logged("not cached: netra: no JIT cache directory"));
}
