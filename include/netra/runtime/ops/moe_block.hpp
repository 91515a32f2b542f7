// netra/runtime/ops/moe_block.hpp — the whole decode MoE block of Qwen3.6-35B-A3B for 1..16
// tokens on one stream: router with the shared-expert gate appended (all nine route slots) ->
// gate_up -> [act_quant] -> down with the weighted route sum. Every kernel is recorded with its
// contract's launch path (on sm90a all of them with programmatic dependent launch: each waits
// before it reads its predecessor's output and releases its successor early). Nothing is allocated, looked up or
// synchronised in run(): the block can be captured into one CUDA graph.
//
//   variant unfused: router (logits, route + shared gate), gate_up, act_quant, down(E4M3)   5 kernels
//   variant fused:   router (logits, route + shared gate), gate_up, down(gate_up's BF16)    4 kernels, M <= 4
//   (on sm90a the router is one cluster kernel and from M = 10 gate_up the resident grid that lists
//   the units itself; on gfx950 from M = 10 gate_up is two kernels, unit list + gate_up)
//
// Kernels and contracts: contracts::moe_router_exact_shared_gate (slots 0..7 bitwise
// moe_router_exact's, slot 8 bitwise moe_shared_gate_reference's; one kernel fewer on the block's
// critical path than the two contracts called in turn), moe_act_quant_decode (M = 1) /
// moe_act_quant_batch (M > 1), moe_expert_gate_up_decode (M < tactics::unit_list_min_tokens) /
// moe_expert_gate_up_units_decode (from it: its unit list / claim counters live in its handle's
// workspace),
// moe_expert_down_decode / moe_expert_down_fused_decode. The caller owns the intermediate
// buffers (stable pointers across graph replays); the router's and gate_up's workspaces are
// their handles' (one block handle serves one stream at a time).
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/moe_act_quant.hpp"
#include "netra/runtime/ops/moe_experts.hpp"
#include "netra/runtime/ops/moe_router.hpp"
#include "netra/runtime/tactics/moe_experts.hpp"

namespace netra {

enum class moe_block_variant { unfused = 0, fused = 1 };

/// Device pointers of one block call.
struct moe_block_args {
  const void* hidden = nullptr;              // BF16 [M, 2048]
  const void* router_weight = nullptr;       // BF16 [256, 2048]
  const void* shared_gate_weight = nullptr;  // BF16 [2048]
  moe_expert_weights experts;                // W13, S13, W2, S2
  i32* ids = nullptr;                        // int32 [M, 9]  (written: route metadata)
  float* route_weights = nullptr;            // FP32 [M, 9]   (written)
  void* gate_up = nullptr;                   // BF16 [9M, 1024] (written)
  void* act = nullptr;                       // E4M3 [9M, 512]  (written, unfused variant)
  float* act_scales = nullptr;               // FP32 [9M, 4]    (written, unfused variant)
  void* out = nullptr;                       // BF16 [M, 2048]  (written)
  i64 tokens = 0;
};

template <class Target> class moe_decode_block {
 public:
  using router_c = contracts::moe_router_exact_shared_gate<Target>;
  using act_quant_one_c = contracts::moe_act_quant_decode<Target>;
  using act_quant_batch_c = contracts::moe_act_quant_batch<Target>;
  using gate_up_c = contracts::moe_expert_gate_up_decode<Target>;
  using gate_up_units_c = contracts::moe_expert_gate_up_units_decode<Target>;
  using down_c = contracts::moe_expert_down_decode<Target>;
  using down_fused_c = contracts::moe_expert_down_fused_decode<Target>;
  static constexpr i64 max_tokens = 16;
  static constexpr i64 max_fused_tokens = down_fused_c::max_tokens;

  /// `code_object(instance_name)` returns the bytes of that instance's code object (embedded in
  /// libnetra, or read from a build's code_objects/ directory).
  using loader = std::function<std::vector<std::byte>(const std::string&)>;
  moe_decode_block(const device_info& device, const loader& code_object)
      : router_(code_object(instance_name<router_c>()), device),
        act_quant_one_(code_object(instance_name<act_quant_one_c>()), device),
        act_quant_batch_(code_object(instance_name<act_quant_batch_c>()), device), gate_up_(code_object(instance_name<gate_up_c>()), device),
        gate_up_units_(code_object(instance_name<gate_up_units_c>()), device),
        down_(code_object(instance_name<down_c>()), device), down_fused_(code_object(instance_name<down_fused_c>()), device) {}

  /// Records the block on `stream`. Throws status::invalid_argument (nothing launched) for a
  /// token count outside [1, 16] ([1, 4] fused); the kernels' own refusals throw from the first
  /// kernel whose contract refuses (earlier kernels are then already recorded).
  void run(stream_handle stream, const moe_block_args& a, moe_block_variant variant) const {
    if (a.tokens < 1 || a.tokens > max_tokens || (variant == moe_block_variant::fused && a.tokens > max_fused_tokens))
      throw error(status::invalid_argument, "netra::moe_decode_block: tokens must be in [1, 16] ([1, 4] for the fused variant), got " +
                                                std::to_string(a.tokens));
    const i64 h = moe::expert_weights::hidden;
    moe_router(router_, stream, a.hidden, a.tokens, h, h, a.router_weight, moe::route_layout::routed_experts, a.ids, a.route_weights,
               a.shared_gate_weight);
    if (a.tokens >= tactics::unit_list_min_tokens) moe_expert_gate_up(gate_up_units_, stream, a.hidden, a.ids, a.experts, a.gate_up, a.tokens);
    else moe_expert_gate_up(gate_up_, stream, a.hidden, a.ids, a.experts, a.gate_up, a.tokens);
    if (variant == moe_block_variant::fused) {
      moe_expert_down(down_fused_, stream, a.gate_up, nullptr, a.ids, a.route_weights, a.experts, a.out, a.tokens);
      return;
    }
    const i64 rows = a.tokens * moe::route_layout::slots, cols = moe::expert_weights::gate_up_rows;
    if (rows <= act_quant_one_c::max_rows) moe_act_quant(act_quant_one_, stream, a.gate_up, rows, cols, cols, a.act, a.act_scales);
    else moe_act_quant(act_quant_batch_, stream, a.gate_up, rows, cols, cols, a.act, a.act_scales);
    moe_expert_down(down_, stream, a.act, a.act_scales, a.ids, a.route_weights, a.experts, a.out, a.tokens);
  }

 private:
  handle<router_c> router_;
  handle<act_quant_one_c> act_quant_one_;
  handle<act_quant_batch_c> act_quant_batch_;
  handle<gate_up_c> gate_up_;
  handle<gate_up_units_c> gate_up_units_;
  handle<down_c> down_;
  handle<down_fused_c> down_fused_;
};

}  // namespace netra
