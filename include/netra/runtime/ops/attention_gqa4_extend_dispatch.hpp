// netra/runtime/ops/attention_gqa4_extend_dispatch.hpp — GQA4 extend attention as an operation of
// the one dispatch path (runtime/op_dispatcher.hpp): its tensors, its tactics
// (tactics::attention_gqa4_extend, phase `extend` only), what each binds (its workspace and the
// slice count for the batch on its device) and its launch. The phase, the call's longest
// extension, page size and softmax scale are the call's scalars (attention_gqa8_op::with_scalars).
// Code using this header links libnetra.
#pragma once
#include <array>

#include "netra/runtime/op_dispatcher.hpp"
#include "netra/runtime/ops/attention_gqa4_extend.hpp"
#include "netra/runtime/ops/attention_gqa8_dispatch.hpp"
#include "netra/runtime/tactics/attention.hpp"

namespace netra {

struct attention_gqa4_extend_op {
  using signature = attention_signature;
  static constexpr auto tactics = netra::tactics::attention_gqa4_extend;
  static constexpr const char* name = "attention_gqa4_extend";
  static constexpr std::array<const char*, 12> tensor_names{"q",         "out",        "k_extend",         "v_extend", "k_buffer", "v_buffer",
                                                            "qo_indptr", "kv_indptr", "kv_indices", "kv_last_page_len", "k_scale", "v_scale"};
  static signature signature_of(const device_info& device, const tensor_arg& q, const tensor_arg& out, const tensor_arg& k_extend,
                                const tensor_arg& v_extend, const tensor_arg& k_buffer, const tensor_arg& v_buffer, const tensor_arg& qo_indptr,
                                const tensor_arg& kv_indptr, const tensor_arg& kv_indices, const tensor_arg& kv_last_page_len, const tensor_arg& k_scale,
                                const tensor_arg& v_scale) {
    signature s = attention_gqa8_op::signature_of(device, q, out, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale);
    s.k_extend = k_extend, s.v_extend = v_extend;
    return s;
  }
  /// The handle's workspace and its contract's slices_for the batch, as for GQA8.
  template <class Contract> static signature bind(signature s, const handle<Contract>& h) { return attention_gqa8_op::bind(s, h); }
  template <class Contract> static void launch(const handle<Contract>& h, stream_handle stream, const signature& s) {
    launch_attention_extend(h, stream, s);
  }
};

using attention_gqa4_extend_dispatcher = op_dispatcher<attention_gqa4_extend_op>;

}  // namespace netra
