// netra/runtime/ops/moe_experts_dispatch.hpp — the decode expert projections through their
// tactic lists (tactics/moe_experts.hpp): the tactics loaded for one device, and gate_up() /
// down() that take the first tactic admitting the call (gate_up's with its workspace bound) or
// report a fallback. They allocate
// nothing, look nothing up and never synchronise. Code using this header links libnetra.
#pragma once
#include "netra/runtime/ops/moe_experts.hpp"
#include "netra/runtime/tactic_set.hpp"
#include "netra/runtime/tactics/moe_experts.hpp"

namespace netra {

class moe_experts_dispatcher {
 public:
  moe_experts_dispatcher(const device_info& device, const jit::options& jit) : gate_up_(device, jit), down_(device, jit) {}

  /// Records gate_up on `stream` and returns true, or returns false when no tactic admits the
  /// call. Throws status::invalid_argument for a strict refusal (nothing launched).
  bool gate_up(stream_handle stream, const void* hidden, const i32* ids, const moe_expert_weights& w, void* out, i64 tokens) const {
    const auto s = moe_gate_up_call_signature(gate_up_.device().target, hidden, ids, w, out, tokens);
    const int chosen = gate_up_.select(s, bind_workspace).tactic;
    if (chosen == fallback) return false;
    gate_up_.visit(chosen, [&](const auto& h) { moe_expert_gate_up(h, stream, hidden, ids, w, out, tokens); });
    return true;
  }

  /// Records down on `stream` (act: E4M3 with act_scales when `act_is_bf16` is false, else
  /// gate_up's BF16 output) and returns true, or false when no tactic admits the call.
  bool down(stream_handle stream, const void* act, bool act_is_bf16, const float* act_scales, const i32* ids, const float* route_weights,
            const moe_expert_weights& w, void* out, i64 tokens) const {
    const auto s = signature(act, act_is_bf16, act_scales, ids, route_weights, w, out, tokens);
    const int chosen = down_.select(s, same).tactic;
    if (chosen == fallback) return false;
    down_.visit(chosen, [&](const auto& h) { moe_expert_down(h, stream, act, act_scales, ids, route_weights, w, out, tokens); });
    return true;
  }

  explanation explain_gate_up(const void* hidden, const i32* ids, const moe_expert_weights& w, const void* out, i64 tokens) const {
    return gate_up_.explain(moe_gate_up_call_signature(gate_up_.device().target, hidden, ids, w, out, tokens), bind_workspace);
  }
  explanation explain_down(const void* act, bool act_is_bf16, const float* act_scales, const i32* ids, const float* route_weights,
                           const moe_expert_weights& w, const void* out, i64 tokens) const {
    return down_.explain(signature(act, act_is_bf16, act_scales, ids, route_weights, w, out, tokens), same);
  }

 private:
  static constexpr auto same = [](const auto& s, const auto&) { return s; };  // no workspace to bind
  static constexpr auto bind_workspace = [](moe_gate_up_signature s, const auto& h) {  // gate_up unit_list: the list
    s.workspace = h.workspace();
    s.workspace_bytes = h.workspace_bytes();
    return s;
  };
  moe_down_signature signature(const void* act, bool act_is_bf16, const float* act_scales, const i32* ids, const float* route_weights,
                               const moe_expert_weights& w, const void* out, i64 tokens) const {
    moe_down_signature s = moe_down_call_signature<contracts::moe_expert_down_decode<sm90a>>(down_.device().target, act, act_scales, ids,
                                                                                            route_weights, w, out, tokens);
    s.act_dtype = act_is_bf16 ? dtype::bf16 : dtype::e4m3;
    return s;
  }
  tactic_set_of<decltype(tactics::moe_expert_gate_up)> gate_up_;
  tactic_set_of<decltype(tactics::moe_expert_down)> down_;
};

}  // namespace netra
