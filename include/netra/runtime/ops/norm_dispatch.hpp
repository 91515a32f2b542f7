// netra/runtime/ops/norm_dispatch.hpp — the normalization family as an operation of the one
// dispatch path (runtime/op_dispatcher.hpp): its six tensors, its tactics (tactics::norm) and the
// launch. The operation, weight form and eps are the caller's (norm_call below); fp8_out follows
// from out's element type (float8_e4m3fn or uint8: the E4M3 output). run() allocates nothing,
// looks nothing up and never synchronises. Code using this header links libnetra.
#pragma once
#include <array>

#include "netra/runtime/op_dispatcher.hpp"
#include "netra/runtime/ops/norm.hpp"
#include "netra/runtime/tactics/norm.hpp"

namespace netra {

struct norm_op : binds_nothing {
  using signature = norm_signature;
  static constexpr auto tactics = netra::tactics::norm;
  static constexpr const char* name = "norm";
  static constexpr std::array<const char*, 6> tensor_names{"x", "residual", "gate", "weight", "out", "scales"};
  static signature signature_of(const device_info& device, const tensor_arg& x, const tensor_arg& residual, const tensor_arg& gate,
                                const tensor_arg& weight, const tensor_arg& out, const tensor_arg& scales) {
    const norm_tensors t{x, residual, gate, weight, out, scales};
    return norm_call_signature(device.target, device_of(device), norm_kind::rms, norm_weight::plain,
                               out.type == dtype::e4m3 || out.type == dtype::u8, 0.0f, t);
  }
  template <class Contract> static void launch(const handle<Contract>& h, stream_handle stream, const signature& s) { launch_norm(h, stream, s); }
};

using norm_dispatcher = op_dispatcher<norm_op>;

/// The signature of one call through a norm_dispatcher: its tensors (norm_op::tensor_names order,
/// the unused ones missing) and the caller's operation, weight form and eps.
inline norm_signature norm_call(const norm_dispatcher& d, norm_kind kind, norm_weight weight_form, float eps, const tensor_arg& x,
                                const tensor_arg& residual, const tensor_arg& gate, const tensor_arg& weight, const tensor_arg& out,
                                const tensor_arg& scales) {
  norm_signature s = d.signature_of(x, residual, gate, weight, out, scales);
  s.kind = kind;
  s.weight_form = weight_form;
  s.eps = eps;
  return s;
}

}  // namespace netra
