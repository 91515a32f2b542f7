/* netra/c/moe_experts.h — the decode MoE expert projections of Qwen3.6-35B-A3B (hidden 2048,
 * intermediate 512, 257 experts = 256 routed + the shared expert 256, FP8 E4M3 weights with
 * float32 128 x 128 block scales; contracts/moe/expert_{gate_up,down}.hpp), through their tactic
 * lists, and the whole decode block. Conventions (DLTensors, statuses): netra/c/netra.h. Every
 * tensor is compact (row-major, no padding) and checked by its contract (element type, shape,
 * alignment, device); E4M3 tensors are float8_e4m3fn or uint8 holding E4M3 bytes:
 *   hidden  bfloat16 [tokens, 2048]   ids  int32 [tokens, 9]   route_weights  float32 [tokens, 9]
 *   w13     E4M3 [257, 1024, 2048]    s13  float32 [257, 8, 16]
 *   w2      E4M3 [257, 2048, 512]     s2   float32 [257, 16, 4]
 * (257: the shared expert's slice included; a smaller tensor is refused). Route r = t * 9 + s is
 * row r of the gate_up output and of act_quant's outputs. NETRA_STATUS_NOT_SUPPORTED: no tactic
 * admits the call (nothing launched); INVALID_ARGUMENT: a tactic refuses a call inside its
 * promoted domain (nothing launched; the message names the tensor and its value). */
#ifndef NETRA_C_MOE_EXPERTS_H
#define NETRA_C_MOE_EXPERTS_H

#include "netra/c/netra.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netra_moe_experts_handle netra_moe_experts_handle;

/* Loads the gate_up and down tactics for the calling thread's current device. */
NETRA_API netra_status netra_moe_experts_create(netra_moe_experts_handle** handle);

/* Releases the handle. NULL is ignored. */
NETRA_API void netra_moe_experts_destroy(netra_moe_experts_handle* handle);

/* out bfloat16 [9 tokens, 1024]: row r = W13[ids[r]] x per-128-quantized hidden[r / 9], block
 * scaled (1 <= tokens <= 16). */
NETRA_API netra_status netra_moe_expert_gate_up(netra_moe_experts_handle* handle, const DLTensor* hidden, const DLTensor* ids,
                                                const DLTensor* w13, const DLTensor* s13, const DLTensor* out, void* stream);

/* out bfloat16 [tokens, 2048]: sum over the 9 routes of token t, in slot order, of
 * route_weights[t, s] * (W2[ids[t, s]] x act[t * 9 + s]), block scaled. act is act_quant's E4M3
 * [9 tokens, 512] with act_scales float32 [9 tokens, 4] (1..16 tokens), or gate_up's bfloat16
 * [9 tokens, 1024] with act_quant fused and act_scales not read (may be NULL; 1..4 tokens): the
 * element type of act picks which. */
NETRA_API netra_status netra_moe_expert_down(netra_moe_experts_handle* handle, const DLTensor* act, const DLTensor* act_scales,
                                             const DLTensor* ids, const DLTensor* route_weights, const DLTensor* w2, const DLTensor* s2,
                                             const DLTensor* out, void* stream);

/* One line per tactic with its decision for the call, then the outcome; NUL-terminated and
 * truncated to `capacity` bytes; *length (if not NULL) receives the full length. */
NETRA_API netra_status netra_moe_expert_gate_up_explain(netra_moe_experts_handle* handle, const DLTensor* hidden, const DLTensor* ids,
                                                        const DLTensor* w13, const DLTensor* s13, const DLTensor* out, char* text,
                                                        size_t capacity, size_t* length);
NETRA_API netra_status netra_moe_expert_down_explain(netra_moe_experts_handle* handle, const DLTensor* act, const DLTensor* act_scales,
                                                     const DLTensor* ids, const DLTensor* route_weights, const DLTensor* w2,
                                                     const DLTensor* s2, const DLTensor* out, char* text, size_t capacity, size_t* length);

/* ---- the whole block (1..768 tokens) ----------------------------------------------------------
 * router -> shared-expert gate (route append) -> gate_up -> [act_quant] -> down with the weighted
 * route sum, recorded on `stream` (capturable into one CUDA graph), each stage through its tactic
 * list; 17..768 tokens: the router, then the grouped experts (plan, gate_up with act_quant fused,
 * down, route sum). Every stage is decided before any is launched: a refused or unsupported stage
 * launches nothing. The caller owns every tensor:
 *   hidden bfloat16 [tokens, 2048], router_weight bfloat16 [256, 2048], shared_gate_weight
 *   bfloat16 [2048], w13 / s13 / w2 / s2 as above;
 *   written: ids int32 [tokens, 9], route_weights float32 [tokens, 9], gate_up bfloat16
 *   [9 tokens, 1024] (17..768 tokens: may be NULL; written when given), act E4M3 [9 tokens, 512]
 *   and act_scales float32 [9 tokens, 4] (unfused variant only; may be NULL for the fused one),
 *   out bfloat16 [tokens, 2048]. */
typedef struct netra_moe_block_handle netra_moe_block_handle;
typedef enum netra_moe_block_variant {
  NETRA_MOE_BLOCK_UNFUSED = 0, /* ... gate_up, act_quant, down (1..16 tokens; 17..768 the grouped experts) */
  NETRA_MOE_BLOCK_FUSED = 1    /* ... gate_up, down with act_quant fused (1..4 tokens) */
} netra_moe_block_variant;

/* Loads every stage's tactics for the calling thread's current device (embedded code objects, or
 * the JIT and its cache) and allocates their workspaces. */
NETRA_API netra_status netra_moe_block_create(netra_moe_block_handle** handle);
NETRA_API void netra_moe_block_destroy(netra_moe_block_handle* handle);
NETRA_API netra_status netra_moe_block(netra_moe_block_handle* handle, const DLTensor* hidden, const DLTensor* router_weight,
                                       const DLTensor* shared_gate_weight, const DLTensor* w13, const DLTensor* s13, const DLTensor* w2,
                                       const DLTensor* s2, const DLTensor* ids, const DLTensor* route_weights, const DLTensor* gate_up,
                                       const DLTensor* act, const DLTensor* act_scales, const DLTensor* out, netra_moe_block_variant variant,
                                       void* stream);
/* Each stage's tactics with their decisions for the call, in launch order. */
NETRA_API netra_status netra_moe_block_explain(netra_moe_block_handle* handle, const DLTensor* hidden, const DLTensor* router_weight,
                                               const DLTensor* shared_gate_weight, const DLTensor* w13, const DLTensor* s13,
                                               const DLTensor* w2, const DLTensor* s2, const DLTensor* ids, const DLTensor* route_weights,
                                               const DLTensor* gate_up, const DLTensor* act, const DLTensor* act_scales, const DLTensor* out,
                                               netra_moe_block_variant variant, char* text, size_t capacity, size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* NETRA_C_MOE_EXPERTS_H */
