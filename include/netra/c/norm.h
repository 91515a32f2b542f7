/* netra/c/norm.h — RMSNorm, residual add + RMSNorm and the gated RMSNorm of the GDN output
 * through netra's tactic list (tactics::norm; contracts/norm/norm.hpp states the semantics:
 * FP32 math in a fixed order, one BF16 rounding, bitwise). Conventions (DLTensors, statuses):
 * netra/c/netra.h.
 *   x:        bfloat16 [tokens, C] (C = 2048; gated: 32 heads x 128 = 4096), rows contiguous
 *   residual: bfloat16 [tokens, 2048], rows contiguous; read and overwritten by r' = bf16(x + r)
 *   gate:     bfloat16 [tokens, 4096] (z), rows contiguous, its own token stride
 *   weight:   bfloat16 [2048] (gated: [128]), compact
 *   out:      bfloat16 [tokens, C], compact (may be x itself, in place); or float8_e4m3fn /
 *             uint8 [tokens, C] for the E4M3 output, with
 *   scales:   float32 [tokens, C / 128], compact (E4M3 output only; NULL otherwise)
 *   eps:      a positive, finite, normal FP32 value; zero_centred: 0 = y uses w, 1 = (1 + w).
 * NETRA_STATUS_NOT_SUPPORTED: no tactic admits the call (another dtype, width or device; nothing
 * launched). NETRA_STATUS_INVALID_ARGUMENT: a call of netra's dtype and width on the handle's
 * device that the contract refuses (a stride, an alignment, a missing or too-small tensor, eps):
 * nothing launched, the message names the field and its value; or handle is NULL. */
#ifndef NETRA_C_NORM_H
#define NETRA_C_NORM_H

#include "netra/c/netra.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netra_norm_handle netra_norm_handle;

/* Loads every normalization tactic of the calling thread's current device. */
NETRA_API netra_status netra_norm_create(netra_norm_handle** handle);

/* Releases the handle. NULL is ignored. */
NETRA_API void netra_norm_destroy(netra_norm_handle* handle);

/* y = RMSNorm(x) * w' per token. */
NETRA_API netra_status netra_rms_norm(netra_norm_handle* handle, const DLTensor* x, const DLTensor* weight, const DLTensor* out,
                                      const DLTensor* scales, float eps, int zero_centred, void* stream);

/* r' = bf16(x + r) written over residual, then y = RMSNorm(r') * w'. */
NETRA_API netra_status netra_add_rms_norm(netra_norm_handle* handle, const DLTensor* x, const DLTensor* residual, const DLTensor* weight,
                                          const DLTensor* out, const DLTensor* scales, float eps, int zero_centred, void* stream);

/* y = RMSNorm(o) * w * SiLU(z) per head of 128. */
NETRA_API netra_status netra_gated_rms_norm(netra_norm_handle* handle, const DLTensor* x, const DLTensor* gate, const DLTensor* weight,
                                            const DLTensor* out, const DLTensor* scales, float eps, void* stream);

/* Writes, NUL-terminated and truncated to `capacity` bytes, one line per tactic with its decision
 * for this call and the outcome; *length (if not NULL) receives the full length. kind: 0 rms,
 * 1 add_rms, 2 gated; tensors a kind does not have are NULL. */
NETRA_API netra_status netra_norm_explain(netra_norm_handle* handle, int kind, const DLTensor* x, const DLTensor* residual,
                                          const DLTensor* gate, const DLTensor* weight, const DLTensor* out, const DLTensor* scales,
                                          float eps, int zero_centred, char* text, size_t capacity, size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* NETRA_C_NORM_H */
