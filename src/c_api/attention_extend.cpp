// src/c_api/attention_extend.cpp — the GQA4 extend C ABI (netra/c/attention.h) over
// attention_gqa4_extend_dispatcher: the handle holds the tactics loaded for the device it was
// created on; a call's scalars (phase, longest extension, page size, softmax scale) join its
// tensors in the signature before the one dispatch.
#include "c_api/common.hpp"
#include "netra/c/attention.h"
#include "netra/runtime/ops/attention_gqa4_extend_dispatch.hpp"

struct netra_attention_gqa4_extend_handle {
  netra::attention_gqa4_extend_dispatcher dispatcher;
};

using netra::c_api::guarded;
using netra::c_api::require;
using netra::tensor_of;

namespace {
using tensors = const DLTensor* const (&)[12];
netra::attention_signature signature_of(const netra_attention_gqa4_extend_handle* h, const char* function, int phase, int64_t tq, int64_t page_size,
                                        float scale, tensors t) {
  if (phase < 0 || phase > 3) throw netra::error(netra::status::invalid_argument, std::string(function) + ": phase must be 0..3 (decode, extend, verify, prefill)");
  const netra::attention_signature s =
      h->dispatcher.signature_of(tensor_of(t[0]), tensor_of(t[1]), tensor_of(t[2]), tensor_of(t[3]), tensor_of(t[4]), tensor_of(t[5]), tensor_of(t[6]),
                                 tensor_of(t[7]), tensor_of(t[8]), tensor_of(t[9]), tensor_of(t[10]), tensor_of(t[11]));
  return netra::attention_gqa8_op::with_scalars(s, static_cast<netra::attention_phase>(phase), tq, page_size, scale);
}
}  // namespace

extern "C" {

NETRA_API netra_status netra_attention_gqa4_extend_create(netra_attention_gqa4_extend_handle** handle) {
  return netra::c_api::create("netra_attention_gqa4_extend_create", handle);
}

NETRA_API void netra_attention_gqa4_extend_destroy(netra_attention_gqa4_extend_handle* handle) { delete handle; }

NETRA_API netra_status netra_attention_gqa4_extend(netra_attention_gqa4_extend_handle* handle, int phase, int64_t longest_extension,
                                                   int64_t page_size, float softmax_scale, const DLTensor* q, const DLTensor* out,
                                                   const DLTensor* k_extend, const DLTensor* v_extend, const DLTensor* k_buffer,
                                                   const DLTensor* v_buffer, const DLTensor* qo_indptr, const DLTensor* kv_indptr,
                                                   const DLTensor* kv_indices, const DLTensor* kv_last_page_len, const DLTensor* k_scale,
                                                   const DLTensor* v_scale, void* stream) {
  return guarded("netra_attention_gqa4_extend", [&] {
    require(handle, "netra_attention_gqa4_extend", "handle");
    const DLTensor* const t[12] = {q, out, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale};
    const netra::attention_signature s = signature_of(handle, "netra_attention_gqa4_extend", phase, longest_extension, page_size, softmax_scale, t);
    if (handle->dispatcher.run(stream, s)) return netra::status::ok;
    std::string call = std::string("phase ") + netra::attention_phase_name(s.phase) + ", longest extension " + std::to_string(longest_extension) +
                       ", page size " + std::to_string(page_size);
    for (std::size_t i = 0; i < 12; ++i) call += ", " + netra::c_api::tensor_text(netra::attention_gqa4_extend_op::tensor_names[i], tensor_of(t[i]));
    netra::c_api::set_last_error("netra_attention_gqa4_extend: no tactic admits " + call +
                                 " (netra_attention_gqa4_extend_explain says why); nothing was launched");
    return netra::status::not_supported;
  });
}

NETRA_API netra_status netra_attention_gqa4_extend_explain(netra_attention_gqa4_extend_handle* handle, int phase, int64_t longest_extension,
                                                           int64_t page_size, float softmax_scale, const DLTensor* q, const DLTensor* out,
                                                           const DLTensor* k_extend, const DLTensor* v_extend, const DLTensor* k_buffer,
                                                           const DLTensor* v_buffer, const DLTensor* qo_indptr, const DLTensor* kv_indptr,
                                                           const DLTensor* kv_indices, const DLTensor* kv_last_page_len, const DLTensor* k_scale,
                                                           const DLTensor* v_scale, char* text, size_t capacity, size_t* length) {
  return guarded("netra_attention_gqa4_extend_explain", [&] {
    require(handle, "netra_attention_gqa4_extend_explain", "handle");
    const DLTensor* const t[12] = {q, out, k_extend, v_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale};
    const netra::attention_signature s =
        signature_of(handle, "netra_attention_gqa4_extend_explain", phase, longest_extension, page_size, softmax_scale, t);
    netra::c_api::copy_text(handle->dispatcher.explain(s).text(), text, capacity, length);
    return netra::status::ok;
  });
}

}  // extern "C"
