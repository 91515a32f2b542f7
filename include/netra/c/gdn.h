/* netra/c/gdn.h — the gated delta net of the speculative verify step through netra's tactic lists
 * (runtime/tactics/gdn.hpp): conv update, precompute, K0 verify, M16, accepted-prefix replay.
 * Shapes (B requests, T tokens each, rows B T; D = 8192 q | k | v channels; 16 q/k heads, 32 v
 * heads, K = V = 128; the last state slot of a pool is the padding sentinel, never written):
 *   conv:       x [B T, D] bf16 (rows contiguous), weight [D, 4] bf16, y [B T, D] bf16, slots [B]
 *               int32, state [slots, D, 3] or [slots, 3, D] bf16, windows [B, T, D, 3] or
 *               [B, T, 3, D] bf16 (NULL: the final state is written to the slot instead).
 *   precompute: y [B T, D] bf16, a, b [B T, 32] bf16 (rows contiguous, any row stride >= 32:
 *               column views of a wider product), A_log, dt_bias [32] float32 -> q, k
 *               [B T, 16, 128], decay, beta [B T, 32] float32.
 *   verify/m16: q, k, v (= the conv output y), decay, beta, state [slots, 32, 128, 128] float32 or
 *               bf16, slots [B] int32 -> out [B T, 32, 128] bf16 (verify writes no state; m16
 *               commits the state after the T tokens).
 *   replay:     the same token inputs, state, slots, accepted [B] int32 (0..T), conv_windows (the
 *               verify conv's windows) and the conv state pool: commits exactly the accepted prefix.
 * Every tensor is checked (dtype, shape, strides, alignment, device) before anything is launched;
 * NETRA_STATUS_NOT_SUPPORTED: no tactic admits the call (nothing launched or written);
 * NETRA_STATUS_INVALID_ARGUMENT: a replay inside its promoted domain (its target, state dtype,
 * T = 12, B 1..128) whose tensors the contract refuses (nothing launched), or a NULL handle.
 * Conventions (DLTensors, statuses, streams): netra/c/netra.h. */
#ifndef NETRA_C_GDN_H
#define NETRA_C_GDN_H

#include "netra/c/netra.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netra_gdn_handle netra_gdn_handle;

/* Loads every gdn tactic for the calling thread's current device. */
NETRA_API netra_status netra_gdn_create(netra_gdn_handle** handle);
/* Releases the handle. NULL is ignored. */
NETRA_API void netra_gdn_destroy(netra_gdn_handle* handle);

NETRA_API netra_status netra_gdn_conv(netra_gdn_handle* handle, const DLTensor* x, const DLTensor* weight, const DLTensor* y, const DLTensor* slots,
                                      const DLTensor* state, const DLTensor* windows, void* stream);
NETRA_API netra_status netra_gdn_precompute(netra_gdn_handle* handle, const DLTensor* y, const DLTensor* a, const DLTensor* b, const DLTensor* a_log,
                                            const DLTensor* dt_bias, const DLTensor* q, const DLTensor* k, const DLTensor* decay,
                                            const DLTensor* beta, void* stream);
NETRA_API netra_status netra_gdn_verify(netra_gdn_handle* handle, const DLTensor* q, const DLTensor* k, const DLTensor* v, const DLTensor* decay,
                                        const DLTensor* beta, const DLTensor* state, const DLTensor* slots, const DLTensor* out, void* stream);
NETRA_API netra_status netra_gdn_m16(netra_gdn_handle* handle, const DLTensor* q, const DLTensor* k, const DLTensor* v, const DLTensor* decay,
                                     const DLTensor* beta, const DLTensor* state, const DLTensor* slots, const DLTensor* out, void* stream);
NETRA_API netra_status netra_gdn_replay(netra_gdn_handle* handle, const DLTensor* q, const DLTensor* k, const DLTensor* v, const DLTensor* decay,
                                        const DLTensor* beta, const DLTensor* state, const DLTensor* slots, const DLTensor* accepted,
                                        const DLTensor* conv_windows, const DLTensor* conv_state, void* stream);
/* The replay's explanation: each tactic's decision for these tensors and the outcome, written as
 * netra_argmax_explain writes its text. */
NETRA_API netra_status netra_gdn_replay_explain(netra_gdn_handle* handle, const DLTensor* q, const DLTensor* k, const DLTensor* v,
                                                const DLTensor* decay, const DLTensor* beta, const DLTensor* state, const DLTensor* slots,
                                                const DLTensor* accepted, const DLTensor* conv_windows, const DLTensor* conv_state, char* text,
                                                size_t capacity, size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* NETRA_C_GDN_H */
