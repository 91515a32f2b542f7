/* netra/c/moe_routing.h — the routing stage of the decode MoE block of Qwen3.6-35B-A3B through
 * its tactic lists (runtime/tactics/moe_routing.hpp): act_quant, the router and the shared-expert
 * gate with route append. Conventions (DLTensors, statuses): netra/c/netra.h. Each tensor is
 * checked by its contract (element type, shape, strides, alignment, device); "compact" is
 * row-major without padding, "rows" is each row contiguous with a row stride of a multiple of 8
 * elements. Route layout (contracts/moe/route_layout.hpp): ids int32 [tokens, 9] and weights
 * float32 [tokens, 9], compact, slot s of token t at [t, s]; slots 0..7 the router's top-8 in
 * descending weight (equal weights: lower id first), slot 8 the shared expert (id 256).
 * NETRA_STATUS_NOT_SUPPORTED: no tactic admits the call (nothing launched); INVALID_ARGUMENT: a
 * tactic refuses a call inside its promoted domain (nothing launched; the message names the
 * tensor and its value). */
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

/* act_quant: in bfloat16 [rows, 1024] = [gate (512) | up (512)] (rows) ->
 * out E4M3 [rows, 512] (float8_e4m3fn or uint8; compact) = e4m3(bf16(silu(gate) * up) / scale)
 * per 128 values and scales float32 [rows, 4] (compact) = amax / 448
 * (contracts/moe/act_quant.hpp; bitwise). rows <= 4608. */
NETRA_API netra_status netra_moe_act_quant(netra_moe_routing_handle* handle, const DLTensor* in, const DLTensor* out, const DLTensor* scales,
                                           void* stream);

/* router: hidden bfloat16 [tokens, 2048] (rows) x gate_weight bfloat16 [256, 2048] (compact) ->
 * slots 0..7 of ids / weights (softmax, top-8, renormalised; contracts/moe/router.hpp). 1..32
 * tokens: exact FP32 order (bitwise); 33..128: BF16 matrix units (bounded). Slot 8 is not
 * written. */
NETRA_API netra_status netra_moe_router(netra_moe_routing_handle* handle, const DLTensor* hidden, const DLTensor* gate_weight, const DLTensor* ids,
                                        const DLTensor* weights, void* stream);

/* shared-expert gate: slot 8 of ids / weights = (256, sigmoid(hidden[t] . gate_weight)),
 * hidden bfloat16 [tokens, 2048] (rows), gate_weight bfloat16 [2048] (contracts/moe/shared_gate.hpp;
 * bitwise). 1..512 tokens. Slots 0..7 are not written. */
NETRA_API netra_status netra_moe_shared_gate(netra_moe_routing_handle* handle, const DLTensor* hidden, const DLTensor* gate_weight,
                                             const DLTensor* ids, const DLTensor* weights, void* stream);

/* One line per tactic with its decision for the call, then the outcome; NUL-terminated and
 * truncated to `capacity` bytes; *length (if not NULL) receives the full length. */
NETRA_API netra_status netra_moe_act_quant_explain(netra_moe_routing_handle* handle, const DLTensor* in, const DLTensor* out,
                                                   const DLTensor* scales, char* text, size_t capacity, size_t* length);
NETRA_API netra_status netra_moe_router_explain(netra_moe_routing_handle* handle, const DLTensor* hidden, const DLTensor* gate_weight,
                                                const DLTensor* ids, const DLTensor* weights, char* text, size_t capacity, size_t* length);
NETRA_API netra_status netra_moe_shared_gate_explain(netra_moe_routing_handle* handle, const DLTensor* hidden, const DLTensor* gate_weight,
                                                     const DLTensor* ids, const DLTensor* weights, char* text, size_t capacity, size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* NETRA_C_MOE_ROUTING_H */
