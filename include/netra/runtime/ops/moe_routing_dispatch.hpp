// netra/runtime/ops/moe_routing_dispatch.hpp — the MoE routing operations through their tactic
// lists (tactics/moe_routing.hpp): the tactics loaded for one device, and act_quant(), router(),
// shared_gate() that take the first tactic admitting the call or report a fallback (false).
// They allocate nothing, look nothing up and never synchronise. Code using this header links
// libnetra.
#pragma once
#include "netra/runtime/ops/moe_act_quant.hpp"
#include "netra/runtime/ops/moe_router.hpp"
#include "netra/runtime/ops/moe_shared_gate.hpp"
#include "netra/runtime/tactic_set.hpp"
#include "netra/runtime/tactics/moe_routing.hpp"

namespace netra {

class moe_routing_dispatcher {
 public:
  moe_routing_dispatcher(const device_info& device, const jit::options& jit) : act_quant_(device, jit), router_(device, jit), shared_gate_(device, jit) {}

  /// act_quant of rows [gate | up] (BF16) into E4M3 + FP32 scales. Throws status::invalid_argument
  /// for a strict refusal (nothing launched); false when no tactic admits the call.
  bool act_quant(stream_handle stream, const void* in, i64 rows, i64 cols, i64 row_stride, void* out, float* scales) const {
    const auto s = moe_act_quant_call_signature(act_quant_.device().target, in, rows, cols, row_stride, out, scales);
    const int chosen = act_quant_.select(s, same).tactic;
    if (chosen == fallback) return false;
    act_quant_.visit(chosen, [&](const auto& h) { moe_act_quant(h, stream, in, rows, cols, row_stride, out, scales); });
    return true;
  }

  /// Route slots 0..7 (the chosen tactic's workspace is bound to the call).
  bool router(stream_handle stream, const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride, const void* gate_weight, i64 experts,
              i32* ids, float* weights) const {
    const auto s = router_signature(hidden, tokens, hidden_size, hidden_stride, gate_weight, experts, ids, weights);
    const int chosen = router_.select(s, bind_workspace).tactic;
    if (chosen == fallback) return false;
    router_.visit(chosen, [&](const auto& h) { moe_router(h, stream, hidden, tokens, hidden_size, hidden_stride, gate_weight, experts, ids, weights); });
    return true;
  }

  /// Route slot 8 (id 256, sigmoid gate).
  bool shared_gate(stream_handle stream, const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride, const void* gate_weight, i32* ids,
                   float* weights) const {
    const auto s = moe_shared_gate_call_signature(shared_gate_.device().target, hidden, tokens, hidden_size, hidden_stride, gate_weight, ids, weights);
    const int chosen = shared_gate_.select(s, same).tactic;
    if (chosen == fallback) return false;
    shared_gate_.visit(chosen, [&](const auto& h) { moe_shared_gate(h, stream, hidden, tokens, hidden_size, hidden_stride, gate_weight, ids, weights); });
    return true;
  }

  explanation explain_act_quant(const void* in, i64 rows, i64 cols, i64 row_stride, const void* out, const float* scales) const {
    return act_quant_.explain(moe_act_quant_call_signature(act_quant_.device().target, in, rows, cols, row_stride, out, scales), same);
  }
  explanation explain_router(const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride, const void* gate_weight, i64 experts,
                             const i32* ids, const float* weights) const {
    return router_.explain(router_signature(hidden, tokens, hidden_size, hidden_stride, gate_weight, experts, ids, weights), bind_workspace);
  }
  explanation explain_shared_gate(const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride, const void* gate_weight, const i32* ids,
                                  const float* weights) const {
    return shared_gate_.explain(
        moe_shared_gate_call_signature(shared_gate_.device().target, hidden, tokens, hidden_size, hidden_stride, gate_weight, ids, weights), same);
  }

 private:
  static constexpr auto same = [](const auto& s, const auto&) { return s; };  // no workspace to bind
  static constexpr auto bind_workspace = [](moe_router_signature s, const auto& h) {
    s.workspace = h.workspace();
    s.workspace_bytes = h.workspace_bytes();
    return s;
  };
  moe_router_signature router_signature(const void* hidden, i64 tokens, i64 hidden_size, i64 hidden_stride, const void* gate_weight, i64 experts,
                                        const i32* ids, const float* weights) const {
    return moe_router_call_signature(router_.device().target, hidden, tokens, hidden_size, hidden_stride, gate_weight, experts, ids, weights,
                                     nullptr, 0);
  }
  tactic_set_of<decltype(tactics::moe_act_quant)> act_quant_;
  tactic_set_of<decltype(tactics::moe_router)> router_;
  tactic_set_of<decltype(tactics::moe_shared_gate)> shared_gate_;
};

}  // namespace netra
