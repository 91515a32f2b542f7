// libnetra embeds every code object of the build-time catalog: the same bytes as the files the
// build wrote, recognised as their contract's target, found by instance name, nothing else.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "netra/runtime/builtin_catalog.hpp"
#include "netra/runtime/embedded_objects.hpp"

using namespace netra;
namespace fs = std::filesystem;

TEST_CASE("every built catalog instance is embedded byte for byte, and only those") {
  std::size_t built = 0;
  boost::hana::for_each(catalog::all, [&](auto t) {
    using contract = typename decltype(t)::type;
    const std::string name = instance_name<contract>();
    const fs::path file = fs::path(NETRA_CODE_OBJECT_DIR) / (name + code_object_suffix(contract::target::id));
    INFO(name);
    const auto embedded = find_embedded_code_object(name);
    if (!fs::exists(file)) {
      MESSAGE("SKIPPED: ", name, " was not built here");
      CHECK_FALSE(embedded.has_value());
      return;
    }
    ++built;
    REQUIRE(embedded.has_value());
    const auto bytes = read_file_bytes(file.string());
    CHECK(embedded->size() == bytes.size());
    CHECK(std::equal(embedded->begin(), embedded->end(), bytes.begin(), bytes.end()));
    CHECK(code_object_target(*embedded) == contract::target::id);
    CHECK(embedded_code_object<contract>().data() == embedded->data());
  });
  CHECK(embedded_code_objects().size() == built);
  CHECK_FALSE(find_embedded_code_object("argmax-sm90a-1-2-3").has_value());
  try {
    embedded_code_object<contracts::argmax<sm90a, 32768, 16, 8>>();
    FAIL("a JIT-only instance is not embedded");
  } catch (const error& e) {
    CHECK(e.code() == status::not_supported);
  }
}
