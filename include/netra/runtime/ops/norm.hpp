// netra/runtime/ops/norm.hpp — the host launch path of contracts::norm: validate the call's
// signature, then record the one kernel on the caller's stream. Nothing is allocated, looked up
// or synchronised here (safe inside graph capture).
#pragma once
#include "netra/kernels/norm/rms_norm.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/tensor.hpp"

namespace netra {

/// The tensors of a norm call (a kind's unused tensors stay missing: rank -1).
struct norm_tensors {
  tensor_arg x, residual, gate, weight, out, scales;
};

inline norm_signature norm_call_signature(target_id target, device_ref device, norm_kind kind, norm_weight weight_form, bool fp8_out, float eps,
                                          const norm_tensors& t) {
  norm_signature s{};
  s.target = target;
  s.device = device;
  s.kind = kind;
  s.weight_form = weight_form;
  s.fp8_out = fp8_out;
  s.eps = eps;
  s.x = t.x;
  s.residual = t.residual;
  s.gate = t.gate;
  s.weight = t.weight;
  s.out = t.out;
  s.scales = t.scales;
  return s;
}

/// Raw-pointer tensors on `device` for the C++ callers: x / residual / gate [tokens, C] with their
/// token strides (elements), weight [N], out [tokens, C] and scales [tokens, C / 128] compact.
template <class Contract>
norm_tensors norm_pointer_tensors(device_ref device, i64 tokens, const void* x, i64 x_stride, const void* residual, i64 residual_stride,
                                  const void* gate, i64 gate_stride, const void* weight, const void* out, const void* scales) {
  const i64 c = Contract::cols;
  norm_tensors t;
  t.x = strided_tensor(x, dtype::bf16, device, {tokens, c}, {x_stride, 1});
  if (residual) t.residual = strided_tensor(residual, dtype::bf16, device, {tokens, c}, {residual_stride, 1});
  if (gate) t.gate = strided_tensor(gate, dtype::bf16, device, {tokens, c}, {gate_stride, 1});
  t.weight = strided_tensor(weight, dtype::bf16, device, {Contract::n});
  t.out = strided_tensor(out, Contract::fp8_out ? dtype::e4m3 : dtype::bf16, device, {tokens, c});
  if (scales) t.scales = strided_tensor(scales, dtype::f32, device, {tokens, c / Contract::group});
  return t;
}

/// The kernel's parameters for an admitted signature.
template <class Contract> typename kernels::norm_kernel<Contract>::params norm_params(const norm_signature& s) {
  typename kernels::norm_kernel<Contract>::params p{};
  p.x = static_cast<const u16*>(s.x.data);
  p.x_stride = norm_signature::token_stride(s.x);
  if constexpr (Contract::kind == norm_kind::add_rms) {
    p.residual = static_cast<u16*>(const_cast<void*>(s.residual.data));
    p.residual_stride = norm_signature::token_stride(s.residual);
  }
  if constexpr (Contract::kind == norm_kind::gated) {
    p.gate = static_cast<const u16*>(s.gate.data);
    p.gate_stride = norm_signature::token_stride(s.gate);
  }
  p.weight = static_cast<const u16*>(s.weight.data);
  p.out = const_cast<void*>(s.out.data);
  if constexpr (Contract::fp8_out) p.scales = static_cast<float*>(const_cast<void*>(s.scales.data));
  p.eps = s.eps;
  p.rows = static_cast<u32>(s.tokens() * Contract::heads);
  return p;
}

/// Records the call of an admitted signature on `stream` (nothing is checked here).
template <class Contract> void launch_norm(const handle<Contract>& h, stream_handle stream, const norm_signature& s) {
  using kernel = kernels::norm_kernel<Contract>;
  h.template launch<kernel>(stream, norm_params<Contract>(s), kernel::shape(static_cast<u32>(s.tokens() * Contract::heads)));
}

/// Records the call on `stream`. Throws status::invalid_argument (nothing launched, nothing
/// written) when the contract refuses it.
template <class Contract> void norm(const handle<Contract>& h, stream_handle stream, const norm_signature& s) {
  const decision d = Contract::admits(s);
  if (!d.admitted()) throw error(refusal_status(d), std::string("netra::") + norm_kind_name(Contract::kind) + ": " + to_string(d));
  launch_norm(h, stream, s);
}

/// The same from raw pointers (see norm_pointer_tensors); residual / gate / scales may be null
/// where the contract has none.
template <class Contract>
void norm(const handle<Contract>& h, stream_handle stream, float eps, i64 tokens, const void* x, i64 x_stride, void* residual,
          i64 residual_stride, const void* gate, i64 gate_stride, const void* weight, void* out, float* scales) {
  const device_ref device = device_of(h.device());
  norm(h, stream,
       norm_call_signature(h.device().target, device, Contract::kind, Contract::weight_form, Contract::fp8_out, eps,
                           norm_pointer_tensors<Contract>(device, tokens, x, x_stride, residual, residual_stride, gate, gate_stride, weight, out, scales)));
}

}  // namespace netra
