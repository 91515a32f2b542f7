/* netra/c/moe_routing.h — the routing stage of the decode MoE block of Qwen3.6-35B-A3B through
 * its tactic lists (runtime/tactics/moe_routing.hpp): act_quant, the router and the shared-expert
 * gate with route append. Conventions: netra/c/netra.h. Device pointers; sizes and strides in
 * elements. Route layout (contracts/moe/route_layout.hpp): ids int32 [tokens, 9] and weights FP32
 * [tokens, 9], slot s of token t at t * 9 + s; slots 0..7 the router's top-8 in descending weight
 * (equal weights: lower id first), slot 8 the shared expert (id 256). */
#ifndef NETRA_C_MOE_ROUTING_H
#define NETRA_C_MOE_ROUTING_H

#include "netra/c/netra.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netra_moe_routing_handle netra_moe_routing_handle;

/* Loads the act_quant, router and shared-gate tactics for the calling thread's current device and
 * allocates the router's workspace (zero-filled). */
NETRA_API netra_status netra_moe_routing_create(netra_moe_routing_handle** handle);
/* Releases the handle. NULL is ignored. */
NETRA_API void netra_moe_routing_destroy(netra_moe_routing_handle* handle);

/* act_quant: in BF16 [rows, row_stride] = [gate (512) | up (512)] (cols = 1024) ->
 * out E4M3 [rows, 512] = e4m3(bf16(silu(gate) * up) / scale) per 128 values and
 * scales FP32 [rows, 4] = amax / 448 (contracts/moe/act_quant.hpp; bitwise). rows <= 4608.
 * NETRA_STATUS_NOT_SUPPORTED: no tactic admits the call (nothing launched). */
NETRA_API netra_status netra_moe_act_quant(netra_moe_routing_handle* handle, const void* in, int64_t rows, int64_t cols, int64_t row_stride,
                                           void* out, float* scales, void* stream);

/* router: hidden BF16 [tokens, hidden_stride] (hidden_size 2048) x gate_weight BF16 [256, 2048]
 * (experts 256) -> slots 0..7 of ids / weights (softmax, top-8, renormalised;
 * contracts/moe/router.hpp). 1..32 tokens: exact FP32 order (bitwise); 33..128: BF16 matrix
 * units (bounded). Slot 8 is not written. */
NETRA_API netra_status netra_moe_router(netra_moe_routing_handle* handle, const void* hidden, int64_t tokens, int64_t hidden_size,
                                        int64_t hidden_stride, const void* gate_weight, int64_t experts, int32_t* ids, float* weights,
                                        void* stream);

/* shared-expert gate: slot 8 of ids / weights = (256, sigmoid(hidden[t] . gate_weight)),
 * gate_weight BF16 [2048] (contracts/moe/shared_gate.hpp; bitwise). 1..512 tokens. Slots 0..7 are
 * not written. */
NETRA_API netra_status netra_moe_shared_gate(netra_moe_routing_handle* handle, const void* hidden, int64_t tokens, int64_t hidden_size,
                                             int64_t hidden_stride, const void* gate_weight, int32_t* ids, float* weights, void* stream);

/* One line per tactic with its decision for the call, then the outcome; NUL-terminated and
 * truncated to `capacity` bytes; *length (if not NULL) receives the full length. */
NETRA_API netra_status netra_moe_act_quant_explain(netra_moe_routing_handle* handle, const void* in, int64_t rows, int64_t cols,
                                                   int64_t row_stride, const void* out, const float* scales, char* text, size_t capacity,
                                                   size_t* length);
NETRA_API netra_status netra_moe_router_explain(netra_moe_routing_handle* handle, const void* hidden, int64_t tokens, int64_t hidden_size,
                                                int64_t hidden_stride, const void* gate_weight, int64_t experts, const int32_t* ids,
                                                const float* weights, char* text, size_t capacity, size_t* length);
NETRA_API netra_status netra_moe_shared_gate_explain(netra_moe_routing_handle* handle, const void* hidden, int64_t tokens, int64_t hidden_size,
                                                     int64_t hidden_stride, const void* gate_weight, const int32_t* ids, const float* weights,
                                                     char* text, size_t capacity, size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* NETRA_C_MOE_ROUTING_H */
