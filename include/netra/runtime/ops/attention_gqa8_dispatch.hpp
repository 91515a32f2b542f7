// netra/runtime/ops/attention_gqa8_dispatch.hpp — GQA8 paged attention as an operation of the one
// dispatch path (runtime/op_dispatcher.hpp): its tensors, its tactics (tactics::attention_gqa8, one
// per phase and page size), what each tactic binds (its workspace and the slice count for the
// batch on its device) and its launch. The phase, tokens per request, page size and softmax scale
// are the call's scalars: set them on the signature before run(). Code using this header links
// libnetra.
#pragma once
#include <array>

#include "netra/runtime/op_dispatcher.hpp"
#include "netra/runtime/ops/attention_gqa8.hpp"
#include "netra/runtime/tactics/attention.hpp"

namespace netra {

struct attention_gqa8_op {
  using signature = attention_signature;
  static constexpr auto tactics = netra::tactics::attention_gqa8;
  static constexpr const char* name = "attention_gqa8";
  static constexpr std::array<const char*, 10> tensor_names{"q",         "out",        "k_buffer",         "v_buffer", "qo_indptr",
                                                            "kv_indptr", "kv_indices", "kv_last_page_len", "k_scale",  "v_scale"};
  static signature signature_of(const device_info& device, const tensor_arg& q, const tensor_arg& out, const tensor_arg& k_buffer,
                                const tensor_arg& v_buffer, const tensor_arg& qo_indptr, const tensor_arg& kv_indptr, const tensor_arg& kv_indices,
                                const tensor_arg& kv_last_page_len, const tensor_arg& k_scale, const tensor_arg& v_scale) {
    signature s{};
    s.target = device.target;
    s.device = device_of(device);
    s.q = q, s.out = out, s.k_buffer = k_buffer, s.v_buffer = v_buffer, s.qo_indptr = qo_indptr, s.kv_indptr = kv_indptr;
    s.kv_indices = kv_indices, s.kv_last_page_len = kv_last_page_len, s.k_scale = k_scale, s.v_scale = v_scale;
    return s;
  }
  /// The call's scalars (the C ABI's and Python's arguments besides the tensors).
  static signature with_scalars(signature s, attention_phase phase, i64 tokens_per_request, i64 page_size, float softmax_scale) {
    s.phase = phase, s.tq = tokens_per_request, s.page_size = page_size, s.softmax_scale = softmax_scale;
    return s;
  }
  template <class Contract> static signature bind(signature s, const handle<Contract>& h) {
    s.workspace = h.workspace();
    s.workspace_bytes = h.workspace_bytes();
    s.slices = attention_gqa8_slices(h, s.batch());
    return s;
  }
  template <class Contract> static void launch(const handle<Contract>& h, stream_handle stream, const signature& s) {
    launch_attention_gqa8(h, stream, s);
  }
};

using attention_gqa8_dispatcher = op_dispatcher<attention_gqa8_op>;

}  // namespace netra
