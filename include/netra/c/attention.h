/* netra/c/attention.h — GQA8 paged attention (and, below, GQA4 extend) over a native FP8 KV cache
 * through netra's tactic lists
 * (tactics::attention_gqa8; contracts/attention/gqa8_paged.hpp has the semantics):
 *   q, out            bfloat16 [tokens, 16, 256], compact (out as many tokens as q)
 *   k_buffer, v_buffer float8_e4m3fn or uint8 (E4M3 bytes) [slots, 2, 256], compact: SGLang's pools
 *   qo_indptr int64 [batch + 1]; kv_indptr int32 [batch + 1]; kv_indices int64 [entries]
 *   kv_last_page_len int32 [batch] for page size 16 (NULL for page size 1)
 *   k_scale, v_scale  float32 [] or [1] on the device (read there: graph-safe)
 * phase: NETRA_ATTENTION_DECODE (tokens_per_request 1) or NETRA_ATTENTION_VERIFY (12: causal
 * inside the verify block, split over the device); extend and prefill calls are never taken.
 * Page-table entries outside the pool are masked (never read). Conventions (DLTensors, statuses):
 * netra/c/netra.h. */
#ifndef NETRA_C_ATTENTION_H
#define NETRA_C_ATTENTION_H

#include "netra/c/netra.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netra_attention_gqa8_handle netra_attention_gqa8_handle;

enum { NETRA_ATTENTION_DECODE = 0, NETRA_ATTENTION_EXTEND = 1, NETRA_ATTENTION_VERIFY = 2, NETRA_ATTENTION_PREFILL = 3 };

/* Loads every GQA8 attention tactic for the calling thread's current device and allocates their
 * workspaces (the split calls' (m, l, o) triples). */
NETRA_API netra_status netra_attention_gqa8_create(netra_attention_gqa8_handle** handle);

/* Releases the handle. NULL is ignored. */
NETRA_API void netra_attention_gqa8_destroy(netra_attention_gqa8_handle* handle);

/* Records the call on `stream` with the first tactic that admits it. NETRA_STATUS_NOT_SUPPORTED:
 * none does (nothing launched or written). NETRA_STATUS_INVALID_ARGUMENT: a strict tactic refuses
 * a call inside its promoted domain (nothing launched; the message names the field), a phase
 * outside 0..3, or a NULL handle. */
NETRA_API netra_status netra_attention_gqa8(netra_attention_gqa8_handle* handle, int phase, int64_t tokens_per_request, int64_t page_size,
                                            float softmax_scale, const DLTensor* q, const DLTensor* out, const DLTensor* k_buffer,
                                            const DLTensor* v_buffer, const DLTensor* qo_indptr, const DLTensor* kv_indptr,
                                            const DLTensor* kv_indices, const DLTensor* kv_last_page_len, const DLTensor* k_scale,
                                            const DLTensor* v_scale, void* stream);

/* Writes, NUL-terminated and truncated to `capacity` bytes, one line per tactic with its decision
 * for this call and the outcome; *length (if not NULL) receives the full length. */
NETRA_API netra_status netra_attention_gqa8_explain(netra_attention_gqa8_handle* handle, int phase, int64_t tokens_per_request,
                                                    int64_t page_size, float softmax_scale, const DLTensor* q, const DLTensor* out,
                                                    const DLTensor* k_buffer, const DLTensor* v_buffer, const DLTensor* qo_indptr,
                                                    const DLTensor* kv_indptr, const DLTensor* kv_indices, const DLTensor* kv_last_page_len,
                                                    const DLTensor* k_scale, const DLTensor* v_scale, char* text, size_t capacity,
                                                    size_t* length);

/* GQA4 extend over the same paged FP8 cache (tactics::attention_gqa4_extend;
 * contracts/attention/gqa4_extend.hpp has the semantics):
 *   q, out            bfloat16 [tokens, 32, 128], compact; request b's extension tokens are
 *                     qo_indptr[b] .. qo_indptr[b + 1] - 1 (1..12 of them)
 *   k_extend, v_extend bfloat16 [tokens, 8, 128], compact: the extension's own K / V
 *   k_buffer, v_buffer float8_e4m3fn or uint8 [slots, 8, 128]: the prefix; the index tensors and
 *                     scales as above. softmax_scale must be fl32(1/sqrt(128)).
 * phase: NETRA_ATTENTION_EXTEND only (causal inside the extension); longest_extension: 1..12. */
typedef struct netra_attention_gqa4_extend_handle netra_attention_gqa4_extend_handle;

/* Loads every GQA4 extend tactic for the calling thread's current device and allocates their
 * workspaces (padded queries and the prefix slices' (m, l, o) triples). */
NETRA_API netra_status netra_attention_gqa4_extend_create(netra_attention_gqa4_extend_handle** handle);

/* Releases the handle. NULL is ignored. */
NETRA_API void netra_attention_gqa4_extend_destroy(netra_attention_gqa4_extend_handle* handle);

/* Records the call on `stream` with the first tactic that admits it; statuses as
 * netra_attention_gqa8's (a prefill-phase call is NETRA_STATUS_NOT_SUPPORTED: nothing written). */
NETRA_API netra_status netra_attention_gqa4_extend(netra_attention_gqa4_extend_handle* handle, int phase, int64_t longest_extension,
                                                   int64_t page_size, float softmax_scale, const DLTensor* q, const DLTensor* out,
                                                   const DLTensor* k_extend, const DLTensor* v_extend, const DLTensor* k_buffer,
                                                   const DLTensor* v_buffer, const DLTensor* qo_indptr, const DLTensor* kv_indptr,
                                                   const DLTensor* kv_indices, const DLTensor* kv_last_page_len, const DLTensor* k_scale,
                                                   const DLTensor* v_scale, void* stream);

/* Writes the explanation of the same call as netra_attention_gqa8_explain does. */
NETRA_API netra_status netra_attention_gqa4_extend_explain(netra_attention_gqa4_extend_handle* handle, int phase, int64_t longest_extension,
                                                           int64_t page_size, float softmax_scale, const DLTensor* q, const DLTensor* out,
                                                           const DLTensor* k_extend, const DLTensor* v_extend, const DLTensor* k_buffer,
                                                           const DLTensor* v_buffer, const DLTensor* qo_indptr, const DLTensor* kv_indptr,
                                                           const DLTensor* kv_indices, const DLTensor* kv_last_page_len, const DLTensor* k_scale,
                                                           const DLTensor* v_scale, char* text, size_t capacity, size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* NETRA_C_ATTENTION_H */
