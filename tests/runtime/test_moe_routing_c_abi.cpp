// The MoE routing C ABI without a GPU: NULL handles are refused with
// NETRA_STATUS_INVALID_ARGUMENT and a message naming the function; creating a handle without a
// device is NETRA_STATUS_UNAVAILABLE and leaves the handle NULL.
#include <doctest/doctest.h>

#include <string>

#include "netra/c/moe_routing.h"
#include "netra/runtime/backend.hpp"

TEST_CASE("moe routing C ABI: NULL handles are refused") {
  CHECK(netra_moe_routing_create(nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_routing_create: handle is NULL");
  CHECK(netra_moe_act_quant(nullptr, nullptr, 9, 1024, 1024, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_act_quant: handle is NULL");
  CHECK(netra_moe_router(nullptr, nullptr, 1, 2048, 2048, nullptr, 256, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_router: handle is NULL");
  CHECK(netra_moe_shared_gate(nullptr, nullptr, 1, 2048, 2048, nullptr, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_shared_gate: handle is NULL");
  char text[16];
  CHECK(netra_moe_act_quant_explain(nullptr, nullptr, 9, 1024, 1024, nullptr, nullptr, text, sizeof text, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(netra_moe_router_explain(nullptr, nullptr, 1, 2048, 2048, nullptr, 256, nullptr, nullptr, text, sizeof text, nullptr) ==
        NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(netra_moe_shared_gate_explain(nullptr, nullptr, 1, 2048, 2048, nullptr, nullptr, nullptr, text, sizeof text, nullptr) ==
        NETRA_STATUS_INVALID_ARGUMENT);
  netra_moe_routing_destroy(nullptr);
}

TEST_CASE("moe routing C ABI: without a GPU, creation is NETRA_STATUS_UNAVAILABLE") {
  try {
    netra::current_device();
    MESSAGE("SKIPPED: a GPU is present");
    return;
  } catch (const netra::error&) {
  }
  netra_moe_routing_handle* handle = reinterpret_cast<netra_moe_routing_handle*>(0x1);
  CHECK(netra_moe_routing_create(&handle) == NETRA_STATUS_UNAVAILABLE);
  CHECK(handle == nullptr);
  const std::string why = netra_last_error();
  CHECK(why.find("CUDA") != std::string::npos);
  CHECK(why.find("HIP") != std::string::npos);
}
