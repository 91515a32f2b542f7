/* netra/c/argmax.h — argmax through netra's tactic list (tactics::argmax):
 * out[r] = argmax(logits[r, 0:cols]) for r < rows, exactly torch.argmax(dim=-1) (NaN wins, the
 * first of equal values wins). logits: float32 [rows, cols], each row contiguous (any row
 * stride); out: int64 [rows], compact. Conventions (DLTensors, statuses): netra/c/netra.h. */
#ifndef NETRA_C_ARGMAX_H
#define NETRA_C_ARGMAX_H

#include "netra/c/netra.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netra_argmax_handle netra_argmax_handle;

/* Loads every argmax tactic for the calling thread's current device (embedded code objects,
 * or the JIT and its cache for the others) and allocates their workspaces. */
NETRA_API netra_status netra_argmax_create(netra_argmax_handle** handle);

/* Releases the handle. NULL is ignored. */
NETRA_API void netra_argmax_destroy(netra_argmax_handle* handle);

/* Records the call on `stream` with the first tactic that admits it. NETRA_STATUS_NOT_SUPPORTED:
 * none does (nothing launched). NETRA_STATUS_INVALID_ARGUMENT: a strict tactic refuses a call
 * inside its promoted domain (nothing launched; the message names the field and its value), or
 * handle is NULL. */
NETRA_API netra_status netra_argmax(netra_argmax_handle* handle, const DLTensor* logits, const DLTensor* out, void* stream);

/* Writes, NUL-terminated and truncated to `capacity` bytes, one line per tactic with its
 * decision for this call and the outcome; *length (if not NULL) receives the full length. */
NETRA_API netra_status netra_argmax_explain(netra_argmax_handle* handle, const DLTensor* logits, const DLTensor* out, char* text,
                                            size_t capacity, size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* NETRA_C_ARGMAX_H */
