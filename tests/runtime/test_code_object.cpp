// Code-object identification: the built objects are recognised as their targets; anything
// truncated or foreign is refused.
#include <doctest/doctest.h>

#include <filesystem>
#include <vector>

#include "netra/runtime/code_object.hpp"

using namespace netra;

namespace {
std::vector<std::byte> object(const char* name) {
  const auto path = std::filesystem::path(NETRA_CODE_OBJECT_DIR) / name;
  if (!std::filesystem::exists(path)) return {};
  return read_file_bytes(path.string());
}
}  // namespace

TEST_CASE("built objects are identified as their targets, truncated copies are not") {
  struct expect_t {
    const char* file;
    target_id target;
  };
  for (const auto& e : {expect_t{"argmax-gfx950-248320-128-128-1.hsaco", target_id::gfx950},
                        expect_t{"argmax-sm90a-248320-128-128-4.cubin", target_id::sm90a}}) {
    const auto bytes = object(e.file);
    if (bytes.empty()) {
      MESSAGE("SKIPPED: ", e.file, " was not built (compiler missing on this machine)");
      continue;
    }
    const auto t = code_object_target(bytes);
    REQUIRE(t.has_value());
    CHECK(*t == e.target);
    for (std::size_t cut : {std::size_t{0}, std::size_t{16}, std::size_t{63}, bytes.size() / 2}) {
      const std::span<const std::byte> truncated(bytes.data(), cut);
      CHECK_FALSE(code_object_target(truncated).has_value());
    }
  }
}

TEST_CASE("non-ELF data is not a code object") {
  std::vector<std::byte> junk(4096, std::byte{0x5a});
  CHECK_FALSE(code_object_target(junk).has_value());
  junk[0] = std::byte{0x7f};
  junk[1] = std::byte{'E'};
  junk[2] = std::byte{'L'};
  junk[3] = std::byte{'F'};
  CHECK_FALSE(code_object_target(junk).has_value());
}
