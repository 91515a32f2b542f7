// netra/runtime/ops/moe_experts.hpp — the host launch paths of contracts::moe_expert_gate_up and
// contracts::moe_expert_down: validate the call's signature, then record the kernels on the
// caller's stream (sm90a: with programmatic stream serialisation, see the kernels): one, or for
// gate_up with Schedule unit_list the units kernel into the handle's workspace and then gate_up
// (Schedule resident: gate_up alone, its claim counters in the handle's workspace).
// Nothing is allocated, looked up or synchronised here (safe inside graph capture). One handle's
// workspace serves one stream at a time.
#pragma once
#include "netra/kernels/moe/experts_down.hpp"
#include "netra/kernels/moe/experts_gate_up.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"

namespace netra {

/// The expert weights of the model (expert_weights.hpp): device pointers.
struct moe_expert_weights {
  const void* w13 = nullptr;   // E4M3 [257, 1024, 2048]
  const float* s13 = nullptr;  // FP32 [257, 8, 16]
  const void* w2 = nullptr;    // E4M3 [257, 2048, 512]
  const float* s2 = nullptr;   // FP32 [257, 16, 4]
};

inline moe_gate_up_signature moe_gate_up_call_signature(target_id target, const void* hidden, const i32* ids, const moe_expert_weights& w,
                                                        const void* out, i64 tokens, const void* workspace = nullptr, u64 workspace_bytes = 0) {
  moe_gate_up_signature s{};
  s.target = target;
  s.tokens = tokens;
  s.hidden_size = moe::expert_weights::hidden;
  s.intermediate = moe::expert_weights::intermediate;
  s.experts = moe::expert_weights::experts;
  s.hidden = hidden;
  s.ids = ids;
  s.w13 = w.w13;
  s.s13 = w.s13;
  s.out = out;
  s.workspace = workspace;
  s.workspace_bytes = workspace_bytes;
  return s;
}

/// out[r, :1024] (BF16) = gate_up of route r for r < 9 * tokens: hidden BF16 [tokens, 2048],
/// ids int32 [tokens, 9]. Throws status::invalid_argument (nothing launched, nothing written)
/// when the contract refuses the call.
template <class Contract>
void moe_expert_gate_up(const handle<Contract>& h, stream_handle stream, const void* hidden, const i32* ids, const moe_expert_weights& w,
                        void* out, i64 tokens) {
  const decision d =
      Contract::admits(moe_gate_up_call_signature(h.device().target, hidden, ids, w, out, tokens, h.workspace(), h.workspace_bytes()));
  if (!d.admitted()) throw error(refusal_status(d), "netra::moe_expert_gate_up: " + to_string(d));
  const auto m = static_cast<u32>(tokens);
  auto* workspace = static_cast<u32*>(h.workspace());  // unit_list: the list; resident: the counters
  if constexpr (Contract::unit_list) {
    using list = kernels::moe_expert_units_kernel<Contract>;
    h.template launch<list>(stream, {ids, workspace, m}, list::shape(m));
  }
  using kernel = kernels::moe_expert_gate_up_kernel<Contract>;
  h.template launch<kernel>(stream,
                            {static_cast<const u16*>(hidden), ids, static_cast<const u8*>(w.w13), w.s13, static_cast<u16*>(out), m, workspace},
                            kernel::shape(m));
}

template <class Contract>
moe_down_signature moe_down_call_signature(target_id target, const void* act, const float* act_scales, const i32* ids,
                                           const float* route_weights, const moe_expert_weights& w, const void* out, i64 tokens) {
  moe_down_signature s{};
  s.target = target;
  s.act_dtype = Contract::fused_act_quant ? dtype::bf16 : dtype::e4m3;
  s.tokens = tokens;
  s.hidden_size = moe::expert_weights::hidden;
  s.intermediate = moe::expert_weights::intermediate;
  s.experts = moe::expert_weights::experts;
  s.act = act;
  s.act_scales = act_scales;
  s.ids = ids;
  s.route_weights = route_weights;
  s.w2 = w.w2;
  s.s2 = w.s2;
  s.out = out;
  return s;
}

/// out[t, :2048] (BF16) = sum over the 9 routes of token t of weight * down(route), t < tokens.
/// act: act_quant's E4M3 [9 tokens, 512] with act_scales FP32 [9 tokens, 4] (Input 0), or
/// gate_up's BF16 [9 tokens, 1024] with act_scales unused (Input 1). Throws
/// status::invalid_argument (nothing launched, nothing written) when the contract refuses the call.
template <class Contract>
void moe_expert_down(const handle<Contract>& h, stream_handle stream, const void* act, const float* act_scales, const i32* ids,
                     const float* route_weights, const moe_expert_weights& w, void* out, i64 tokens) {
  const decision d =
      Contract::admits(moe_down_call_signature<Contract>(h.device().target, act, act_scales, ids, route_weights, w, out, tokens));
  if (!d.admitted()) throw error(refusal_status(d), "netra::moe_expert_down: " + to_string(d));
  using kernel = kernels::moe_expert_down_kernel<Contract>;
  h.template launch<kernel>(stream,
                            {act, act_scales, ids, route_weights, static_cast<const u8*>(w.w2), w.s2, static_cast<u16*>(out),
                             static_cast<u32>(tokens)},
                            kernel::shape(static_cast<u32>(tokens)));
}

}  // namespace netra
