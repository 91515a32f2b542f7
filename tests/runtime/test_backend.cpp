// The host backend without a GPU: the HIP runtime loads and reports "no device" as
// status::unavailable; current_device() names both APIs' reasons; AMD arch names map to netra
// targets; and a code object for another target, or a corrupted one, is refused with
// status::wrong_target before any driver call, allocation or launch.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "netra/runtime/backend.hpp"
#include "netra/runtime/device_memory.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/argmax.hpp"

using namespace netra;

namespace {
bool has_gpu() {
  try {
    current_device();
    return true;
  } catch (const error&) {
    return false;
  }
}

std::vector<std::byte> built_object(const std::string& name) {
  const auto path = std::filesystem::path(NETRA_CODE_OBJECT_DIR) / name;
  if (!std::filesystem::exists(path)) return {};
  return read_file_bytes(path.string());
}

template <class Contract> std::vector<std::byte> built_object() {
  return built_object(instance_name<Contract>() + code_object_suffix(Contract::target::id));
}

/// A device that is not there: the target checks run before any driver call, so with no driver
/// loaded the only way to get past them would be status::unavailable from the driver.
device_info pretend_device(backend_api api, target_id target) {
  device_info d;
  d.api = api;
  d.target = target;
  d.name = "pretend";
  d.arch_name = target_name(target);
  return d;
}

std::string message_of(auto&& call, status expected) {
  try {
    call();
  } catch (const error& e) {
    CHECK(e.code() == expected);
    return e.what();
  }
  FAIL("no error was raised");
  return {};
}
}  // namespace

TEST_CASE("the HIP runtime loads and reports a missing device as unavailable") {
  if (has_gpu()) {
    MESSAGE("SKIPPED: a GPU is present; this test checks the behaviour without one");
    return;
  }
  const std::string why = message_of([] { hip::runtime::get(); }, status::unavailable);
  MESSAGE(why);
  if (why.find("not available") != std::string::npos) {
    MESSAGE("SKIPPED: no libamdhip64 on this machine");
    return;
  }
  // Loaded, resolved, initialised: the failure is the device, not the library.
  CHECK(why.find("libamdhip64.so.") != std::string::npos);
  CHECK((why.find("no usable AMD GPU") != std::string::npos || why.find("sees no device") != std::string::npos));
  // Every entry point that needs the runtime says the same, cleanly.
  CHECK(message_of([] { current_hip_device(); }, status::unavailable) == why);
  CHECK(message_of([] { device_buffer(backend_api::hip, 256); }, status::unavailable) == why);
}

TEST_CASE("current_device() without a GPU names the reasons of both APIs") {
  if (has_gpu()) {
    MESSAGE("SKIPPED: a GPU is present");
    return;
  }
  const std::string why = message_of([] { current_device(); }, status::unavailable);
  CHECK(why.find("CUDA") != std::string::npos);
  CHECK(why.find("HIP") != std::string::npos);
}

TEST_CASE("AMD arch names map to netra targets") {
  CHECK(amd_target_of("gfx950:sramecc+:xnack-") == target_id::gfx950);
  CHECK(amd_target_of("gfx90a") == target_id::gfx90a);
  CHECK(amd_target_of("gfx942:sramecc+:xnack-") == target_id::gfx942);
  CHECK_FALSE(amd_target_of("gfx908:sramecc+:xnack-").has_value());
  CHECK_FALSE(amd_target_of("gfx9500").has_value());
  CHECK_FALSE(amd_target_of("").has_value());
}

TEST_CASE("a gfx950 code object handed to the CUDA path is refused before the driver is touched") {
  using gfx950_argmax = contracts::argmax_reference<gfx950>;
  const auto hsaco = built_object<gfx950_argmax>();
  if (hsaco.empty()) {
    MESSAGE("SKIPPED: the gfx950 argmax object was not built");
    return;
  }
  const auto cuda_device = pretend_device(backend_api::cuda, target_id::sm90a);
  std::string why = message_of([&] { module::load(hsaco, target_id::sm90a, cuda_device); }, status::wrong_target);
  CHECK(why.find("built for gfx950, expected sm90a") != std::string::npos);
  // The right contract on the wrong device: refused at the device check.
  why = message_of([&] { module::load(hsaco, target_id::gfx950, cuda_device); }, status::wrong_target);
  CHECK(why.find("cannot run on") != std::string::npos);
  // A handle never reaches its workspace allocation (which would fail with unavailable here).
  using sm90a_argmax = contracts::argmax_reference<sm90a>;
  why = message_of([&] { handle<sm90a_argmax> h(hsaco, cuda_device); }, status::wrong_target);
  CHECK(why.find("gfx950") != std::string::npos);
}

TEST_CASE("an sm90a cubin with a corrupted or truncated header is refused as not a code object") {
  using sm90a_argmax = contracts::argmax_reference<sm90a>;
  const auto cubin = built_object<sm90a_argmax>();
  if (cubin.empty()) {
    MESSAGE("SKIPPED: the sm90a argmax cubin was not built");
    return;
  }
  const auto device = pretend_device(backend_api::cuda, target_id::sm90a);
  struct damage_t {
    const char* what;
    std::size_t offset;
    std::byte value;
  };
  for (const auto& d : {damage_t{"ELF magic", 1, std::byte{'X'}}, damage_t{"ELF class", 4, std::byte{1}},
                        damage_t{"e_machine", 18, std::byte{0x3E}}, damage_t{"SM version in e_flags", 49, std::byte{80}},
                        damage_t{"section header offset", 47, std::byte{0x7F}}}) {
    INFO("damaged: ", d.what);
    auto bad = cubin;
    bad[d.offset] = d.value;
    const std::string why = message_of([&] { handle<sm90a_argmax> h(bad, device); }, status::wrong_target);
    CHECK(why.find("not a code object") != std::string::npos);
  }
  const std::vector<std::byte> truncated(cubin.begin(), cubin.begin() + static_cast<std::ptrdiff_t>(cubin.size() / 3));
  CHECK(message_of([&] { module::load(truncated, target_id::sm90a, device); }, status::wrong_target).find("truncated") !=
        std::string::npos);
}

TEST_CASE("refusals map to statuses: a small workspace is workspace_too_small, everything else invalid_argument") {
  using contract = contracts::argmax_reference<sm90a>;
  alignas(16) static float logits[8];
  alignas(16) static std::int64_t out[4];
  alignas(16) static unsigned char workspace[64];
  const auto ok_except_workspace_size =
      argmax_call_signature(target_id::sm90a, device_ref{2, 0}, logits, 2, contract::n, contract::n, out, workspace, contract::workspace_bytes - 16);
  const decision small = contract::admits(ok_except_workspace_size);
  REQUIRE_FALSE(small.admitted());
  CHECK(std::string(small.field) == "workspace_bytes");
  CHECK(refusal_status(small) == status::workspace_too_small);
  const decision misaligned = contract::admits(
      argmax_call_signature(target_id::sm90a, device_ref{2, 0}, logits + 1, 2, contract::n, contract::n, out, workspace, contract::workspace_bytes));
  CHECK(std::string(misaligned.field) == "logits");
  CHECK(refusal_status(misaligned) == status::invalid_argument);
}
