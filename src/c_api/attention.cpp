// src/c_api/attention.cpp — the GQA8 attention C ABI (netra/c/attention.h) over
// attention_gqa8_dispatcher: the handle holds the tactics loaded for the device it was created on;
// a call's scalars (phase, tokens per request, page size, softmax scale) join its tensors in the
// signature before the one dispatch.
#include "netra/c/attention.h"

#include "c_api/common.hpp"
#include "netra/runtime/ops/attention_gqa8_dispatch.hpp"

struct netra_attention_gqa8_handle {
  netra::attention_gqa8_dispatcher dispatcher;
};

using netra::c_api::guarded;
using netra::c_api::require;
using netra::c_api::tensor_text;
using netra::tensor_of;

namespace {
netra::attention_signature signature_of(const netra_attention_gqa8_handle* h, const char* function, int phase, int64_t tq, int64_t page_size,
                                        float scale, const DLTensor* const (&t)[10]) {
  if (phase < 0 || phase > 3) throw netra::error(netra::status::invalid_argument, std::string(function) + ": phase must be 0..3 (decode, extend, verify, prefill)");
  const netra::attention_signature s = h->dispatcher.signature_of(tensor_of(t[0]), tensor_of(t[1]), tensor_of(t[2]), tensor_of(t[3]), tensor_of(t[4]),
                                                                  tensor_of(t[5]), tensor_of(t[6]), tensor_of(t[7]), tensor_of(t[8]), tensor_of(t[9]));
  return netra::attention_gqa8_op::with_scalars(s, static_cast<netra::attention_phase>(phase), tq, page_size, scale);
}
}  // namespace

extern "C" {

NETRA_API netra_status netra_attention_gqa8_create(netra_attention_gqa8_handle** handle) {
  return guarded("netra_attention_gqa8_create", [&] {
    require(handle, "netra_attention_gqa8_create", "handle");
    *handle = nullptr;
    *handle = new netra_attention_gqa8_handle{netra::attention_gqa8_dispatcher(netra::current_device(), netra::c_api::jit_options())};
    return netra::status::ok;
  });
}

NETRA_API void netra_attention_gqa8_destroy(netra_attention_gqa8_handle* handle) { delete handle; }

NETRA_API netra_status netra_attention_gqa8(netra_attention_gqa8_handle* handle, int phase, int64_t tokens_per_request, int64_t page_size,
                                            float softmax_scale, const DLTensor* q, const DLTensor* out, const DLTensor* k_buffer,
                                            const DLTensor* v_buffer, const DLTensor* qo_indptr, const DLTensor* kv_indptr,
                                            const DLTensor* kv_indices, const DLTensor* kv_last_page_len, const DLTensor* k_scale,
                                            const DLTensor* v_scale, void* stream) {
  return guarded("netra_attention_gqa8", [&] {
    require(handle, "netra_attention_gqa8", "handle");
    const DLTensor* const t[10] = {q, out, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale};
    const netra::attention_signature s = signature_of(handle, "netra_attention_gqa8", phase, tokens_per_request, page_size, softmax_scale, t);
    if (handle->dispatcher.run(stream, s)) return netra::status::ok;
    std::string call = std::string("phase ") + netra::attention_phase_name(s.phase) + ", " + std::to_string(tokens_per_request) +
                       " tokens per request, page size " + std::to_string(page_size);
    for (std::size_t i = 0; i < 10; ++i) call += ", " + tensor_text(netra::attention_gqa8_op::tensor_names[i], tensor_of(t[i]));
    netra::c_api::set_last_error("netra_attention_gqa8: no tactic admits " + call + " (netra_attention_gqa8_explain says why); nothing was launched");
    return netra::status::not_supported;
  });
}

NETRA_API netra_status netra_attention_gqa8_explain(netra_attention_gqa8_handle* handle, int phase, int64_t tokens_per_request,
                                                    int64_t page_size, float softmax_scale, const DLTensor* q, const DLTensor* out,
                                                    const DLTensor* k_buffer, const DLTensor* v_buffer, const DLTensor* qo_indptr,
                                                    const DLTensor* kv_indptr, const DLTensor* kv_indices, const DLTensor* kv_last_page_len,
                                                    const DLTensor* k_scale, const DLTensor* v_scale, char* text, size_t capacity,
                                                    size_t* length) {
  return guarded("netra_attention_gqa8_explain", [&] {
    require(handle, "netra_attention_gqa8_explain", "handle");
    const DLTensor* const t[10] = {q, out, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, k_scale, v_scale};
    const netra::attention_signature s = signature_of(handle, "netra_attention_gqa8_explain", phase, tokens_per_request, page_size, softmax_scale, t);
    netra::c_api::copy_text(handle->dispatcher.explain(s).text(), text, capacity, length);
    return netra::status::ok;
  });
}

}  // extern "C"
