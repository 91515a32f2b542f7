// The C ABI without a GPU: statuses mirror netra::status; handle creation reports the missing
// device as NETRA_STATUS_UNAVAILABLE with the reason and leaves the handle NULL; NULL handles
// are refused; the last error belongs to the calling thread.
#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "netra/c/argmax.h"
#include "netra/runtime/backend.hpp"

namespace {
bool has_gpu() {
  try {
    netra::current_device();
    return true;
  } catch (const netra::error&) {
    return false;
  }
}
}  // namespace

TEST_CASE("status codes and names mirror netra::status") {
  for (int s = NETRA_STATUS_OK; s <= NETRA_STATUS_INTERNAL; ++s)
    CHECK(std::string(netra_status_name(static_cast<netra_status>(s))) == netra::status_name(static_cast<netra::status>(s)));
  CHECK(netra_abi_version() == NETRA_ABI_VERSION);
}

TEST_CASE("without a GPU, creating a handle is NETRA_STATUS_UNAVAILABLE with the reason") {
  if (has_gpu()) {
    MESSAGE("SKIPPED: a GPU is present");
    return;
  }
  netra_argmax_handle* handle = reinterpret_cast<netra_argmax_handle*>(0x1);
  CHECK(netra_argmax_create(&handle) == NETRA_STATUS_UNAVAILABLE);
  CHECK(handle == nullptr);
  const std::string why = netra_last_error();
  MESSAGE(why);
  CHECK(why.find("CUDA") != std::string::npos);
  CHECK(why.find("HIP") != std::string::npos);
}

TEST_CASE("NULL handles and outputs are refused with NETRA_STATUS_INVALID_ARGUMENT") {
  CHECK(netra_argmax_create(nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_argmax_create: handle is NULL");
  CHECK(netra_argmax(nullptr, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_argmax: handle is NULL");
  char text[64];
  CHECK(netra_argmax_explain(nullptr, nullptr, nullptr, text, sizeof text, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  netra_argmax_destroy(nullptr);
}

TEST_CASE("the last error belongs to the calling thread") {
  CHECK(netra_argmax(nullptr, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  std::string other_thread = "unset";
  std::thread([&] { other_thread = netra_last_error(); }).join();
  CHECK(other_thread.empty());
  CHECK(std::string(netra_last_error()) == "netra_argmax: handle is NULL");
}
