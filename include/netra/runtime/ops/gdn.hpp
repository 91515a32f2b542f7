// netra/runtime/ops/gdn.hpp — the host launch paths of the gdn contracts: build a call's
// signature from its tensors, admit it (a refusal throws: nothing launched, nothing written) and
// record its kernels on the caller's stream. Nothing is allocated, looked up or synchronised.
#pragma once
#include "netra/kernels/gdn/conv.hpp"
#include "netra/kernels/gdn/precompute.hpp"
#include "netra/kernels/gdn/recurrent.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/tensor.hpp"

namespace netra {

namespace gdn_ops {
template <class T> T* mut(const tensor_arg& t) { return static_cast<T*>(const_cast<void*>(t.data)); }
template <class T> const T* in(const tensor_arg& t) { return static_cast<const T*>(t.data); }
template <class Contract, class Signature> void admit_or_throw(const Signature& s, const char* what) {
  const decision d = Contract::admits(s);
  if (!d.admitted()) throw error(refusal_status(d), std::string(what) + ": " + to_string(d));
}
}  // namespace gdn_ops

/// Tensors in order: x, weight, y, slots, state, windows (an empty tensor_arg where unused).
inline gdn_conv_signature gdn_conv_call(const device_info& device, const tensor_arg& x, const tensor_arg& weight, const tensor_arg& y,
                                        const tensor_arg& slots, const tensor_arg& state, const tensor_arg& windows) {
  return {device.target, device_of(device), x, weight, y, slots, state, windows};
}
/// Tensors in order: y, a, b, A_log, dt_bias, q, k, decay, beta.
inline gdn_precompute_signature gdn_precompute_call(const device_info& device, const tensor_arg& y, const tensor_arg& a, const tensor_arg& b,
                                                    const tensor_arg& a_log, const tensor_arg& dt_bias, const tensor_arg& q, const tensor_arg& k,
                                                    const tensor_arg& decay, const tensor_arg& beta) {
  return {device.target, device_of(device), y, a, b, a_log, dt_bias, q, k, decay, beta};
}
/// Tensors in order: q, k, v, decay, beta, state, slots, out, accepted, conv_windows, conv_state.
inline gdn_recurrent_signature gdn_recurrent_call(const device_info& device, const tensor_arg& q, const tensor_arg& k, const tensor_arg& v,
                                                  const tensor_arg& decay, const tensor_arg& beta, const tensor_arg& state, const tensor_arg& slots,
                                                  const tensor_arg& out, const tensor_arg& accepted, const tensor_arg& conv_windows,
                                                  const tensor_arg& conv_state) {
  return {device.target, device_of(device), q, k, v, decay, beta, state, slots, out, accepted, conv_windows, conv_state};
}
/// A core with Inputs raw (the precompute fused in): y (the conv output, read as v), a, b, A_log,
/// dt_bias, state, slots, out; q, k, decay, beta absent.
inline gdn_recurrent_signature gdn_recurrent_raw_call(const device_info& device, const tensor_arg& y, const tensor_arg& a, const tensor_arg& b,
                                                      const tensor_arg& a_log, const tensor_arg& dt_bias, const tensor_arg& state, const tensor_arg& slots,
                                                      const tensor_arg& out) {
  return {device.target, device_of(device), {}, {}, y, {}, {}, state, slots, out, {}, {}, {}, a, b, a_log, dt_bias};
}

template <class Contract> void launch_gdn_conv(const handle<Contract>& h, stream_handle stream, const gdn_conv_signature& s) {
  using kernel = kernels::gdn_conv_update<Contract>;
  using namespace gdn_ops;
  h.template launch<kernel>(stream,
                            {in<u16>(s.x), gdn::row_stride(s.x), in<u16>(s.weight), mut<u16>(s.y), mut<u16>(s.state), in<i32>(s.slots),
                             mut<u16>(s.windows), static_cast<i32>(s.state_slots())},
                            kernel::shape(static_cast<u32>(s.batch())));
}

template <class Contract> void launch_gdn_precompute(const handle<Contract>& h, stream_handle stream, const gdn_precompute_signature& s) {
  using kernel = kernels::gdn_precompute_kernel<Contract>;
  using namespace gdn_ops;
  h.template launch<kernel>(stream,
                            {in<u16>(s.y), gdn::row_stride(s.y), in<u16>(s.a), gdn::row_stride(s.a), in<u16>(s.b), gdn::row_stride(s.b), in<float>(s.a_log), in<float>(s.dt_bias),
                             mut<float>(s.q), mut<float>(s.k), mut<float>(s.decay), mut<float>(s.beta)},
                            kernel::shape(static_cast<u32>(s.rows())));
}

template <class Contract> void launch_gdn_recurrent(const handle<Contract>& h, stream_handle stream, const gdn_recurrent_signature& s) {
  using core = kernels::gdn_recurrent_core<Contract>;
  using namespace gdn_ops;
  const u32 batch = static_cast<u32>(s.batch());
  const i32 slots = static_cast<i32>(s.state_slots());
  const kernels::gdn_recurrent_params base{in<float>(s.q), in<float>(s.k), in<u16>(s.v), gdn::row_stride(s.v), in<float>(s.decay), in<float>(s.beta),
                                           mut<void>(s.state), in<i32>(s.slots), mut<u16>(s.out), in<i32>(s.accepted), slots, batch};
  if constexpr (Contract::raw_inputs) h.template launch<core>(stream, {base, in<u16>(s.a), in<u16>(s.b), in<float>(s.a_log), in<float>(s.dt_bias)}, core::shape(batch));
  else h.template launch<core>(stream, base, core::shape(batch));
  if constexpr (Contract::commit == gdn::state_commit::accepted_prefix) {
    using commit = kernels::gdn_conv_commit<Contract>;
    h.template launch<commit>(stream, {in<u16>(s.conv_windows), mut<u16>(s.conv_state), in<i32>(s.slots), in<i32>(s.accepted), slots},
                              commit::shape(batch));
  }
}

/// The checked entry points: admit, then launch.
template <class Contract> void gdn_conv(const handle<Contract>& h, stream_handle stream, const gdn_conv_signature& s) {
  gdn_ops::admit_or_throw<Contract>(s, "netra::gdn_conv");
  launch_gdn_conv(h, stream, s);
}
template <class Contract> void gdn_precompute(const handle<Contract>& h, stream_handle stream, const gdn_precompute_signature& s) {
  gdn_ops::admit_or_throw<Contract>(s, "netra::gdn_precompute");
  launch_gdn_precompute(h, stream, s);
}
template <class Contract> void gdn_recurrent(const handle<Contract>& h, stream_handle stream, const gdn_recurrent_signature& s) {
  gdn_ops::admit_or_throw<Contract>(s, "netra::gdn_recurrent");
  launch_gdn_recurrent(h, stream, s);
}

}  // namespace netra
