// The MoE routing C ABI without a GPU: NULL handles are refused with
// NETRA_STATUS_INVALID_ARGUMENT and a message naming the function; creating a handle without a
// device is NETRA_STATUS_UNAVAILABLE and leaves the handle NULL.
#include <doctest/doctest.h>

#include <string>

#include "netra/c/moe_experts.h"
#include "netra/c/moe_routing.h"
#include "netra/runtime/backend.hpp"

TEST_CASE("moe routing C ABI: NULL handles are refused") {
  CHECK(netra_moe_routing_create(nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_routing_create: handle is NULL");
  CHECK(netra_moe_act_quant(nullptr, nullptr, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_act_quant: handle is NULL");
  CHECK(netra_moe_router(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_router: handle is NULL");
  CHECK(netra_moe_shared_gate(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_shared_gate: handle is NULL");
  char text[16];
  CHECK(netra_moe_act_quant_explain(nullptr, nullptr, nullptr, nullptr, text, sizeof text, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(netra_moe_router_explain(nullptr, nullptr, nullptr, nullptr, nullptr, text, sizeof text, nullptr) ==
        NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(netra_moe_shared_gate_explain(nullptr, nullptr, nullptr, nullptr, nullptr, text, sizeof text, nullptr) ==
        NETRA_STATUS_INVALID_ARGUMENT);
  netra_moe_routing_destroy(nullptr);
}

TEST_CASE("moe experts and block C ABI: NULL handles are refused, every family has an explain") {
  char text[16];
  CHECK(netra_moe_experts_create(nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(netra_moe_expert_gate_up(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_expert_gate_up: handle is NULL");
  CHECK(netra_moe_expert_down(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_expert_down: handle is NULL");
  CHECK(netra_moe_expert_gate_up_explain(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, text, sizeof text, nullptr) ==
        NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(netra_moe_expert_down_explain(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, text, sizeof text, nullptr) ==
        NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(netra_moe_block_create(nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(netra_moe_block(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        NETRA_MOE_BLOCK_UNFUSED, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(netra_last_error()) == "netra_moe_block: handle is NULL");
  CHECK(netra_moe_block_explain(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                nullptr, NETRA_MOE_BLOCK_FUSED, text, sizeof text, nullptr) == NETRA_STATUS_INVALID_ARGUMENT);
  netra_moe_experts_destroy(nullptr);
  netra_moe_block_destroy(nullptr);
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
