// The device headers stay RTC-clean: every header under netra/dsl, netra/contracts and
// netra/kernels (found on disk, so new headers are covered without editing this test) compiles
// as one program under NVRTC for sm_90a, under hipRTC for gfx90a and under clang-22 for gfx950;
// each netra/instantiate header compiles as a program of its own (they all define
// NETRA_INSTANTIATE). A compiler's arch wrappers for other targets are left out: the AMD ones
// (gfx90a, gfx942, gfx950, gfx1151) under NVRTC, sm90a's under the AMD compilers, gfx950's
// under hipRTC's gfx90a pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "netra/runtime/jit/compile.hpp"

using namespace netra;
namespace fs = std::filesystem;

namespace {

/// "netra/..." names of the headers under `areas`, minus those under `excluded` prefixes.
std::vector<std::string> headers_under(std::initializer_list<const char*> areas, std::initializer_list<const char*> excluded) {
  const fs::path root = NETRA_TEST_INCLUDE_DIR;
  std::vector<std::string> names;
  for (const char* area : areas)
    for (const auto& e : fs::recursive_directory_iterator(root / "netra" / area)) {
      if (!e.is_regular_file() || e.path().extension() != ".hpp") continue;
      const std::string name = fs::relative(e.path(), root).generic_string();
      if (std::none_of(excluded.begin(), excluded.end(), [&](const char* x) { return name.starts_with(x); })) names.push_back(name);
    }
  std::sort(names.begin(), names.end());
  return names;
}

/// A program including `names`, after target_ops.hpp: the per-target ops headers specialise
/// target_ops and are meant to be reached through it.
std::string program_including(const std::vector<std::string>& names) {
  std::string source = "#include \"netra/dsl/arch/target_ops.hpp\"\n";
  for (const auto& n : names) source += "#include \"" + n + "\"\n";
  return source;
}

/// Compiles every device header as one program, and each instantiation header alone.
template <class Compile> void compile_device_headers(std::initializer_list<const char*> excluded, Compile&& compile) {
  const auto device_headers = headers_under({"dsl", "contracts", "kernels"}, excluded);
  REQUIRE(device_headers.size() > 10);
  MESSAGE(device_headers.size(), " device headers in one program");
  std::vector<std::byte> object;
  CHECK_NOTHROW(object = compile(program_including(device_headers), "all_device_headers"));
  for (const auto& name : headers_under({"instantiate"}, {})) {
    INFO(name);
    CHECK_NOTHROW(compile(program_including({name}), fs::path(name).stem().string()));
  }
}

std::vector<std::string> with_include(std::vector<std::string> options) {
  options.push_back(std::string("-I") + NETRA_TEST_INCLUDE_DIR);
  return options;
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

/// Runs `compile` and reports the compiler's log when it fails.
auto logged(auto compile) {
  return [compile](const std::string& source, const std::string& name) {
    try {
      return compile(source, name);
    } catch (const error& e) {
      MESSAGE(std::string(e.what()));
      throw;
    }
  };
}

}  // namespace

TEST_CASE("device headers compile under NVRTC for sm_90a") {
  if (!available([] { jit::nvrtc_library::get(); })) return;
  compile_device_headers({"netra/dsl/arch/amdgcn/", "netra/dsl/arch/gfx90a/", "netra/dsl/arch/gfx950/", "netra/dsl/arch/gfx942/",
                          "netra/dsl/arch/gfx1151/"},
                         logged([](const std::string& source, const std::string& name) {
                           return jit::nvrtc_compile(source, name + ".cu", with_include(jit::nvrtc_options()));
                         }));
}

TEST_CASE("device headers compile under hipRTC for gfx90a") {
  if (!available([] { jit::hiprtc_library::get(); })) return;
  compile_device_headers({"netra/dsl/arch/sm90a/", "netra/dsl/arch/gfx950/"},
                         logged([](const std::string& source, const std::string& name) {
                           return jit::hiprtc_compile(source, name + ".hip", with_include(jit::hiprtc_options("gfx90a")));
                         }));
}

TEST_CASE("device headers compile under clang-22 for gfx950") {
  if (!available([] { jit::clang_identity(jit::clang_path()); })) return;
  compile_device_headers({"netra/dsl/arch/sm90a/"}, logged([](const std::string& source, const std::string& name) {
                           return jit::clang_compile(jit::clang_path(), source, name, with_include(jit::clang_options("gfx950")));
                         }));
}
