// netra/runtime/ops/moe_experts.hpp — the host launch paths of contracts::moe_expert_gate_up and
// contracts::moe_expert_down: the signature of a call from its tensors (or raw pointers), the
// launch of an admitted signature (sm90a: with programmatic stream serialisation, see the
// kernels) — one kernel, or for gate_up with Schedule unit_list the units kernel into the bound
// workspace and then gate_up (Schedule resident: gate_up alone, its claim counters in the
// workspace) — and the checked C++ entry points. Nothing is allocated, looked up or synchronised
// here (safe inside graph capture). One handle's workspace serves one stream at a time.
#pragma once
#include "netra/kernels/moe/experts_down.hpp"
#include "netra/kernels/moe/experts_gate_up.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/tensor.hpp"

namespace netra {

/// The expert weights of the model (expert_weights.hpp) as raw device pointers, for the checked
/// C++ entry points: each is read as its full tensor (the shared expert's slice included).
struct moe_expert_weights {
  const void* w13 = nullptr;   // E4M3 [257, 1024, 2048]
  const float* s13 = nullptr;  // FP32 [257, 8, 16]
  const void* w2 = nullptr;    // E4M3 [257, 2048, 512]
  const float* s2 = nullptr;   // FP32 [257, 16, 4]
};

inline moe_gate_up_signature moe_gate_up_call_signature(const device_info& device, const tensor_arg& hidden, const tensor_arg& ids,
                                                        const tensor_arg& w13, const tensor_arg& s13, const tensor_arg& out) {
  return {device.target, device_of(device), hidden, ids, w13, s13, out};
}

/// The same from raw pointers on device `on` (the model's sizes for `tokens` tokens).
inline moe_gate_up_signature moe_gate_up_call_signature(target_id target, device_ref on, const void* hidden, const i32* ids,
                                                        const moe_expert_weights& w, const void* out, i64 tokens) {
  using W = moe::expert_weights;
  const i64 slots = moe::route_layout::slots;
  return {target,
          on,
          strided_tensor(hidden, dtype::bf16, on, {tokens, W::hidden}),
          strided_tensor(ids, dtype::i32, on, {tokens, slots}),
          strided_tensor(w.w13, dtype::e4m3, on, {W::experts, W::gate_up_rows, W::hidden}),
          strided_tensor(w.s13, dtype::f32, on, {W::experts, W::w13_scale_rows, W::w13_scale_cols}),
          strided_tensor(out, dtype::bf16, on, {slots * tokens, W::gate_up_rows})};
}

/// Records the kernel(s) of a gate_up call Contract::admits(s) admitted.
template <class Contract> void launch_moe_expert_gate_up(const handle<Contract>& h, stream_handle stream, const moe_gate_up_signature& s) {
  const auto m = static_cast<u32>(s.tokens());
  const auto* ids = static_cast<const i32*>(s.ids.data);
  auto* workspace = static_cast<u32*>(const_cast<void*>(s.workspace));  // unit_list: the list; resident: the counters
  if constexpr (Contract::unit_list) {
    using list = kernels::moe_expert_units_kernel<Contract>;
    h.template launch<list>(stream, {ids, workspace, m}, list::shape(m));
  }
  using kernel = kernels::moe_expert_gate_up_kernel<Contract>;
  h.template launch<kernel>(stream,
                            {static_cast<const u16*>(s.hidden.data), ids, static_cast<const u8*>(s.w13.data), static_cast<const float*>(s.s13.data),
                             static_cast<u16*>(const_cast<void*>(s.out.data)), m, workspace},
                            kernel::shape(m));
}

/// out[r, :1024] (BF16) = gate_up of route r for r < 9 * tokens: hidden BF16 [tokens, 2048],
/// ids int32 [tokens, 9], with the handle's workspace. Throws status::invalid_argument (nothing
/// launched, nothing written) when the contract refuses the call.
template <class Contract>
void moe_expert_gate_up(const handle<Contract>& h, stream_handle stream, const void* hidden, const i32* ids, const moe_expert_weights& w,
                        void* out, i64 tokens) {
  moe_gate_up_signature s = moe_gate_up_call_signature(h.device().target, device_of(h.device()), hidden, ids, w, out, tokens);
  s.workspace = h.workspace();
  s.workspace_bytes = h.workspace_bytes();
  require_admitted<Contract>("netra::moe_expert_gate_up", s);
  launch_moe_expert_gate_up(h, stream, s);
}

inline moe_down_signature moe_down_call_signature(const device_info& device, const tensor_arg& act, const tensor_arg& act_scales,
                                                  const tensor_arg& ids, const tensor_arg& route_weights, const tensor_arg& w2,
                                                  const tensor_arg& s2, const tensor_arg& out) {
  return {device.target, device_of(device), act, act_scales, ids, route_weights, w2, s2, out};
}

/// The same from raw pointers on device `on`: act is Contract's input (act_quant's E4M3 [9
/// tokens, 512] or, fused, gate_up's BF16 [9 tokens, 1024]).
template <class Contract>
moe_down_signature moe_down_call_signature(target_id target, device_ref on, const void* act, const float* act_scales, const i32* ids,
                                           const float* route_weights, const moe_expert_weights& w, const void* out, i64 tokens) {
  using W = moe::expert_weights;
  const i64 slots = moe::route_layout::slots, routes = slots * tokens;
  return {target,
          on,
          Contract::fused_act_quant ? strided_tensor(act, dtype::bf16, on, {routes, W::gate_up_rows})
                                    : strided_tensor(act, dtype::e4m3, on, {routes, W::intermediate}),
          act_scales ? strided_tensor(act_scales, dtype::f32, on, {routes, W::intermediate / W::block}) : tensor_arg{},
          strided_tensor(ids, dtype::i32, on, {tokens, slots}),
          strided_tensor(route_weights, dtype::f32, on, {tokens, slots}),
          strided_tensor(w.w2, dtype::e4m3, on, {W::experts, W::hidden, W::intermediate}),
          strided_tensor(w.s2, dtype::f32, on, {W::experts, W::w2_scale_rows, W::w2_scale_cols}),
          strided_tensor(out, dtype::bf16, on, {tokens, W::hidden})};
}

/// Records the kernel of a down call Contract::admits(s) admitted.
template <class Contract> void launch_moe_expert_down(const handle<Contract>& h, stream_handle stream, const moe_down_signature& s) {
  using kernel = kernels::moe_expert_down_kernel<Contract>;
  const auto m = static_cast<u32>(s.tokens());
  h.template launch<kernel>(stream,
                            {s.act.data, static_cast<const float*>(s.act_scales.data), static_cast<const i32*>(s.ids.data),
                             static_cast<const float*>(s.route_weights.data), static_cast<const u8*>(s.w2.data),
                             static_cast<const float*>(s.s2.data), static_cast<u16*>(const_cast<void*>(s.out.data)), m},
                            kernel::shape(m));
}

/// out[t, :2048] (BF16) = sum over the 9 routes of token t of weight * down(route), t < tokens.
/// act: act_quant's E4M3 [9 tokens, 512] with act_scales FP32 [9 tokens, 4] (Input 0), or
/// gate_up's BF16 [9 tokens, 1024] with act_scales unused (Input 1). Throws
/// status::invalid_argument (nothing launched, nothing written) when the contract refuses the call.
template <class Contract>
void moe_expert_down(const handle<Contract>& h, stream_handle stream, const void* act, const float* act_scales, const i32* ids,
                     const float* route_weights, const moe_expert_weights& w, void* out, i64 tokens) {
  const auto s = moe_down_call_signature<Contract>(h.device().target, device_of(h.device()), act, act_scales, ids, route_weights, w, out, tokens);
  require_admitted<Contract>("netra::moe_expert_down", s);
  launch_moe_expert_down(h, stream, s);
}

}  // namespace netra
