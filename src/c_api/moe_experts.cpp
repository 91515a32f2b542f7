// src/c_api/moe_experts.cpp — the decode expert projections' C ABI (netra/c/moe_experts.h) over
// moe_experts_dispatcher: the handle holds the tactics loaded for the device it was created on.
#include "netra/c/moe_experts.h"

#include <string>

#include <memory>
#include <vector>

#include "c_api/common.hpp"
#include "netra/runtime/embedded_objects.hpp"
#include "netra/runtime/ops/moe_block.hpp"
#include "netra/runtime/ops/moe_experts_dispatch.hpp"

struct netra_moe_experts_handle {
  netra::moe_experts_dispatcher dispatcher;
};

namespace {
struct block_runner {
  virtual ~block_runner() = default;
  virtual void run(netra::stream_handle stream, const netra::moe_block_args& a, netra::moe_block_variant v) const = 0;
};
template <class Target> struct block_runner_for final : block_runner {
  netra::moe_decode_block<Target> block;
  explicit block_runner_for(const netra::device_info& d)
      : block(d, [](const std::string& instance) {
          const auto bytes = netra::find_embedded_code_object(instance);
          if (!bytes) throw netra::error(netra::status::not_supported, "netra_moe_block: " + instance + " is not embedded in this libnetra");
          return std::vector<std::byte>(bytes->begin(), bytes->end());
        }) {}
  void run(netra::stream_handle stream, const netra::moe_block_args& a, netra::moe_block_variant v) const override { block.run(stream, a, v); }
};
}  // namespace

struct netra_moe_block_handle {
  std::unique_ptr<block_runner> runner;
};

using netra::c_api::guarded;
using netra::c_api::require;

extern "C" {

NETRA_API netra_status netra_moe_experts_create(netra_moe_experts_handle** handle) {
  return guarded("netra_moe_experts_create", [&] {
    require(handle, "netra_moe_experts_create", "handle");
    *handle = nullptr;
    *handle = new netra_moe_experts_handle{netra::moe_experts_dispatcher(netra::current_device(), netra::c_api::jit_options())};
    return netra::status::ok;
  });
}

NETRA_API void netra_moe_experts_destroy(netra_moe_experts_handle* handle) { delete handle; }

NETRA_API netra_status netra_moe_expert_gate_up(netra_moe_experts_handle* handle, const void* hidden, const int32_t* ids, const void* w13,
                                                const float* s13, void* out, int64_t tokens, void* stream) {
  return guarded("netra_moe_expert_gate_up", [&] {
    require(handle, "netra_moe_expert_gate_up", "handle");
    const netra::moe_expert_weights w{w13, s13, nullptr, nullptr};
    if (handle->dispatcher.gate_up(stream, hidden, ids, w, out, tokens)) return netra::status::ok;
    netra::c_api::set_last_error("netra_moe_expert_gate_up: no tactic admits tokens " + std::to_string(tokens) +
                                 " on this device; nothing was launched");
    return netra::status::not_supported;
  });
}

NETRA_API netra_status netra_moe_expert_down(netra_moe_experts_handle* handle, const void* act, netra_moe_down_input input,
                                             const float* act_scales, const int32_t* ids, const float* route_weights, const void* w2,
                                             const float* s2, void* out, int64_t tokens, void* stream) {
  return guarded("netra_moe_expert_down", [&] {
    require(handle, "netra_moe_expert_down", "handle");
    if (input != NETRA_MOE_DOWN_INPUT_E4M3 && input != NETRA_MOE_DOWN_INPUT_GATE_UP_BF16)
      throw netra::error(netra::status::invalid_argument, "netra_moe_expert_down: input must be NETRA_MOE_DOWN_INPUT_E4M3 or "
                                                          "NETRA_MOE_DOWN_INPUT_GATE_UP_BF16, got " + std::to_string(static_cast<int>(input)));
    const netra::moe_expert_weights w{nullptr, nullptr, w2, s2};
    const bool bf16 = input == NETRA_MOE_DOWN_INPUT_GATE_UP_BF16;
    if (handle->dispatcher.down(stream, act, bf16, act_scales, ids, route_weights, w, out, tokens)) return netra::status::ok;
    netra::c_api::set_last_error("netra_moe_expert_down: no tactic admits tokens " + std::to_string(tokens) +
                                 (bf16 ? " with gate_up's BF16 input (up to 4 tokens; run act_quant first)" : "") +
                                 " on this device; nothing was launched");
    return netra::status::not_supported;
  });
}

NETRA_API netra_status netra_moe_block_create(netra_moe_block_handle** handle) {
  return guarded("netra_moe_block_create", [&] {
    require(handle, "netra_moe_block_create", "handle");
    *handle = nullptr;
    const netra::device_info device = netra::current_device();
    auto h = std::make_unique<netra_moe_block_handle>();
    if (device.target == netra::target_id::sm90a) h->runner = std::make_unique<block_runner_for<netra::sm90a>>(device);
    else if (device.target == netra::target_id::gfx950) h->runner = std::make_unique<block_runner_for<netra::gfx950>>(device);
    else throw netra::error(netra::status::not_supported, "netra_moe_block_create: the decode MoE block has kernels for gfx950 and sm90a only");
    *handle = h.release();
    return netra::status::ok;
  });
}

NETRA_API void netra_moe_block_destroy(netra_moe_block_handle* handle) { delete handle; }

NETRA_API netra_status netra_moe_block(netra_moe_block_handle* handle, const void* hidden, const void* router_weight,
                                       const void* shared_gate_weight, const void* w13, const float* s13, const void* w2, const float* s2,
                                       int32_t* ids, float* route_weights, void* gate_up, void* act, float* act_scales, void* out,
                                       int64_t tokens, netra_moe_block_variant variant, void* stream) {
  return guarded("netra_moe_block", [&] {
    require(handle, "netra_moe_block", "handle");
    if (variant != NETRA_MOE_BLOCK_UNFUSED && variant != NETRA_MOE_BLOCK_FUSED)
      throw netra::error(netra::status::invalid_argument, "netra_moe_block: variant must be NETRA_MOE_BLOCK_UNFUSED or NETRA_MOE_BLOCK_FUSED");
    netra::moe_block_args a;
    a.hidden = hidden;
    a.router_weight = router_weight;
    a.shared_gate_weight = shared_gate_weight;
    a.experts = {w13, s13, w2, s2};
    a.ids = ids;
    a.route_weights = route_weights;
    a.gate_up = gate_up;
    a.act = act;
    a.act_scales = act_scales;
    a.out = out;
    a.tokens = tokens;
    handle->runner->run(stream, a, static_cast<netra::moe_block_variant>(variant));
    return netra::status::ok;
  });
}

}  // extern "C"
